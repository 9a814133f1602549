// Writers of a Comparison: an aligned table for the terminal, Markdown for a pull request, JSON for tools.
#pragma once

#include "kvbench/compare/comparison.hpp"

#include "kvbench/report/summary_tables.hpp"

#include <cstddef>
#include <ostream>

namespace kvbench {

enum class CompareFormat { table, md, json };

// Every format starts with the provenance note and ends with the geometric mean; writers
// only read the comparison. The table and its notes keep within `width` columns (a table too
// wide is split into parts that repeat the row column); Markdown and JSON are not wrapped.
void write_comparison(std::ostream& out, const Comparison& comparison, CompareFormat format,
                      std::size_t width = terminal_columns);

}  // namespace kvbench
