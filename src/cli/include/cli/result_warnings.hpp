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

// Below this roofline time per step, fixed costs (waking threads, calls) dominate and a
// median far above the bound says nothing about the machine.
inline constexpr double slow_check_min_bound_s = 100e-6;
// How far above the estimate a median must be to be called slow (docs/measuring.md#far-from-the-machines-bound).
inline constexpr double slow_factor = 10;

// Rows whose median is slow_factor or more above the time estimate a dry run gives (the roofline
// time over estimate_achieved_fraction; the roofline of the row's thread count, else the assumed
// one), in one line with the likely causes, or nothing. Seen on a 2-core guest: T=2 gave MHA,
// GQA and MQA the same 24 ms with a small CV, and -t 1 right after 0.86 to 3.4 ms.
std::optional<std::string> slow_rows_warning(const std::vector<ResultRow>& rows,
                                             const std::map<std::size_t, Roofline>& rooflines);

}  // namespace kvbench
