// Samples -> Stats: the summary of one point's timed repetitions. No I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace kvbench {

struct Stats {
    std::size_t n_samples = 0;
    double median_ns = 0;
    double min_ns = 0;
    double max_ns = 0;
    double mean_ns = 0;
    double p90_ns = 0;     // 90th percentile, linear interpolation between order statistics
    double stddev_ns = 0;  // sample standard deviation (n - 1)
    double cv = 0;         // stddev / mean, a fraction (0.05 = 5 %)
    double mdape = 0;      // median absolute percentage deviation from the median, a fraction
};

// Requires: samples_ns not empty.
Stats summarize(std::span<const std::int64_t> samples_ns);

// Whether a point's timings are too spread to trust: CV above 5 % and MdAPE above 2 %,
// with at least 3 samples. Both, because one outlier inflates the CV but leaves the
// median, the figure reported, alone; a broad spread moves both.
bool is_noisy(const Stats& stats);

}  // namespace kvbench
