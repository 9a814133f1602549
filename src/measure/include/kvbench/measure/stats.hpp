// Samples -> Stats: the summary of one point's timed repetitions. No I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

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
    // Half the width of the median's 95 % confidence interval, over the median, a fraction
    // (docs/measuring.md#noise). 0 with fewer than 2 samples.
    double median_uncertainty = 0;
};

// Requires: samples_ns not empty.
Stats summarize(std::span<const std::int64_t> samples_ns);

// The median of values, as summarize() takes it: the middle one, or the mean of the middle two.
// Requires: values not empty.
double median(std::vector<double> values);

// The 95 % confidence half-width of a median, over the median, estimated from the samples'
// MdAPE and count: the median's standard error is about 1.2533 σ / √n, and σ about 1.4826 MAD
// for samples near a normal distribution; Student's t for few samples. Robust like the MdAPE:
// an outlier leaves it alone. summarize() also takes the distribution-free interval between
// two order statistics once there are median_rank_interval_min_samples, which a spread that
// splits in two widens. Requires: n_samples >= 2.
double estimated_median_uncertainty(double mdape, std::size_t n_samples);
inline constexpr std::size_t median_rank_interval_min_samples = 30;

// Above this median_uncertainty, a median may move on a re-run by more than the figures it
// backs can bear; chosen on the default sweep's samples (bench/journal/2026-12-04-noise-rule.md).
inline constexpr double noisy_median_uncertainty = 0.03;

// Whether a path's median is too uncertain to trust: at least 3 samples and a
// median_uncertainty above noisy_median_uncertainty. Many samples of a broad but steady
// spread pin the median down and are not noisy; a few spread ones, or a spread that splits
// in two, are.
bool is_noisy(const Stats& stats);

}  // namespace kvbench
