// This machine's efficiencies, from measured points: the fraction of the roofline each path
// achieved, and per batch size the bandwidth fractions of the weight and cache streams
// (docs/planning.md, "Efficiency").
#pragma once

#include "kvbench/engine/cost_model.hpp"
#include "kvbench/plan/latency_model.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kvbench {

// One measured row: its path and roofline_pct / 100, and for a cached row the times its two
// streams would take at the peak bandwidth of its roofline, beside its measured median.
struct CalibrationPoint {
    DecodePath path = DecodePath::cached;
    double roofline_fraction = 0;
    std::uint64_t batch = 1;
    double weights_at_peak_s = 0;  // (bytes - kv_bytes) / peak bandwidth; 0: unknown
    double kv_at_peak_s = 0;       // kv_bytes / peak bandwidth
    double measured_s = 0;         // the row's median; 0: unknown
};

// An efficiency the rows put above 1, faster than the peak, and billed at 1 instead.
struct CappedEfficiency {
    std::string efficiency;  // which: "the KV stream's fit at B=1", "compute, the uncached rows' median,"
    double fitted = 0;       // what the rows gave, > 1
};

struct Calibration {
    Efficiency efficiency;
    std::size_t n_cached = 0;    // points behind efficiency.bandwidth
    // The cached rows' median fraction, which efficiency.bandwidth caps at 1 (it is reported,
    // and the steps are billed per batch).
    double bandwidth_median = 0;
    std::size_t n_uncached = 0;  // points behind efficiency.compute
    std::vector<CappedEfficiency> capped;  // compute first, then by batch
};

// The cached path streams its weights and cache, so its median fraction is the bandwidth
// efficiency; the uncached path is compute-bound, so its median is the compute efficiency. A
// path without points takes the other's median.
//
// Per batch size with cached points at two or more contexts, the step time is fitted as
// weights_at_peak / e_w + kv_at_peak / e_kv (least squares on the relative error, so that each
// point weighs the same); a batch with one context, or whose fit gives a stream no positive
// time, has e_w = e_kv = the median fraction of its rows.
//
// No efficiency a step is billed with exceeds 1, as --efficiency's may not: a stream cannot run
// faster than the device's peak, so a fit or median above 1 (rows that beat their roofline) is
// billed at 1 and listed in `capped`. The cached rows' median, reported beside the per-batch
// fits that bill the streams, stays as measured. Requires: points not empty, every fraction > 0.
Calibration calibrate(const std::vector<CalibrationPoint>& points);

}  // namespace kvbench
