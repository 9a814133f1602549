// Reading back a report that kvbench wrote (CSV, JSON or JSON Lines), so a sweep can resume where it stopped.
#pragma once

#include "kvbench/report/report.hpp"

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

// RFC 4180 records, as write_csv produces them: quoted fields, doubled quotes, LF or CRLF.
// Throws std::runtime_error on an unterminated quote.
std::vector<std::vector<std::string>> parse_csv_records(const std::string& text);

// The rows of a report in `format` (csv, json or jsonl; schema 1 or 2), every column parsed back; samples_ns
// only from JSON (the CSV does not hold them). Throws std::runtime_error naming the
// row and column when the text is not a report kvbench wrote.
std::vector<SavedRow> read_csv_report(std::istream& in);
std::vector<SavedRow> read_json_report(std::istream& in);
std::vector<SavedRow> read_jsonl_report(std::istream& in);
std::vector<SavedRow> read_report_file(const std::filesystem::path& path, OutputFormat format);

}  // namespace kvbench
