// --block, --ffn-dim, --weight-dtype and the experts' options laid into a sweep's spec, over a
// named model's layer or over none.
#include "cli/layer_options.hpp"
#include "cli/shared_prefix_option.hpp"

#include "kvbench/engine/config.hpp"
#include "kvbench/plan/model_preset.hpp"

#include <doctest/doctest.h>

#include <utility>

using namespace kvbench;

namespace {

ModelConfig preset_config(const char* name) {
    const ModelPreset* preset = find_preset(builtin_presets(), name);
    REQUIRE(preset != nullptr);
    return model_config_of(*preset);
}

}  // namespace

TEST_CASE("a bare sweep keeps the attention block of f32 weights; --weight-dtype is an axis") {
    SweepSpec spec;
    LayerCliOptions options;
    options.weight_dtype = "f32,BF16,int8,bf16";
    apply_layer_options(options, std::nullopt, spec);
    CHECK(spec.blocks == std::vector<BlockKind>{BlockKind::attention});
    CHECK(spec.weight_dtypes == std::vector<WeightDtype>{WeightDtype::f32, WeightDtype::bf16, WeightDtype::int8});
}

TEST_CASE("a model's layer is the default: its block, MLP width, window and experts, each overridable") {
    SweepSpec spec;
    apply_layer_options({}, preset_config("mistral-7b"), spec);
    CHECK(spec.blocks == std::vector<BlockKind>{BlockKind::full});
    CHECK(spec.ffn_dim == std::vector<std::size_t>{14336});
    CHECK(spec.window == 4096);
    CHECK(spec.window_layers == "all");

    SweepSpec attention;
    LayerCliOptions attn;
    attn.block = "attn";
    apply_layer_options(attn, preset_config("mixtral-8x7b"), attention);
    CHECK(attention.blocks == std::vector<BlockKind>{BlockKind::attention});
    // The attention block of a model of experts carries no experts: its points validate.
    attention.dim = {64};
    attention.heads = {4};
    attention.kv_heads = {2};
    attention.seq = {16};
    const Grid grid = expand(attention);
    REQUIRE(!grid.points.empty());
    CHECK_FALSE(grid.points.front().config.has_experts());

    SweepSpec moe;
    LayerCliOptions fewer;
    fewer.experts_active = "1";
    apply_layer_options(fewer, preset_config("mixtral-8x7b"), moe);
    CHECK(moe.base.moe.n_experts == 8);
    CHECK(moe.base.moe.n_active == 1);
}

TEST_CASE("the layer options refuse what has no full layer to go in, naming the option") {
    SweepSpec spec;
    LayerCliOptions ffn;
    ffn.ffn_dim = "4096";
    CHECK_THROWS_WITH_AS(apply_layer_options(ffn, std::nullopt, spec),
                         doctest::Contains("--ffn-dim 4096"), ConfigError);
    LayerCliOptions bare_full;
    bare_full.block = "full";
    SweepSpec fresh;
    CHECK_THROWS_WITH_AS(apply_layer_options(bare_full, std::nullopt, fresh), doctest::Contains("--ffn-dim"),
                         ConfigError);
    LayerCliOptions int4;
    int4.weight_dtype = "int4";
    CHECK_THROWS_WITH_AS(apply_layer_options(int4, std::nullopt, spec), doctest::Contains("--weight-dtype int4"),
                         ConfigError);
}

TEST_CASE("--shared-prefix reads positions and whole percentages of N, and refuses the rest naming itself") {
    CHECK(parse_shared_prefixes("0,2048,50%") ==
          std::vector<SharedPrefixLength>{{0, false}, {2048, false}, {50, true}});
    CHECK(SharedPrefixLength{50, true}.positions_at(4097) == 2048);
    CHECK_THROWS_WITH_AS(parse_shared_prefixes("100%"), doctest::Contains("--shared-prefix"), ConfigError);
    CHECK_THROWS_WITH_AS(parse_shared_prefixes("half"), doctest::Contains("--shared-prefix"), ConfigError);
    CHECK_THROWS_AS(parse_shared_prefixes("0,"), ConfigError);
}

TEST_CASE("a model's RoPE base reaches every point of its grid, and a model without one takes 10000") {
    for (const auto& [name, theta] : {std::pair{"llama-3.2-1b", 500000.0}, std::pair{"qwen3-8b", 1000000.0},
                                      std::pair{"gpt2", default_rope_theta}}) {
        CAPTURE(name);
        SweepSpec spec;
        apply_layer_options({}, preset_config(name), spec);
        spec.dim = {64};
        spec.heads = {4};
        spec.kv_heads = {2};
        spec.seq = {16};
        spec.ffn_dim = {96};
        const Grid grid = expand(spec);
        REQUIRE(!grid.points.empty());
        for (const auto& point : grid.points) CHECK(point.config.rope_theta == theta);
    }
}
