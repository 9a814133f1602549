// One table of planner figures (`kvbench memory`, `kvbench models`) written as table, csv, json or md.
#pragma once

#include "cli/output_options.hpp"
#include "kvbench/report/report.hpp"
#include "kvbench/report/summary_tables.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace kvbench {

// A figure twice: exact for csv and json (bytes as whole numbers), readable for table and md.
struct SheetCell {
    nlohmann::ordered_json value;  // null: not applicable
    std::string shown;
};

// The cells every planner sheet writes: text as is, a count, bytes (exact in csv and json,
// "1.5 GiB" in the table), a time in ms from seconds, and "not applicable".
SheetCell text_cell(const std::string& text);
SheetCell count_cell(std::uint64_t n);
SheetCell bytes_cell(std::uint64_t n_bytes);
SheetCell ms_cell(double seconds);
SheetCell null_cell();

// What a column is to the table: a figure; a key, which names a line (and is repeated in every
// part of a table split to fit the terminal); or an axis, a key that the caption states once
// when every line has the same value ("every line: KV dtype f16, N=32768, B=1").
enum class SheetRole { figure, key, axis };

struct SheetColumn {
    std::string key;     // csv header and json key: snake_case, with its unit
    std::string header;  // table and md header
    Align align = Align::right;
    bool in_table = true;  // false: csv and json only (the table and md stay readable)
    SheetRole role = SheetRole::figure;
};

struct Sheet {
    std::string title;                         // first line of table and md
    std::vector<SheetColumn> columns;
    std::vector<std::vector<SheetCell>> rows;  // each exactly columns.size() cells
    std::vector<std::string> notes;            // lines under the table and md; not in csv or json
    // The table shows at most this many rows (0: all) and says how many more the files hold.
    std::size_t table_rows = 0;
    // The script of plots/ that draws this sheet's csv, for the "plot it" hint; empty: none does.
    std::string plot_script;
};

// table: the key and varying axis columns, then the figures, split into parts that fit `width`,
// then the notes; md: a pipe table then the notes; csv: a header then one RFC 4180 record per
// row; json: an array of objects; jsonl: one object per line.
void write_sheet(std::ostream& out, OutputFormat format, const Sheet& sheet, std::size_t width = terminal_columns);

// Every file of the plan (-o, --export) whole or not at all (files/atomic_file.hpp), then the
// sheet on stdout when stdout is the report, then the table on the terminal, within its width
// (cli/output_streams.hpp).
void emit_sheet(const Sheet& sheet, const OutputPlan& plan);

// The first line `sheet` would write in `format`: what a file it wrote before starts with.
std::string first_line_of(const Sheet& sheet, OutputFormat format);

// What `memory` and `models` write: table, csv, json, jsonl and md.
const OutputFormats& sheet_formats();

}  // namespace kvbench
