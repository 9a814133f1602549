// A point's variant cell: every config field it names survives the text and back.
#include "kvbench/engine/config_variant.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace kvbench;
using kvbench::test::make_config;

namespace {

// The config `variant_of` wrote, read back onto a config with only the columns beside it.
ModelConfig round_trip(const ModelConfig& config) {
    ModelConfig read = make_config(config.n_batch, config.seq_len, config.model_dim, config.n_heads,
                                   config.n_kv_heads, config.n_layers);
    read.explicit_head_dim = config.explicit_head_dim;
    read.kv_dtype = config.kv_dtype;
    read.block = config.block;  // columns of their own
    read.ffn_dim = config.ffn_dim;
    read.weight_dtype = config.weight_dtype;
    apply_variant(read, variant_of(config));
    return read;
}

}  // namespace

TEST_CASE("the attention block and a dense full layer have an empty variant: their columns say the rest") {
    ModelConfig config = make_config(1, 8, 64, 4, 2, 2);
    CHECK(variant_of(config).empty());
    config.block = BlockKind::full;
    config.ffn_dim = 96;
    config.weight_dtype = WeightDtype::int8;
    CHECK(variant_of(config).empty());
}

TEST_CASE("every part of a variant reads back to the config that wrote it") {
    ModelConfig dense = make_config(1, 8, 64, 4, 2, 6);
    dense.layer_windows = {4, 4, 4, 4, 4, 0};  // Gemma 3's five local to one global
    CHECK(variant_of(dense) == "W=4:LLLLLG");
    CHECK(round_trip(dense) == dense);

    ModelConfig experts = make_config(1, 8, 64, 4, 2, 3);
    experts.block = BlockKind::full;
    experts.ffn_dim = 128;
    experts.moe = {.n_experts = 8, .n_active = 2, .n_shared = 1, .expert_dim = 32, .n_dense_layers = 1};
    experts.layer_windows = {4, 0, 8};  // windows of two widths: one per layer
    experts.attention_sinks = true;
    CHECK(variant_of(experts) == "E=8/2 S=1 Fe=32 dense=1 W=4/0/8 sinks");
    CHECK(round_trip(experts) == experts);

    ModelConfig latent = make_config(1, 8, 64, 4, 4, 2);
    latent.mla = {.kv_lora_rank = 32, .rope_dim = 8, .nope_dim = 16, .v_head_dim = 16, .q_lora_rank = 24};
    CHECK(variant_of(latent) == "mla r=32 dr=8 dn=16 dv=16 qr=24");
    CHECK(round_trip(latent) == latent);
}

TEST_CASE("a variant part that cannot be read is an error naming it") {
    ModelConfig config = make_config(1, 8, 64, 4, 2, 2);
    CHECK_THROWS_WITH_AS(apply_variant(config, "S=abc"), doctest::Contains("cannot read 'S=abc': not a whole number"),
                         ConfigError);
    CHECK_THROWS_WITH_AS(apply_variant(config, "E=8"), doctest::Contains("give E=<experts>/<active>"), ConfigError);
    CHECK_THROWS_WITH_AS(apply_variant(config, "turbo"), doctest::Contains("'turbo': not a part of a variant"),
                         ConfigError);
    CHECK_THROWS_AS(apply_variant(config, "W=4:LQ"), ConfigError);
}
