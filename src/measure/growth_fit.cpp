// Log-log least squares: the closed form of a straight line's fit, with k's standard error.
#include "kvbench/measure/growth_fit.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace kvbench {

std::optional<GrowthFit> fit_growth(std::span<const double> n, std::span<const double> t, double from_n) {
    std::vector<double> xs;  // ln N
    std::vector<double> ys;  // ln t
    GrowthFit fit;
    for (std::size_t i = 0; i < n.size() && i < t.size(); ++i) {
        if (n[i] < from_n) continue;
        if (!(n[i] > 0) || !(t[i] > 0)) return std::nullopt;
        xs.push_back(std::log(n[i]));
        ys.push_back(std::log(t[i]));
        fit.min_n = xs.size() == 1 ? n[i] : std::min(fit.min_n, n[i]);
        fit.max_n = xs.size() == 1 ? n[i] : std::max(fit.max_n, n[i]);
    }
    const std::size_t count = xs.size();
    if (count < 3 || !(fit.max_n > fit.min_n)) return std::nullopt;

    const double size = static_cast<double>(count);
    double mean_x = 0, mean_y = 0;
    for (std::size_t i = 0; i < count; ++i) {
        mean_x += xs[i] / size;
        mean_y += ys[i] / size;
    }
    double sxx = 0, sxy = 0;
    for (std::size_t i = 0; i < count; ++i) {
        sxx += (xs[i] - mean_x) * (xs[i] - mean_x);
        sxy += (xs[i] - mean_x) * (ys[i] - mean_y);
    }
    fit.exponent = sxy / sxx;
    const double intercept = mean_y - fit.exponent * mean_x;
    fit.coefficient = std::exp(intercept);
    double sum_squares = 0;
    for (std::size_t i = 0; i < count; ++i) {
        const double residual = ys[i] - (intercept + fit.exponent * xs[i]);
        sum_squares += residual * residual;
    }
    fit.rms_log_residual = std::sqrt(sum_squares / size);
    // Two parameters fitted: n - 2 degrees of freedom for the residual variance.
    fit.exponent_stderr = std::sqrt(sum_squares / (size - 2) / sxx);
    fit.n_points = count;
    return fit;
}

}  // namespace kvbench
