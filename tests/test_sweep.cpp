#include "kvbench/measure/sweep.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace kvbench;

TEST_CASE("the grid is the cartesian product with the model shape outermost") {
    SweepSpec spec;
    spec.dim = {64, 128};
    spec.heads = {4};
    spec.kv_heads = {4, 1};
    spec.layers = {1};
    spec.batch = {1, 2};
    spec.seq = {8, 16, 32};
    spec.threads = {1};
    const Grid grid = expand(spec);
    REQUIRE(grid.points.size() == 2 * 2 * 2 * 3);
    CHECK(grid.skipped.empty());
    // First point, then seq varies fastest, then batch, then kv_heads, then dim.
    CHECK(grid.points[0].config.model_dim == 64);
    CHECK(grid.points[0].config.n_kv_heads == 4);
    CHECK(grid.points[1].config.seq_len == 16);
    CHECK(grid.points[3].config.n_batch == 2);
    CHECK(grid.points[6].config.n_kv_heads == 1);
    CHECK(grid.points[12].config.model_dim == 128);
    CHECK(grid.points.back().config.seq_len == 32);
}

TEST_CASE("combinations breaking a rule are skipped and named once") {
    SweepSpec spec;
    spec.dim = {96};
    spec.heads = {8};
    spec.kv_heads = {8, 3, 1};
    spec.layers = {1, 2};
    spec.seq = {4, 8};
    const Grid grid = expand(spec);
    CHECK(grid.points.size() == 2 * 2 * 2);
    REQUIRE(grid.skipped.size() == 1);
    CHECK(grid.skipped[0] == "D=96 H=8 G=3: --kv-heads 3 must divide --heads 8 (try 1, 2, 4 or 8)");
}

TEST_CASE("a grid with no valid point is an error naming the rule") {
    SweepSpec spec;
    spec.dim = {100};
    spec.heads = {8};
    spec.kv_heads = {8};
    CHECK_THROWS_WITH_AS(expand(spec),
                         doctest::Contains("the grid is empty: every combination of --dim, --heads and "
                                           "--kv-heads breaks a rule (D=100 H=8 G=8: --heads 8 must divide --dim 100"),
                         ConfigError);
}

TEST_CASE("--head-dim is an axis after --heads, and frees D from being a multiple of H") {
    SweepSpec spec;
    spec.dim = {100};
    spec.heads = {8};
    spec.head_dim = {16, 40};
    spec.kv_heads = {8, 3};
    spec.seq = {4, 8};
    const Grid grid = expand(spec);
    REQUIRE(grid.points.size() == 2 * 2);
    CHECK(grid.points[0].config.head_dim() == 16);
    CHECK(grid.points[1].config.seq_len == 8);
    CHECK(grid.points[2].config.head_dim() == 40);
    CHECK(grid.points[2].config.q_dim() == 320);
    REQUIRE(grid.skipped.size() == 2);
    CHECK(grid.skipped[0] == "D=100 H=8 dh=16 G=3: --kv-heads 3 must divide --heads 8 (try 1, 2, 4 or 8)");
    // Without --head-dim the axis holds 0, dh = D/H.
    CHECK(SweepSpec{}.head_dim == std::vector<std::size_t>{0});
    CHECK(expand(SweepSpec{}).points[0].config.head_dim() == 1024 / 16);
}

TEST_CASE("a window pattern is laid over each layer count, repeated and cut at the last layer") {
    CHECK(layer_windows_for(0, "LG", 4).empty());
    CHECK(layer_windows_for(128, "all", 3) == std::vector<std::uint32_t>{128, 128, 128});
    CHECK(layer_windows_for(128, "LG", 5) == std::vector<std::uint32_t>{128, 0, 128, 0, 128});
    CHECK(layer_windows_for(1024, "LLLLLG", 8) == std::vector<std::uint32_t>{1024, 1024, 1024, 1024, 1024, 0, 1024, 1024});
    CHECK_THROWS_WITH_AS(layer_windows_for(128, "LX", 2),
                         "--window-layers LX: give `all` or a unit of L (local) and G (global) layers that repeats "
                         "over the layers, e.g. LG or LLLLLG",
                         ConfigError);
}

TEST_CASE("the attention block is one point whatever --ffn-dim lists, and the full block one per width") {
    SweepSpec spec;
    spec.dim = {64};
    spec.heads = {4};
    spec.kv_heads = {4};
    spec.blocks = {BlockKind::attention, BlockKind::full};
    spec.ffn_dim = {128, 256};
    spec.seq = {8};
    const Grid both = expand(spec);
    REQUIRE(both.points.size() == 3);
    CHECK(both.points[0].config.block == BlockKind::attention);
    CHECK(both.points[1].config.ffn_dim == 128);
    CHECK(both.points[2].config.ffn_dim == 256);
    spec.blocks = {BlockKind::attention};
    const Grid grid = expand(spec);
    REQUIRE(grid.points.size() == 1);
    CHECK(grid.points[0].config.ffn_dim == 0);
}
