// The KV formats of a point side by side (issue 39's Pareto table): bytes per token, step time
// and the error against an f32 cache, with the formats another beats on all three marked.
#pragma once

#include "kvbench/report/report.hpp"
#include "kvbench/report/summary_tables.hpp"

#include <optional>
#include <vector>

namespace kvbench {

// One cached row of a point measured in several KV formats.
struct KvFormatEntry {
    const ResultRow* row = nullptr;
    double bytes_per_token = 0;  // one token's K and V over all layers, scales included
    double median_ns = 0;        // the step's median time
    double rel_error = 0;        // kv_rel_error: the step's (and each layer's attention output's) against f32; 0 for f32
    // Another format of the point is no worse on all three and better on one; the first such.
    const ResultRow* dominated_by = nullptr;
};

// The cached rows of `rows` grouped by point (the same configuration but for the cache's types,
// threads and cache state), each group of two formats or more in the order of `rows`. A row
// of a reduced type without kv_rel_error has no error to compare and is left out.
std::vector<std::vector<KvFormatEntry>> kv_format_groups(const std::vector<ResultRow>& rows);

// The groups as one table ("KV formats"), or none when no point was measured in two formats.
std::optional<SummaryTable> kv_format_table(const std::vector<ResultRow>& rows, const TableOptions& options);

}  // namespace kvbench
