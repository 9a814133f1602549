// The growth law of a latency: a least-squares fit of t = a·N^k in log-log space (docs/generate.md#the-growth-law).
#pragma once

#include <cstddef>
#include <optional>
#include <span>

namespace kvbench {

struct GrowthFit {
    double coefficient = 0;      // a, in the unit of the fitted values (e.g. ns)
    double exponent = 0;         // k
    double exponent_stderr = 0;  // standard error of k from the residuals; 0 for a perfect or 2-point fit
    double rms_log_residual = 0; // RMS of ln(t) - ln(a·N^k): 0.05 is about 5 % scatter around the curve
    std::size_t n_points = 0;    // points the fit used (those with N >= from_n)
    double min_n = 0;            // the N range the fit covers
    double max_n = 0;
};

// Fits ln t = ln a + k·ln N by ordinary least squares over the points with n[i] >= from_n,
// as Google Benchmark's complexity fit does over a fixed curve, but with k free.
// Returns nothing when fewer than 3 such points remain or they have fewer than 2 distinct N
// (k is undefined), or when a value is not positive (the logarithm is undefined).
// Requires: n and t of equal size.
std::optional<GrowthFit> fit_growth(std::span<const double> n, std::span<const double> t, double from_n = 0);

}  // namespace kvbench
