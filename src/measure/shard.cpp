// The shard split: point weights from the assumed roofline, then greedy longest-processing-time assignment.
#include "kvbench/measure/shard.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <numeric>

namespace kvbench {

namespace {

// The shard of every point, by the LPT rule.
std::vector<std::size_t> assign(std::span<const double> weights, std::size_t count) {
    std::vector<std::size_t> order(weights.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return weights[a] > weights[b]; });
    std::vector<double> totals(count, 0.0);
    std::vector<std::size_t> shard_of(weights.size(), 0);
    for (const std::size_t point : order) {
        const auto lightest = std::min_element(totals.begin(), totals.end());  // the first of equals
        shard_of[point] = static_cast<std::size_t>(lightest - totals.begin());
        *lightest += weights[point];
    }
    return shard_of;
}

}  // namespace

std::string shard_label(const Shard& shard) { return fmt::format("{}/{}", shard.index, shard.count); }

std::vector<double> shard_weights(const std::vector<GridPoint>& points, const RunOptions& options) {
    std::vector<double> weights;
    weights.reserve(points.size());
    for (const GridPoint& point : points) weights.push_back(estimate_point_seconds(point, options, nullptr, 0));
    return weights;
}

std::vector<std::size_t> shard_point_indices(std::span<const double> weights, const Shard& shard) {
    assert(shard.index >= 1 && shard.index <= shard.count);
    const std::vector<std::size_t> shard_of = assign(weights, shard.count);
    std::vector<std::size_t> indices;
    for (std::size_t i = 0; i < shard_of.size(); ++i) {
        if (shard_of[i] == shard.index - 1) indices.push_back(i);
    }
    return indices;
}

std::vector<double> shard_totals(std::span<const double> weights, std::size_t count) {
    const std::vector<std::size_t> shard_of = assign(weights, count);
    std::vector<double> totals(count, 0.0);
    for (std::size_t i = 0; i < weights.size(); ++i) totals[shard_of[i]] += weights[i];
    return totals;
}

}  // namespace kvbench
