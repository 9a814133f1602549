// The drift check at the end of a run: is the memory bandwidth still the roofline's? (docs/measuring.md#bandwidth-drift)
#pragma once

#include "kvbench/measure/environment.hpp"
#include "kvbench/measure/run_context.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace kvbench {

// How far the bandwidth read now may stray from the roofline's before roofline % are called approximate.
inline constexpr double tolerated_bandwidth_drift = 0.15;

// Reads the memory bandwidth again on each roofline's thread count (skipped when the probe
// would take more than half the available memory) and returns one warning per thread count
// whose bandwidth strayed by more than tolerated_bandwidth_drift. Leaves the compute threads
// at the last thread count probed.
std::vector<std::string> bandwidth_drift_warnings(const Rooflines& rooflines, const Environment& env);

// The warning for one thread count whose bandwidth reads now_gbps against its roofline's peak,
// or nothing within tolerated_bandwidth_drift of it either way.
std::optional<std::string> bandwidth_drift_warning(std::size_t n_threads, const Roofline& roofline, double now_gbps);

}  // namespace kvbench
