// Warnings about a run's results, each said once at the end with its likely cause and a fix that applies.
#pragma once

#include "kvbench/measure/roofline.hpp"
#include "kvbench/report/report.hpp"

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kvbench {

// What the noise advice depends on besides the rows.
struct NoiseContext {
    std::size_t n_reps = 0;    // --reps; 0 when the count adapts to --min-time
    double min_time_s = 0;     // --min-time; 0 with a fixed --reps
    bool interleave = false;   // --interleave already on
    std::size_t n_cores = 1;   // cores this process may use
};

// "4 of 8 rows noisy, marked ! (worst: ...): try -r 50 -w 10, or --interleave, or -t 1", or
// nothing when no row is noisy. Thread advice only when a noisy row ran on every core.
std::optional<std::string> noise_warning(const std::vector<ResultRow>& rows, const NoiseContext& context);

// Rows whose median is slow_factor or more times the time estimate a dry run gives
// (times_the_estimate, with the roofline of the row's thread count, else the assumed one), in one
// line with the likely causes, or nothing. make_result_row marks the same rows slow.
std::optional<std::string> slow_rows_warning(const std::vector<ResultRow>& rows,
                                             const std::map<std::size_t, Roofline>& rooflines);

// The thread counts of the rows above 100 % of their roofline (above_roofline).
std::vector<std::size_t> threads_above_roofline(const std::vector<ResultRow>& rows);

// Rows above 100 % of their roofline where nothing explains it (above_roofline), in one line:
// the count, the worst, and the fix; for a thread count whose quick roofline the run measured
// again (`replaced`), what it found and that later runs use it. Nothing when no row is above.
std::optional<std::string> above_roofline_warning(const std::vector<ResultRow>& rows,
                                                  const std::map<std::size_t, Roofline>& replaced);

}  // namespace kvbench
