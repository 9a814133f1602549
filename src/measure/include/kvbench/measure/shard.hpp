// One machine's share of a grid run on many (--shard K/N, docs/sharding.md): a balanced, deterministic split of the points.
#pragma once

#include "kvbench/measure/runner.hpp"
#include "kvbench/measure/sweep.hpp"

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace kvbench {

// Shard `index` of `count`, both counted from 1: "2/4" is the second of four.
struct Shard {
    std::size_t index = 1;
    std::size_t count = 1;
};

// "2/4".
std::string shard_label(const Shard& shard);

// What a point weighs in the split: its estimated seconds (estimate_point_seconds) from the exact
// FLOPs and bytes at the assumed roofline, never this machine's, and without the cache flush,
// whose size depends on the machine's caches: every machine computes the same weights, bit for
// bit (IEEE arithmetic, no library function), so all shards agree on the split.
std::vector<double> shard_weights(const std::vector<GridPoint>& points, const RunOptions& options);

// The points of `shard`, as indices into `weights`' grid, in grid order. The split is greedy
// longest-processing-time first (Graham's LPT): each point, heaviest first (equal weights: the
// earlier in the grid first), goes to the shard with the least weight so far (equal: the lower
// shard). The shards are disjoint, their union is the grid, and no shard's weight exceeds the
// lightest's by more than the heaviest single point.
// Requires: 1 <= shard.index <= shard.count.
std::vector<std::size_t> shard_point_indices(std::span<const double> weights, const Shard& shard);

// The weight of every shard of `count` under that split, shard 1 first.
std::vector<double> shard_totals(std::span<const double> weights, std::size_t count);

}  // namespace kvbench
