// Writers of a Comparison: an aligned table for the terminal, Markdown for a pull request, JSON for tools.
#pragma once

#include "kvbench/compare/comparison.hpp"

#include <ostream>

namespace kvbench {

enum class CompareFormat { table, md, json };

// Every format starts with the provenance note and ends with the geometric mean; writers
// only read the comparison.
void write_comparison(std::ostream& out, const Comparison& comparison, CompareFormat format);

}  // namespace kvbench
