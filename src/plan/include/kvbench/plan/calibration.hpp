// This machine's efficiencies, from measured points: the median fraction of the roofline each
// path achieved (docs/planning.md, "Efficiency").
#pragma once

#include "kvbench/engine/cost_model.hpp"
#include "kvbench/plan/latency_model.hpp"

#include <cstddef>
#include <vector>

namespace kvbench {

// One measured row: its path and roofline_pct / 100.
struct CalibrationPoint {
    DecodePath path = DecodePath::cached;
    double roofline_fraction = 0;
};

struct Calibration {
    Efficiency efficiency;
    std::size_t n_cached = 0;    // points behind efficiency.bandwidth
    std::size_t n_uncached = 0;  // points behind efficiency.compute
};

// The cached path streams its weights and cache, so its median fraction is the bandwidth
// efficiency; the uncached path is compute-bound, so its median is the compute efficiency. A
// path without points takes the other's median. Requires: points not empty, every fraction > 0.
Calibration calibrate(const std::vector<CalibrationPoint>& points);

}  // namespace kvbench
