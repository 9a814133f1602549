#include "kvbench/engine/config.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>

using kvbench::ConfigError;
using kvbench::validate;
using kvbench::test::make_config;

TEST_CASE("a valid configuration passes validation") {
    CHECK_NOTHROW(validate(make_config(2, 128, 1024, 16, 4, 2)));
    CHECK_NOTHROW(validate(make_config(1, 1, 64, 64, 1, 1)));
}

TEST_CASE("a zero in any dimension is rejected naming its option") {
    CHECK_THROWS_WITH_AS(validate(make_config(0, 8, 64, 4, 4, 1)), "--batch 0 must be at least 1", ConfigError);
    CHECK_THROWS_WITH_AS(validate(make_config(1, 0, 64, 4, 4, 1)), "--seq 0 must be at least 1", ConfigError);
    CHECK_THROWS_WITH_AS(validate(make_config(1, 8, 0, 4, 4, 1)), "--dim 0 must be at least 1", ConfigError);
    CHECK_THROWS_WITH_AS(validate(make_config(1, 8, 64, 0, 4, 1)), "--heads 0 must be at least 1", ConfigError);
    CHECK_THROWS_WITH_AS(validate(make_config(1, 8, 64, 4, 0, 1)), "--kv-heads 0 must be at least 1", ConfigError);
    CHECK_THROWS_WITH_AS(validate(make_config(1, 8, 64, 4, 4, 0)), "--layers 0 must be at least 1", ConfigError);
}

TEST_CASE("heads must divide the model dimension") {
    CHECK_THROWS_WITH_AS(validate(make_config(1, 8, 100, 8, 8, 1)),
                         "--heads 8 must divide --dim 100 (try 1, 2, 4, 5, 10, 20, 25, 50 or 100, or give --head-dim)",
                         ConfigError);
}

TEST_CASE("kv heads must divide the query heads") {
    CHECK_THROWS_WITH_AS(validate(make_config(1, 8, 64, 8, 3, 1)),
                         "--kv-heads 3 must divide --heads 8 (try 1, 2, 4 or 8)", ConfigError);
    CHECK_THROWS_AS(validate(make_config(1, 8, 64, 4, 8, 1)), ConfigError);
}

TEST_CASE("groupings are labelled MHA, GQA-g and MQA") {
    CHECK(kvbench::grouping_label(16, 16) == "MHA");
    CHECK(kvbench::grouping_label(16, 4) == "GQA-4");
    CHECK(kvbench::grouping_label(16, 1) == "MQA");
    CHECK(kvbench::grouping_label(1, 1) == "MHA");
}

TEST_CASE("derived widths follow the configuration") {
    const auto config = make_config(1, 8, 1024, 16, 4, 1);
    CHECK(config.head_dim() == 64);
    CHECK(config.kv_dim() == 256);
    CHECK(config.group_size() == 4);
    CHECK(config.qkv_dim() == 1024 + 2 * 256);
}

TEST_CASE("an explicit head dimension sets the widths of q, k and v apart from D") {
    // Gemma-7B: D=3072, 16 heads of 256, so q is 4096 wide.
    const auto config = make_config(1, 8, 3072, 16, 16, 1, 256);
    CHECK_NOTHROW(validate(config));
    CHECK(config.head_dim() == 256);
    CHECK(config.q_dim() == 4096);
    CHECK(config.kv_dim() == 4096);
    CHECK(config.qkv_dim() == 3 * 4096);
    const auto narrow = make_config(1, 8, 96, 4, 2, 1, 16);  // D/H would be 24
    CHECK(narrow.head_dim() == 16);
    CHECK(narrow.q_dim() == 64);
    CHECK(narrow.qkv_dim() == 64 + 2 * 32);
}

TEST_CASE("with --head-dim the heads need not divide the model dimension") {
    CHECK_NOTHROW(validate(make_config(1, 8, 100, 8, 8, 1, 16)));
    // The other rules still hold.
    CHECK_THROWS_WITH_AS(validate(make_config(1, 8, 100, 8, 3, 1, 16)),
                         "--kv-heads 3 must divide --heads 8 (try 1, 2, 4 or 8)", ConfigError);
}

TEST_CASE("heads times the head dimension is bounded as --dim is") {
    CHECK_NOTHROW(validate(make_config(1, 8, 64, 4, 4, 1, kvbench::max_q_dim / 4)));
    CHECK_THROWS_WITH_AS(validate(make_config(1, 8, 64, 4, 4, 1, kvbench::max_q_dim / 4 + 1)),
                         "--head-dim 268435457: --heads 4 x --head-dim must be at most 1073741824", ConfigError);
}

TEST_CASE("a head dimension equal to D/H is the same configuration as none") {
    const auto implicit = make_config(1, 8, 1024, 16, 4, 1);
    CHECK(implicit == make_config(1, 8, 1024, 16, 4, 1, 64));
    CHECK_FALSE(implicit == make_config(1, 8, 1024, 16, 4, 1, 128));
}

TEST_CASE("describe names an explicit head dimension only") {
    CHECK(kvbench::describe(make_config(1, 8, 64, 4, 4, 1)) == "B=1 N=8 D=64 H=4 G=4 L=1");
    CHECK(kvbench::describe(make_config(1, 8, 64, 4, 4, 1, 48)) == "B=1 N=8 D=64 H=4 dh=48 G=4 L=1");
}

TEST_CASE("an MLP and experts belong to a full block, whole") {
    auto config = make_config(1, 8, 64, 4, 4, 2);
    config.ffn_dim = 256;
    CHECK_THROWS_WITH_AS(validate(config), "--ffn-dim 256 needs --block full", ConfigError);
    config.block = kvbench::BlockKind::full;
    CHECK_NOTHROW(validate(config));
    config.ffn_dim = 0;
    CHECK_THROWS_WITH_AS(validate(config), "--block full needs --ffn-dim, the width of its MLP", ConfigError);
    config.moe = {.n_experts = 8, .n_active = 9, .n_shared = 0, .expert_dim = 32, .n_dense_layers = 0};
    CHECK_THROWS_WITH_AS(validate(config), "--experts-active 9 must be between 1 and --experts 8", ConfigError);
    config.moe.n_active = 2;
    CHECK_NOTHROW(validate(config));  // every layer's MLP is experts: no dense width needed
    config.moe.n_dense_layers = 1;
    CHECK_THROWS_WITH_AS(validate(config), "--block full needs --ffn-dim, the width of its MLP", ConfigError);
    config.moe.n_dense_layers = 3;
    config.ffn_dim = 128;
    CHECK_THROWS_WITH_AS(validate(config), "3 dense layers before the experts, more than --layers 2", ConfigError);
}

TEST_CASE("windows come one per layer and a latent attention with every width") {
    auto config = make_config(1, 8, 64, 4, 4, 3);
    config.layer_windows = {16, 0};
    CHECK_THROWS_WITH_AS(validate(config), "2 layer windows for --layers 3: give one per layer", ConfigError);
    config.layer_windows = {16, 0, 16};
    CHECK_NOTHROW(validate(config));
    CHECK(config.attended_positions(0, 8) == 8);
    CHECK(config.attended_positions(0, 100) == 16);
    CHECK(config.attended_positions(1, 100) == 100);
    config.mla.kv_lora_rank = 32;
    CHECK_THROWS_WITH_AS(validate(config), "--kv-lora-rank 32 needs --rope-dim, --nope-dim and --v-head-dim",
                         ConfigError);
}

TEST_CASE("a window pattern is written as the shortest unit that repeats over the layers") {
    auto config = make_config(1, 8, 64, 4, 4, 6);
    CHECK(kvbench::window_pattern(config).empty());
    config.layer_windows = {4096, 4096, 4096, 4096, 4096, 4096};
    CHECK(kvbench::window_pattern(config) == "all");
    config.layer_windows = {1024, 1024, 1024, 1024, 1024, 0};
    CHECK(kvbench::window_pattern(config) == "LLLLLG");
    config.layer_windows = {128, 0, 128, 0, 128, 0};
    CHECK(kvbench::window_pattern(config) == "LG");
    config.layer_windows = {128, 0, 0, 128, 128, 0};
    CHECK(kvbench::window_pattern(config) == "LGGL");  // repeated, then cut at the sixth layer
    config.layer_windows = {128, 128, 128, 128, 0, 0};
    CHECK(kvbench::window_pattern(config) == "LLLLGG");
    config.layer_windows = {0, 0, 0, 0, 0, 0};
    CHECK(kvbench::window_pattern(config).empty());
}

TEST_CASE("describe names what differs from the f32 attention block") {
    auto config = make_config(8, 4096, 4096, 32, 8, 2);
    config.block = kvbench::BlockKind::full;
    config.ffn_dim = 14336;
    config.weight_dtype = kvbench::WeightDtype::bf16;
    config.kv_dtype = kvbench::KvDtype::f16;
    config.layer_windows = {4096, 0};
    CHECK(kvbench::describe(config) == "B=8 N=4096 D=4096 H=32 G=8 L=2 full F=14336 W=4096:LG w=bf16 kv=f16");
    config.moe = {.n_experts = 8, .n_active = 2, .n_shared = 1, .expert_dim = 1024, .n_dense_layers = 0};
    config.attention_sinks = true;
    CHECK(kvbench::describe(config) ==
          "B=8 N=4096 D=4096 H=32 G=8 L=2 full F=14336 E=8/2 S=1 Fe=1024 W=4096:LG sinks w=bf16 kv=f16");
}
