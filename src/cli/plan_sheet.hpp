// One table of planner figures (`kvbench memory`, `kvbench models`) written as table, csv, json or md.
#pragma once

#include "kvbench/report/report.hpp"
#include "kvbench/report/summary_tables.hpp"

#include <nlohmann/json.hpp>

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

struct SheetColumn {
    std::string key;     // csv header and json key: snake_case, with its unit
    std::string header;  // table and md header
    Align align = Align::right;
    bool in_table = true;  // false: csv and json only (the table and md stay readable)
};

struct Sheet {
    std::string title;                         // first line of table and md
    std::vector<SheetColumn> columns;
    std::vector<std::vector<SheetCell>> rows;  // each exactly columns.size() cells
    std::vector<std::string> notes;            // lines under the table and md; not in csv or json
};

// table: aligned columns then the notes; md: a pipe table then the notes; csv: a header then one
// RFC 4180 record per row; json: an array of objects.
void write_sheet(std::ostream& out, OutputFormat format, const Sheet& sheet);

// Refuses an -o target that cannot be written or must not be replaced: empty, a directory, a
// device or other non-regular file, or in a missing directory.
// Throws ConfigError naming -o.
void check_sheet_output(const std::string& path);

// Without `output`: the sheet in `format` on stdout. With it: the file, whole or not at all
// (report/atomic_file.hpp), and the table on stdout.
void emit_sheet(const Sheet& sheet, OutputFormat format, const std::optional<std::string>& output);

// "table", "csv", "json" or "md" (the CLI checks the name).
OutputFormat output_format_named(const std::string& name);

}  // namespace kvbench
