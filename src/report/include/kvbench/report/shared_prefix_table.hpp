// What a shared prefix saves (issue 39): each cached row of a prefix P > 0 beside the row of
// the same point with nothing shared, their KV bytes read and step times.
#pragma once

#include "kvbench/report/report.hpp"
#include "kvbench/report/summary_tables.hpp"

#include <optional>
#include <vector>

namespace kvbench {

// A cached row with a shared prefix and the row of its point without one.
struct SharedPrefixPair {
    const ResultRow* shared = nullptr;
    const ResultRow* unshared = nullptr;  // the same configuration, threads and cache state, P = 0
};

// The pairs of `rows`, in the order of their shared rows; a shared row whose point was not
// measured without a prefix is left out.
std::vector<SharedPrefixPair> shared_prefix_pairs(const std::vector<ResultRow>& rows);

// The pairs as one table ("Shared prefix"), or none without a pair: the KV bytes each step
// reads and its median, shared and not, and the speedup of sharing.
std::optional<SummaryTable> shared_prefix_table(const std::vector<ResultRow>& rows, const TableOptions& options);

}  // namespace kvbench
