// Medians of measured roofline fractions per path, and per batch the two streams' fit.
#include "kvbench/plan/calibration.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace kvbench {

namespace {

std::optional<double> median_of(std::vector<double> values) {
    if (values.empty()) return std::nullopt;
    std::sort(values.begin(), values.end());
    const std::size_t middle = values.size() / 2;
    return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

// Seconds per peak-second of each stream, 1/e_w and 1/e_kv, minimising the sum of squared
// relative errors of the points' predicted times: the 2 x 2 normal equations.
std::optional<StreamEfficiency> fit_streams(const std::vector<CalibrationPoint>& points) {
    std::set<double> kv_shares;
    double uu = 0, uv = 0, vv = 0, u1 = 0, v1 = 0;
    for (const CalibrationPoint& point : points) {
        if (!(point.measured_s > 0) || !(point.weights_at_peak_s + point.kv_at_peak_s > 0)) return std::nullopt;
        const double u = point.weights_at_peak_s / point.measured_s;
        const double v = point.kv_at_peak_s / point.measured_s;
        kv_shares.insert(point.kv_at_peak_s / (point.weights_at_peak_s + point.kv_at_peak_s));
        uu += u * u;
        uv += u * v;
        vv += v * v;
        u1 += u;
        v1 += v;
    }
    // Two unknowns need two points whose streams stand in different proportions.
    if (kv_shares.size() < 2) return std::nullopt;
    const double determinant = uu * vv - uv * uv;
    if (!(determinant > 1e-12 * uu * vv)) return std::nullopt;
    const double weights_inverse = (u1 * vv - v1 * uv) / determinant;
    const double kv_inverse = (v1 * uu - u1 * uv) / determinant;
    if (!(weights_inverse > 0 && kv_inverse > 0)) return std::nullopt;
    return StreamEfficiency{points.front().batch, 1 / weights_inverse, 1 / kv_inverse};
}

// A stream or path cannot beat the device's peak: above 1, the efficiency is billed at 1 and
// the fitted value kept for the warning.
double capped_at_peak(double efficiency, std::string what, std::vector<CappedEfficiency>& capped) {
    if (efficiency <= 1) return efficiency;
    capped.push_back({std::move(what), efficiency});
    return 1;
}

}  // namespace

Calibration calibrate(const std::vector<CalibrationPoint>& points) {
    std::vector<double> cached;
    std::vector<double> uncached;
    std::map<std::uint64_t, std::vector<CalibrationPoint>> cached_by_batch;
    for (const CalibrationPoint& point : points) {
        (point.path == DecodePath::cached ? cached : uncached).push_back(point.roofline_fraction);
        if (point.path == DecodePath::cached) cached_by_batch[point.batch].push_back(point);
    }
    const std::optional<double> bandwidth = median_of(cached);
    const std::optional<double> compute = median_of(uncached);
    Calibration calibration;
    calibration.n_cached = cached.size();
    calibration.n_uncached = uncached.size();
    std::vector<CappedEfficiency>& capped = calibration.capped;
    // Without cached rows, compute's median is the bandwidth's too: capped once, warned once.
    calibration.efficiency.compute = capped_at_peak(compute.value_or(bandwidth.value_or(1)),
                                                    compute ? "compute, the uncached rows' median,"
                                                            : "compute, the cached rows' median (no uncached rows),",
                                                    capped);
    // With cached rows the steps are billed per batch (below), and this median is only reported;
    // above 1 it is no efficiency a device has, so it is reported capped, beside its value.
    calibration.bandwidth_median = bandwidth.value_or(calibration.efficiency.compute);
    calibration.efficiency.bandwidth = std::min(1.0, calibration.bandwidth_median);
    for (const auto& [batch, batch_points] : cached_by_batch) {
        StreamEfficiency streams;
        if (const std::optional<StreamEfficiency> fitted = fit_streams(batch_points)) {
            streams = *fitted;
        } else {
            std::vector<double> fractions;
            for (const CalibrationPoint& point : batch_points) fractions.push_back(point.roofline_fraction);
            const double median = *median_of(fractions);
            streams = {batch, median, median};
        }
        // One cap for a median shared by both streams: it is one value, and one warning.
        if (streams.weights == streams.kv) {
            streams.weights = streams.kv = capped_at_peak(streams.kv, fmt::format("both streams' median at B={}", batch), capped);
        } else {
            streams.weights = capped_at_peak(streams.weights, fmt::format("the weight stream's fit at B={}", batch), capped);
            streams.kv = capped_at_peak(streams.kv, fmt::format("the KV stream's fit at B={}", batch), capped);
        }
        calibration.efficiency.by_batch.push_back(streams);
    }
    return calibration;
}

}  // namespace kvbench
