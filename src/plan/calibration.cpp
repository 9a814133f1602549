// Medians of measured roofline fractions, per path.
#include "kvbench/plan/calibration.hpp"

#include <algorithm>
#include <optional>

namespace kvbench {

namespace {

std::optional<double> median_of(std::vector<double> values) {
    if (values.empty()) return std::nullopt;
    std::sort(values.begin(), values.end());
    const std::size_t middle = values.size() / 2;
    return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

}  // namespace

Calibration calibrate(const std::vector<CalibrationPoint>& points) {
    std::vector<double> cached;
    std::vector<double> uncached;
    for (const CalibrationPoint& point : points) {
        (point.path == DecodePath::cached ? cached : uncached).push_back(point.roofline_fraction);
    }
    const std::optional<double> bandwidth = median_of(cached);
    const std::optional<double> compute = median_of(uncached);
    Calibration calibration;
    calibration.n_cached = cached.size();
    calibration.n_uncached = uncached.size();
    calibration.efficiency.bandwidth = bandwidth.value_or(compute.value_or(1));
    calibration.efficiency.compute = compute.value_or(bandwidth.value_or(1));
    return calibration;
}

}  // namespace kvbench
