// One table of planner figures (`kvbench memory`, `kvbench models`) written as table, csv, json or md.
#pragma once

#include "cli/output_options.hpp"
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

// Every file of the plan (-o, --export) whole or not at all (files/atomic_file.hpp), then the
// sheet on stdout when stdout is the report, then the table on the terminal (cli/output_streams.hpp).
void emit_sheet(const Sheet& sheet, const OutputPlan& plan);

// What `memory` and `models` write: table, csv, json, jsonl and md.
const OutputFormats& sheet_formats();

}  // namespace kvbench
