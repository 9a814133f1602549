// The human summary of a run as text cells: a one-line description and three tables, for the table and Markdown writers.
#pragma once

#include "kvbench/measure/environment.hpp"
#include "kvbench/report/report.hpp"

#include <ostream>
#include <string>
#include <vector>

namespace kvbench {

enum class Align { left, right };

struct TextTable {
    std::string title;                             // "FLOPs per step", "Latency", "KV memory"
    std::vector<std::string> header;               // one name per column
    std::vector<Align> align;                      // one per column: labels left, numbers right
    std::vector<std::vector<std::string>> lines;   // each exactly header.size() cells
    std::string footnote;                          // printed under the table when not empty
};

// Space-aligned columns under the title, for terminals (UTF-8 aware widths).
void write_text_table(std::ostream& out, const TextTable& table);

// "machine: <cpu> (2 cores); BLAS: ... (openmp); threads: 2; cache: cold; build: Release abc1234 (GNU 12.2.0); kvbench 0.1.0".
std::string describe_run(const std::vector<ResultRow>& rows, const Environment& env);

// In order: "FLOPs per step" and "KV memory" have one line per ModelConfig (neither
// depends on threads or cache state); "Latency" has one line per ResultRow. Lines follow the
// order in which configurations first appear in `rows`. Missing figures read "-".
std::vector<TextTable> summary_tables(const std::vector<ResultRow>& rows);

}  // namespace kvbench
