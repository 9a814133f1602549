#include "kvbench/measure/sweep.hpp"

#include <doctest/doctest.h>

#include <algorithm>

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
                         doctest::Contains("the grid is empty: every shape of it breaks a rule (D=100 H=8 G=8: "
                                           "--heads 8 must divide --dim 100"),
                         ConfigError);
}

TEST_CASE("an empty grid leads with the rule broken, whichever options it names") {
    SweepSpec spec;
    spec.blocks = {BlockKind::full};
    spec.ffn_dim = {64};
    spec.base.moe.n_experts = 8;
    spec.base.moe.n_active = 9;
    CHECK_THROWS_WITH_AS(expand(spec), doctest::Contains("breaks a rule (D="), ConfigError);
    try {
        expand(spec);
    } catch (const ConfigError& error) {
        const std::string message = error.what();
        CHECK(message.find("--experts-active 9") != std::string::npos);
        CHECK(message.find("--dim, --heads") == std::string::npos);
    }
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

TEST_CASE("a model's --layers are its first layers: within its dense first layers, all of them dense") {
    SweepSpec spec;
    spec.dim = {64};
    spec.heads = {4};
    spec.kv_heads = {4};
    spec.seq = {8};
    spec.blocks = {BlockKind::full};
    spec.ffn_dim = {96};
    spec.base.moe = {.n_experts = 8, .n_active = 2, .n_shared = 1, .expert_dim = 32, .n_dense_layers = 3};
    spec.layers = {2, 5};
    const Grid grid = expand(spec);
    REQUIRE(grid.points.size() == 2);
    CHECK(grid.points[0].config.moe.n_dense_layers == 2);  // DeepSeek-V3's first two layers: dense
    CHECK(grid.points[1].config.moe.n_dense_layers == 3);
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

TEST_CASE("--seq-lens repeats its pattern over each batch, and a batch at one context is a uniform one") {
    SweepSpec spec;
    spec.dim = {64};
    spec.heads = {4};
    spec.kv_heads = {4};
    spec.threads = {1};
    spec.batch = {2, 4};
    spec.seq_lens = {300, 20};
    const Grid grid = expand(spec);
    REQUIRE(grid.points.size() == 2);
    CHECK(grid.points[0].config.seq_lens == std::vector<std::uint32_t>{300, 20});
    CHECK(grid.points[1].config.seq_lens == std::vector<std::uint32_t>{300, 20, 300, 20});
    CHECK(grid.points[1].config.seq_len == 300);
    spec.seq_lens = {64};
    const Grid uniform = expand(spec);
    CHECK(uniform.points[1].config.seq_lens.empty());
    CHECK(uniform.points[1].config.seq_len == 64);
    spec.seq_lens = {300, 20, 5};
    CHECK_THROWS_WITH_AS(expand(spec),
                         "--seq-lens has 3 values, which do not divide --batch 2: the pattern repeats over the batch, "
                         "so give a batch of a multiple of 3 (or one context per sequence)",
                         ConfigError);
}

TEST_CASE("--seq-dist draws each batch's contexts from the seed, between its bounds, the same every time") {
    const SeqDist uniform = parse_seq_dist("uniform:10:20");
    const SeqDist lognormal = parse_seq_dist("lognormal:100:10000");
    CHECK(lognormal == SeqDist{SeqDistKind::lognormal, 100, 10000});
    const std::vector<std::uint32_t> drawn = draw_seq_lens(lognormal, 1001, 7);
    CHECK(drawn == draw_seq_lens(lognormal, 1001, 7));
    CHECK(drawn != draw_seq_lens(lognormal, 1001, 8));
    // A batch of k is the first k of a larger one.
    CHECK(draw_seq_lens(lognormal, 5, 7) == std::vector<std::uint32_t>(drawn.begin(), drawn.begin() + 5));
    CHECK(*std::min_element(drawn.begin(), drawn.end()) >= 100);
    CHECK(*std::max_element(drawn.begin(), drawn.end()) <= 10000);
    // Its median is near the bounds' geometric mean, 1000, far below their midpoint.
    std::vector<std::uint32_t> sorted = drawn;
    std::sort(sorted.begin(), sorted.end());
    CHECK(sorted[500] > 800);
    CHECK(sorted[500] < 1250);
    const std::vector<std::uint32_t> flat = draw_seq_lens(uniform, 1001, 7);
    CHECK(*std::min_element(flat.begin(), flat.end()) == 10);  // both bounds are reached
    CHECK(*std::max_element(flat.begin(), flat.end()) == 20);
    CHECK(draw_seq_lens(parse_seq_dist("uniform:7:7"), 3, 1) == std::vector<std::uint32_t>{7, 7, 7});

    SweepSpec spec;
    spec.dim = {64};
    spec.heads = {4};
    spec.kv_heads = {4};
    spec.threads = {1};
    spec.batch = {1, 8};
    spec.seq_dist = lognormal;
    spec.seq_dist_seed = 7;
    const Grid grid = expand(spec);
    REQUIRE(grid.points.size() == 2);
    CHECK(grid.points[0].config.seq_lens.empty());  // one sequence is a uniform batch
    CHECK(grid.points[0].config.seq_len == drawn[0]);
    CHECK(grid.points[1].config.seq_lens == std::vector<std::uint32_t>(drawn.begin(), drawn.begin() + 8));
}

TEST_CASE("a bad --seq-dist is refused naming the option and the rule") {
    CHECK_THROWS_WITH_AS(parse_seq_dist("gauss:1:5"),
                         "--seq-dist gauss:1:5: unknown distribution 'gauss'; give uniform or lognormal (e.g. "
                         "uniform:128:4096 or lognormal:200:30000)",
                         ConfigError);
    CHECK_THROWS_WITH_AS(parse_seq_dist("uniform:50:10"), doctest::Contains("LO 50 must be at most HI 10"), ConfigError);
    CHECK_THROWS_WITH_AS(parse_seq_dist("uniform:0:10"), doctest::Contains("LO must be a whole number from 1"),
                         ConfigError);
    CHECK_THROWS_WITH_AS(parse_seq_dist("uniform:10"), doctest::Contains("write KIND:LO:HI"), ConfigError);
}

TEST_CASE("--query-tokens is an axis after the context") {
    SweepSpec spec;
    spec.dim = {64};
    spec.heads = {4};
    spec.kv_heads = {4};
    spec.threads = {1};
    spec.seq = {8, 16};
    spec.query_tokens = {1, 4};
    const Grid grid = expand(spec);
    REQUIRE(grid.points.size() == 4);
    CHECK(grid.points[1].config.n_query_tokens == 4);
    CHECK(grid.points[1].config.seq_len == 8);
    CHECK(grid.points[2].config.seq_len == 16);
    spec.query_tokens = {9};
    CHECK_THROWS_WITH_AS(expand(spec), doctest::Contains("--query-tokens 9 must be at most the shortest context, 8"),
                         ConfigError);
}

TEST_CASE("shared prefixes are an axis after the query tokens, a percentage taken of each point's shortest context") {
    SweepSpec spec;
    spec.dim = {64};
    spec.heads = {4};
    spec.kv_heads = {4};
    spec.threads = {1};
    spec.batch = {2};
    spec.seq = {8, 100};
    spec.shared_prefixes = {{0, false}, {50, true}, {6, false}};
    const Grid grid = expand(spec);
    REQUIRE(grid.points.size() == 6);
    std::vector<std::size_t> prefixes;
    for (const GridPoint& point : grid.points) prefixes.push_back(point.config.shared_prefix);
    CHECK(prefixes == std::vector<std::size_t>{0, 4, 6, 0, 50, 6});
    spec.shared_prefixes = {{8, false}};
    CHECK_THROWS_WITH_AS(expand(spec), doctest::Contains("--shared-prefix 8 must be at most --seq 8"), ConfigError);
    // A ragged batch's 50 % is of its shortest sequence, which holds the prefix too.
    spec.seq = {300};
    spec.seq_lens = {300, 20};
    spec.shared_prefixes = {{50, true}};
    const Grid ragged = expand(spec);
    REQUIRE(ragged.points.size() == 1);
    CHECK(ragged.points[0].config.shared_prefix == 10);
    spec.shared_prefixes = {{20, false}};
    CHECK_THROWS_WITH_AS(expand(spec), doctest::Contains("--shared-prefix 20 must be at most the ragged batch's "
                                                         "shortest context 20"),
                         ConfigError);
}
