// A result file read for comparison: kvbench's CSV, JSON or JSON Lines (sweep, generate), or Google Benchmark's JSON.
#pragma once

#include "kvbench/report/schema.hpp"

#include <cstdint>
#include <filesystem>
#include <istream>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kvbench {

// One measured row: its configuration, every other cell as text, and its samples when the file keeps them.
struct ResultEntry {
    std::vector<std::string> key;           // one value per ResultFile::key_columns
    std::map<std::string, std::string> cells;  // by current column name (report/schema.hpp); absent or empty cells are missing
    std::vector<double> samples_ns;         // every repetition's time; empty in a CSV

    std::optional<std::string> cell(const std::string& column) const;
};

struct ResultFile {
    std::string kind;                      // "kvbench CSV", "kvbench JSON", "kvbench JSON Lines" or "Google Benchmark JSON"
    std::vector<std::string> key_columns;  // the columns that identify a row (configuration and path)
    std::vector<ResultEntry> rows;
    std::map<std::string, std::string> provenance;  // machine, BLAS and build, by column name (the first row's)
    std::vector<std::int64_t> run_ids;     // the database runs the rows come from, ascending; empty for a file
};

// The provenance columns compare looks at, grouped as docs/compare.md#provenance explains.
const std::vector<std::string>& machine_columns();
const std::vector<std::string>& blas_columns();
const std::vector<std::string>& build_columns();

// Reads `text` as the format it is written in: CSV unless it starts with '{'; then JSON when it is
// one JSON value, else JSON Lines when its first line is an object. Throws
// ConfigError naming `name` and the rule broken: not a result file kvbench can compare
// (docs/csv.md#contract-columns missing), a malformed cell, or two rows with one configuration.
ResultFile parse_result_file(const std::string& text, const std::string& name);
// Requires: nothing; throws ConfigError when the file cannot be read.
ResultFile read_result_file(const std::filesystem::path& path);

// A kvbench report already read into cells (schema.hpp: a file, or a run of the results
// database), keyed for comparison; `kind` and `name` name it in messages. Throws ConfigError as
// parse_result_file does.
ResultFile result_file_of_cells(const ReportCells& report, const std::string& kind, const std::string& name);

}  // namespace kvbench
