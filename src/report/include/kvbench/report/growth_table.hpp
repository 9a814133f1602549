// The growth law over a sweep's N axis: one fit of latency = a·N^k per configuration and path (docs/generate.md#the-growth-law).
#pragma once

#include "kvbench/report/report.hpp"
#include "kvbench/report/summary_tables.hpp"

#include <optional>
#include <vector>

namespace kvbench {

// Groups rows that differ only in N (same path, B, D, H, G, L, kv_dtype, threads, cache state) and fits
// each group's median latency to a·N^k. Groups with fewer than 3 distinct N are left out;
// returns nothing when no group is left, so a sweep over one or two N prints no table. Axes
// with one value in every group go in the caption, as in the other tables.
std::optional<SummaryTable> growth_table(const std::vector<ResultRow>& rows);

}  // namespace kvbench
