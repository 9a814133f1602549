// What a paged cache costs (issue 39): each cached row of a paged cache beside the row of the
// same point over the contiguous cache, their step times and the block tables' bytes.
#pragma once

#include "kvbench/report/report.hpp"
#include "kvbench/report/summary_tables.hpp"

#include <optional>
#include <vector>

namespace kvbench {

// A cached row of a paged cache and the row of its point over the contiguous one.
struct PagedPair {
    const ResultRow* paged = nullptr;
    const ResultRow* contiguous = nullptr;  // the same configuration, threads and cache state, kv_block 0
};

// The pairs of `rows`, in the order of their paged rows; a paged row whose point was not
// measured over the contiguous cache is left out.
std::vector<PagedPair> paged_pairs(const std::vector<ResultRow>& rows);

// The pairs as one table ("Paged cache"), or none without a pair: the bytes the block tables
// add to a step, the two medians and the paged one over the contiguous one.
std::optional<SummaryTable> paged_table(const std::vector<ResultRow>& rows, const TableOptions& options);

}  // namespace kvbench
