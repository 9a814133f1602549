// Reading back a report that kvbench wrote (CSV, JSON or JSON Lines) as ResultRows, so a sweep can resume where it stopped.
#pragma once

#include "kvbench/report/report.hpp"
#include "kvbench/report/schema.hpp"

#include <filesystem>
#include <istream>
#include <string>
#include <vector>

namespace kvbench {

// A row read back, with the build that measured it (every CSV row carries its own; a JSON
// report names it once, in its environment).
struct SavedRow {
    ResultRow row;
    std::string tool_version;
    std::string git_commit;
};

// The rows of a report in `format` (csv, json or jsonl; any schema read_report_cells reads), every
// column parsed back; samples_ns only from JSON and JSON Lines (the CSV does not hold them).
// Throws std::runtime_error naming the row and column when the text is not a report kvbench wrote.
std::vector<SavedRow> read_csv_report(std::istream& in);
std::vector<SavedRow> read_json_report(std::istream& in);
std::vector<SavedRow> read_jsonl_report(std::istream& in);
std::vector<SavedRow> read_report_file(const std::filesystem::path& path, OutputFormat format);

}  // namespace kvbench
