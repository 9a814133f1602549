// --shard K/N: the shards partition the grid, balance its estimated time, and split it the same way whatever the machine.
#include "kvbench/measure/shard.hpp"
#include "kvbench/measure/sweep.hpp"

#include "cli/sweep_options.hpp"
#include "kvbench/engine/config.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <vector>

using namespace kvbench;

namespace {

// The default sweep's policy: adaptive repetitions, at least 0.1 s or 5 per path.
RunOptions default_policy() {
    RunOptions options;
    options.min_time_s = 0.1;
    return options;
}

Grid grid_of(std::vector<std::size_t> seq, std::vector<std::size_t> batch, std::vector<std::size_t> dim,
             std::vector<std::size_t> heads, std::vector<std::size_t> kv_heads) {
    SweepSpec spec;
    spec.seq = std::move(seq);
    spec.batch = std::move(batch);
    spec.dim = std::move(dim);
    spec.heads = std::move(heads);
    spec.kv_heads = std::move(kv_heads);
    return expand(spec);
}

}  // namespace

TEST_CASE("lpt gives each point, heaviest first, to the lightest shard: a case by hand") {
    // 5 to shard 1; 4 to 2; 3 (the first) to 2 (4 < 5); 3 to 1 (5 < 7); 3 to 2 (7 < 8).
    const std::vector<double> weights = {5, 4, 3, 3, 3};
    CHECK(shard_point_indices(weights, {1, 2}) == std::vector<std::size_t>{0, 3});
    CHECK(shard_point_indices(weights, {2, 2}) == std::vector<std::size_t>{1, 2, 4});
    CHECK(shard_totals(weights, 2) == std::vector<double>{8, 10});
    CHECK(shard_point_indices(weights, {1, 1}) == std::vector<std::size_t>{0, 1, 2, 3, 4});
}

TEST_CASE("the shards of every count are disjoint and their union is the grid") {
    const Grid grid = grid_of({128, 256, 512, 1024, 2048, 4096}, {1, 4}, {1024}, {16}, {16, 4, 1});
    const std::vector<double> weights = shard_weights(grid.points, default_policy());
    for (std::size_t count = 1; count <= 9; ++count) {
        std::vector<std::size_t> all;
        for (std::size_t index = 1; index <= count; ++index) {
            const std::vector<std::size_t> shard = shard_point_indices(weights, {index, count});
            CHECK(std::is_sorted(shard.begin(), shard.end()));  // grid order within a shard
            all.insert(all.end(), shard.begin(), shard.end());
        }
        std::sort(all.begin(), all.end());
        std::vector<std::size_t> grid_indices(grid.points.size());
        std::iota(grid_indices.begin(), grid_indices.end(), std::size_t{0});
        CHECK_MESSAGE(all == grid_indices, count, " shards");  // each point once: disjoint, and the whole grid
    }
}

TEST_CASE("four shards of realistic grids carry estimated times within 20 % of each other") {
    const std::vector<Grid> grids = {
        grid_of({128, 256, 512, 1024, 2048, 4096}, {1}, {1024}, {16}, {16, 4, 1}),      // the default sweep
        grid_of({128, 256, 512, 1024, 2048, 4096}, {1, 4}, {1024}, {16}, {16, 4, 1}),   // and two batch sizes
        grid_of({512, 1024, 2048, 4096, 8192}, {1}, {2048, 4096}, {32}, {32, 8, 1}),    // two model widths
    };
    for (const Grid& grid : grids) {
        const std::vector<double> totals = shard_totals(shard_weights(grid.points, default_policy()), 4);
        const auto [lightest, heaviest] = std::minmax_element(totals.begin(), totals.end());
        CHECK_MESSAGE(*heaviest <= 1.2 * *lightest, grid.points.size(), " points: ", *lightest, " to ", *heaviest, " s");
    }
}

TEST_CASE("no shard outweighs the lightest by more than the heaviest point, for any weights") {
    std::vector<double> weights;
    std::uint64_t state = 12345;
    for (int i = 0; i < 97; ++i) {
        state = state * 6364136223846793005u + 1442695040888963407u;  // a fixed LCG: the same weights every run
        weights.push_back(static_cast<double>(state >> 40) / 1e3);
    }
    const double heaviest_point = *std::max_element(weights.begin(), weights.end());
    for (std::size_t count = 2; count <= 12; ++count) {
        const std::vector<double> totals = shard_totals(weights, count);
        const auto [lightest, heaviest] = std::minmax_element(totals.begin(), totals.end());
        CHECK(*heaviest - *lightest <= heaviest_point);
    }
}

TEST_CASE("a point's weight is its estimate at the assumed roofline: the machine's own never enters") {
    const Grid grid = grid_of({256, 4096}, {1}, {1024}, {16}, {16, 1});
    const std::vector<double> weights = shard_weights(grid.points, default_policy());
    Roofline fast_machine;
    fast_machine.peak_gflops = 5000;
    fast_machine.peak_gbps = 900;
    for (std::size_t i = 0; i < grid.points.size(); ++i) {
        CHECK(weights[i] == estimate_point_seconds(grid.points[i], default_policy(), nullptr, 0));
        CHECK(weights[i] != estimate_point_seconds(grid.points[i], default_policy(), &fast_machine, 0));
    }
}

TEST_CASE("--shard keeps this shard's points of the grid and records the whole grid's size") {
    SweepCliOptions options;
    options.seq = "16,32,64";
    options.dim = "64";
    options.heads = "4";
    options.kv_heads = "4,1";
    options.threads = "1";
    std::set<std::size_t> seqs_times_kv_heads;
    std::size_t n_points = 0;
    for (std::size_t k = 1; k <= 3; ++k) {
        options.shard = fmt::format("{}/3", k);
        const SweepPlan plan = to_sweep_plan(options);
        CHECK(plan.n_grid_points == 6);
        for (const GridPoint& point : plan.grid.points) {
            seqs_times_kv_heads.insert(point.config.seq_len * 100 + point.config.n_kv_heads);
        }
        n_points += plan.grid.points.size();
    }
    CHECK(n_points == 6);
    CHECK(seqs_times_kv_heads.size() == 6);
    CHECK(parse_shard("2/4").index == 2);
    CHECK_THROWS_AS(parse_shard("4/2"), ConfigError);
    CHECK_THROWS_AS(parse_shard("1/0"), ConfigError);
    CHECK_THROWS_AS(parse_shard("a/b"), ConfigError);
    CHECK_THROWS_AS(parse_shard("1/2/3"), ConfigError);
}
