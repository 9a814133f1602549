// The report schema in one place: its version, the contract columns, the columns older schemas named
// otherwise, and the reader of kvbench's csv, json and jsonl reports into cells of the current schema.
#pragma once

#include "kvbench/report/report.hpp"

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvbench {

// The layout of the CSV, JSON and JSON Lines reports (docs/csv.md#schema-version). 2: gbps became
// gb_per_s, latency_cv and latency_mdape became the percentages latency_cv_pct and
// latency_mdape_pct. Files of every version from 1 to this one are read back.
constexpr int report_schema_version = 2;

// The contract columns, in their order: every kvbench report's rows start with them
// (docs/csv.md#contract-columns). From data/report_schema.json, which the plots read too.
const std::vector<std::string>& contract_columns();

// A column an older schema wrote under another name: the current value is the old one times `scale`
// (schema 1's fractions became percentages).
struct RenamedColumn {
    std::string old_name;
    std::string name;
    double scale = 1;
    int until_schema_version = 1;  // the last schema that wrote old_name
};
// From data/report_schema.json; docs/csv.md#schema-version lists them.
const std::vector<RenamedColumn>& renamed_columns();

// The words of the flags column, in the order a row lists them (row_flags), each with its
// meaning: data/report_schema.json's "flags", which docs/csv.md#flags explains.
inline constexpr std::string_view flag_noisy = "noisy";
inline constexpr std::string_view flag_slow = "slow";
inline constexpr std::string_view flag_above_roofline = "above_roofline";
struct FlagWord {
    std::string word;
    std::string meaning;
};
const std::vector<FlagWord>& flag_words();

// The current name of a column: a renamed column's new name, any other name as it is.
std::string current_column_name(const std::string& name);
// The cell `text` of column `old_name` in the current column's unit: scaled when its rename
// scales it and it is a number, as it is otherwise.
std::string current_cell_text(const std::string& old_name, const std::string& text);

// The schema file as compiled in (src/report/CMakeLists.txt embeds data/report_schema.json).
const char* report_schema_json();

// One row of a report read back: its cells by current column name, as text (a JSON number as
// its shortest decimal), and its samples when the file keeps them.
struct ReportCellRow {
    std::size_t number = 0;                  // 1-based: the CSV record after the header, the JSON row, the JSONL line
    std::map<std::string, std::string> cells;  // absent, null and empty cells are left out
    bool has_samples = false;                // the row holds a samples_ns array (JSON and JSON Lines do)
    std::vector<double> samples_ns;

    std::optional<std::string> cell(const std::string& column) const;
};

// A report read back, in the current schema whatever schema wrote it.
struct ReportCells {
    OutputFormat format = OutputFormat::csv;
    std::vector<std::string> columns;  // every column of the rows, by current name, in the file's order
    std::vector<ReportCellRow> rows;
    // A JSON report's environment block, by current name; empty for CSV and JSON Lines, whose
    // rows carry their provenance as columns.
    std::map<std::string, std::string> environment;
    // A JSON Lines report's last line, cut short (no line break) and so dropped: its number, or 0.
    std::size_t cut_line = 0;

    // The row's `column`, else the environment's.
    std::optional<std::string> provenance(const ReportCellRow& row, const std::string& column) const;
};

// The columns that name a row's configuration (and a generation's step), in the order rows show
// them: a report holds one row of each, and compare matches rows on them. A column an older
// report lacks reads as report_key_default.
const std::vector<std::string>& report_key_columns();
// The value a report written before `column` existed holds on every row ("attn" for block), or
// std::nullopt for a column every report has.
std::optional<std::string> report_key_default(const std::string& column);

// Checks every row of `report` (a file read back, or a database run) as kvbench would have
// written it, so that compare, merge, --resume and --calibrate refuse the same rows in the same
// words: each known column's cell of its type (a whole number below 2^64, a finite number of at
// least 0, a positive time, true or false, a known path, cache state, KV or weight type, phase),
// counts that a measurement has (batch, seq, dims, threads at most 1,024, reps at least 1, bytes
// at least kv_bytes, a shared prefix shorter than seq), a median within its own min and max and
// equal to its samples' median, text that is UTF-8, and no configuration twice. Throws
// std::runtime_error "row 3: column seq: '0' is not a whole number of at least 1".
void check_report_rows(const ReportCells& report);

// `text` as an error message may quote it: a control character (a NUL, which would cut the
// line on a terminal) as \x00.
std::string printable(std::string_view text);

// RFC 4180 records, as write_csv produces them: quoted fields, doubled quotes, LF or CRLF.
// Throws std::runtime_error on an unterminated quote, naming its record (the header is record 0).
std::vector<std::vector<std::string>> parse_csv_records(const std::string& text);

// Reads `text` as a kvbench report in `format` (csv, json or jsonl): a JSON or JSON Lines row of a
// schema version this build does not know is refused, a blank CSV record or line is skipped, and
// a last JSON Lines line without its line break, cut short by a crash or a full disk, is dropped
// (docs/csv.md#jsonl); the rows are checked by check_report_rows. Throws std::runtime_error
// saying what is wrong ("row 3: ...").
ReportCells read_report_cells(const std::string& text, OutputFormat format);

// The format of a report's text, as its first characters and shape tell it: CSV unless it opens
// with '{'; JSON when it is one JSON value holding "rows" (on one line or many), or does not
// start as JSON Lines; else JSON Lines. Throws std::runtime_error as check_json_depth.
OutputFormat report_text_format(const std::string& text);

// A report nests three levels (the report, its rows, a row's samples); a value nested far deeper
// is no report, and writing it back as a cell's text would recurse once a level. Throws
// std::runtime_error where an array or object of `text` (JSON, or JSON Lines) opens deeper than
// max_report_json_depth, before any parser reads it.
inline constexpr std::size_t max_report_json_depth = 32;
void check_json_depth(const std::string& text);

// Whether `text` starts with a line that is a JSON object: a JSON Lines report rather than a
// pretty-printed JSON one, which opens with a lone '{'.
bool starts_as_json_lines(const std::string& text);

}  // namespace kvbench
