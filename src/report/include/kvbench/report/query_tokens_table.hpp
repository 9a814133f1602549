// What a draft of Q tokens costs per token (issue 39): each cached row of Q > 1 query tokens
// beside the row of the same point at Q = 1, its step and per-token times.
#pragma once

#include "kvbench/report/report.hpp"
#include "kvbench/report/summary_tables.hpp"

#include <optional>
#include <vector>

namespace kvbench {

// A cached row of Q > 1 query tokens and the row of its point with one.
struct QueryTokensPair {
    const ResultRow* tokens = nullptr;
    const ResultRow* single = nullptr;  // the same configuration, threads and cache state, Q = 1
};

// The pairs of `rows`, in the order of their Q > 1 rows; a row whose point was not measured at
// Q = 1 is left out.
std::vector<QueryTokensPair> query_tokens_pairs(const std::vector<ResultRow>& rows);

// The pairs as one table ("Query tokens"), or none without a pair: each step's median, its cost
// per token (the median over Q), the Q = 1 step, and how many times cheaper a token is than at Q = 1.
std::optional<SummaryTable> query_tokens_table(const std::vector<ResultRow>& rows, const TableOptions& options);

}  // namespace kvbench
