// Summary statistics of one point's timed repetitions.
#include "kvbench/measure/stats.hpp"

#include <boost/math/distributions/students_t.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace kvbench {

namespace {

// Requires: `sorted` ascending and not empty.
double median_of_sorted(const std::vector<double>& sorted) {
    const std::size_t mid = sorted.size() / 2;
    return sorted.size() % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

// Linear interpolation between the order statistics around rank q·(n-1)
// (NumPy's default "linear" method, Hyndman & Fan type 7).
// Requires: `sorted` ascending and not empty, 0 <= q <= 1.
double quantile_of_sorted(const std::vector<double>& sorted, double q) {
    const double rank = q * static_cast<double>(sorted.size() - 1);
    const auto below = static_cast<std::size_t>(std::floor(rank));
    const std::size_t above = std::min(below + 1, sorted.size() - 1);
    const double fraction = rank - static_cast<double>(below);
    return sorted[below] + fraction * (sorted[above] - sorted[below]);
}

// Half the distribution-free 95 % interval of the median: between the order statistics of
// ranks n/2 ∓ 1.96·√n/2 (the normal approximation of the binomial). It needs no shape, but
// with few samples its ranks fall on the extremes.
// Requires: `sorted` ascending and not empty.
double rank_interval_half_width(const std::vector<double>& sorted) {
    const double n = static_cast<double>(sorted.size());
    const double reach = 1.96 * std::sqrt(n) / 2;
    const auto low = static_cast<std::size_t>(std::max(0.0, std::floor(n / 2 - reach)));
    const auto high = static_cast<std::size_t>(std::min(n - 1, std::ceil(n / 2 + reach) - 1));
    return (sorted[high] - sorted[low]) / 2;
}

}  // namespace

Stats summarize(std::span<const std::int64_t> samples_ns) {
    if (samples_ns.empty()) throw std::invalid_argument("summarize: no samples");
    std::vector<double> sorted;
    sorted.reserve(samples_ns.size());
    for (const std::int64_t s : samples_ns) sorted.push_back(static_cast<double>(s));
    std::sort(sorted.begin(), sorted.end());

    Stats stats;
    stats.n_samples = sorted.size();
    const double n = static_cast<double>(sorted.size());
    stats.median_ns = median_of_sorted(sorted);
    stats.min_ns = sorted.front();
    stats.max_ns = sorted.back();
    double sum = 0;
    for (const double s : sorted) sum += s;
    stats.mean_ns = sum / n;
    stats.p90_ns = quantile_of_sorted(sorted, 0.9);

    // Two passes: the one-pass sum-of-squares formula cancels badly for ns timings with small spread.
    double squared_deviations = 0;
    for (const double s : sorted) squared_deviations += (s - stats.mean_ns) * (s - stats.mean_ns);
    stats.stddev_ns = sorted.size() > 1 ? std::sqrt(squared_deviations / (n - 1)) : 0;
    stats.cv = stats.mean_ns > 0 ? stats.stddev_ns / stats.mean_ns : 0;

    // MdAPE is robust to the odd preempted repetition, unlike the CV.
    if (stats.median_ns > 0) {
        std::vector<double> deviations;
        deviations.reserve(sorted.size());
        for (const double s : sorted) deviations.push_back(std::fabs(s - stats.median_ns) / stats.median_ns);
        std::sort(deviations.begin(), deviations.end());
        stats.mdape = median_of_sorted(deviations);
    }
    if (stats.n_samples >= 2) stats.median_uncertainty = estimated_median_uncertainty(stats.mdape, stats.n_samples);
    if (stats.n_samples >= median_rank_interval_min_samples && stats.median_ns > 0) {
        stats.median_uncertainty = std::max(stats.median_uncertainty, rank_interval_half_width(sorted) / stats.median_ns);
    }
    return stats;
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return median_of_sorted(values);
}

double estimated_median_uncertainty(double mdape, std::size_t n_samples) {
    if (n_samples < 2) throw std::invalid_argument("estimated_median_uncertainty: fewer than 2 samples");
    // σ / median ≈ 1.4826 · MdAPE (the MAD of a normal distribution is 0.6745 σ), and the
    // median's standard error is √(π/2) = 1.2533 times the mean's, σ / √n.
    constexpr double sigma_per_mad = 1.4826;
    constexpr double median_se_per_mean_se = 1.2533;
    const double n = static_cast<double>(n_samples);
    const double t = boost::math::quantile(boost::math::students_t(n - 1), 0.975);
    return t * median_se_per_mean_se * sigma_per_mad * mdape / std::sqrt(n);
}

bool is_noisy(const Stats& stats) {
    return stats.n_samples >= 3 && stats.median_uncertainty > noisy_median_uncertainty;
}

}  // namespace kvbench
