// Latent attention (MLA): the absorbed cached step against the expanded uncached forward, the
// per-head products against their naive twins, and the counts against docs/counting.md.
#include "kvbench/engine/cost_model.hpp"
#include "kvbench/engine/decoder.hpp"
#include "kvbench/engine/kernel_check.hpp"
#include "kvbench/engine/latent_projections.hpp"
#include "kvbench/engine/reference.hpp"
#include "kvbench/engine/rng.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <vector>

using namespace kvbench;
using kvbench::test::make_config;

namespace {

using kvbench::test::spec_tolerance;
using kvbench::test::test_threads;

// H = 4 heads of r = 16, d_r = 8, d_n = 12, d_v = 12 on D = 32: small, and no width a multiple
// of another, so a head or stride mixed up shows.
ModelConfig latent_config(std::size_t n_batch, std::size_t seq_len, std::size_t n_layers) {
    ModelConfig config = make_config(n_batch, seq_len, 32, 4, 1, n_layers);
    config.mla = {.kv_lora_rank = 16, .rope_dim = 8, .nope_dim = 12, .v_head_dim = 12, .q_lora_rank = 0};
    return config;
}

struct LatentComparison {
    double rel_error = 0;
    double trace_error = 0;
    FlopCount cached_flops;
    FlopCount uncached_flops;
};

// docs/model.md's equivalence: prefill N-1 tokens through the uncached forward into the latent
// cache, one cached step for token N, against row N of the uncached forward; and each layer's
// attention output (the trace), which the residual stream would hide.
LatentComparison compare_paths(const ModelConfig& config, std::uint64_t seed) {
    const ModelWeights weights = make_weights(config, seed);
    const std::vector<float> inputs = make_inputs(config, seed);
    const std::size_t n = config.seq_len, dim = config.model_dim;
    LatentComparison result;

    std::vector<float> full_out(inputs.size());
    std::vector<float> full_trace(attention_trace_size(config));
    ForwardScratch full_scratch(config, test_threads);
    result.uncached_flops =
        forward_full(config, weights, inputs.data(), full_out.data(), full_scratch, nullptr, nullptr, {&fast_kernels, full_trace});

    KvCache cache(config, n);
    if (n > 1) {
        ModelConfig prefix = config;
        prefix.seq_len = n - 1;
        const auto prefix_inputs = gather_positions(inputs, config.n_batch, n, dim, 0, n - 1);
        std::vector<float> prefix_out(prefix_inputs.size());
        ForwardScratch prefix_scratch(prefix, test_threads);
        forward_full(prefix, weights, prefix_inputs.data(), prefix_out.data(), prefix_scratch, &cache);
    }
    REQUIRE(cache.length() == n - 1);
    const auto step_in = gather_positions(inputs, config.n_batch, n, dim, n - 1, 1);
    std::vector<float> step_out(step_in.size());
    std::vector<float> step_trace(full_trace.size());
    DecodeScratch step_scratch(config, n, test_threads);
    result.cached_flops =
        decode_step(config, weights, cache, step_in.data(), step_out.data(), step_scratch, {&fast_kernels, step_trace});
    CHECK(cache.length() == n);
    result.rel_error = relative_error(step_out, gather_positions(full_out, config.n_batch, n, dim, n - 1, 1));
    result.trace_error = relative_error(step_trace, full_trace);
    return result;
}

}  // namespace

TEST_CASE("the absorbed cached step equals the expanded uncached forward") {
    std::vector<ModelConfig> configs;
    for (std::size_t n_batch : {1u, 3u}) {
        for (std::size_t seq_len : {1u, 2u, 17u, 70u}) configs.push_back(latent_config(n_batch, seq_len, 2));
    }
    ModelConfig through_q_lora = latent_config(2, 33, 2);
    through_q_lora.mla.q_lora_rank = 10;
    configs.push_back(through_q_lora);
    // Values wider than the query-key heads: the keys are the ones padded in the uncached path.
    ModelConfig wide_values = latent_config(1, 20, 1);
    wide_values.mla.v_head_dim = 24;
    configs.push_back(wide_values);
    // A sliding window on every other layer: the latent cache's ring.
    ModelConfig windowed = latent_config(2, 40, 2);
    windowed.layer_windows = {16, 0};
    configs.push_back(windowed);
    for (const ModelConfig& config : configs) {
        INFO(describe(config));
        validate(config);
        const LatentComparison c = compare_paths(config, 11);
        CHECK(c.rel_error < spec_tolerance);
        CHECK(c.trace_error < spec_tolerance);
        CHECK(c.trace_error > 0);  // the two paths really took different routes
    }
}

TEST_CASE("the latent paths count the FLOPs of docs/counting.md, and execute no fewer") {
    ModelConfig with_q_lora = latent_config(2, 33, 2);
    with_q_lora.mla.q_lora_rank = 10;
    ModelConfig windowed = latent_config(1, 40, 2);
    windowed.layer_windows = {16, 0};
    for (const ModelConfig& config : {latent_config(1, 5, 1), latent_config(3, 70, 2), with_q_lora, windowed}) {
        INFO(describe(config));
        const LatentComparison c = compare_paths(config, 3);
        CHECK(c.cached_flops.useful == step_flops(config, DecodePath::cached));
        CHECK(c.uncached_flops.useful == step_flops(config, DecodePath::uncached));
        CHECK(c.cached_flops.executed > c.cached_flops.useful);      // the d_r values carried through p·V
        CHECK(c.uncached_flops.executed > c.uncached_flops.useful);  // zero padding, diagonal blocks
    }
}

TEST_CASE("the latent cache holds r + d_r per position and layer, whatever the heads") {
    ModelConfig config = latent_config(2, 10, 3);
    config.n_kv_heads = 4;  // the MHA the latent replaces: no part of its cache
    const KvCache cache(config, config.seq_len);
    CHECK(cache.values_in_keys());
    CHECK(cache.head_dim() == 24);
    CHECK(cache.bytes() == kv_cache_bytes(config));
    CHECK(cache.bytes() == 2 * 10 * 3 * 24 * 4);
    CHECK(make_weights(config, 1).bytes() == ModelWeights::bytes_for(config));
    CHECK(ModelWeights::bytes_for(config) == 3 * weights_per_layer(config) * 4);
}

TEST_CASE("absorb_query and unabsorb_output agree with their naive twins") {
    ModelConfig config = latent_config(3, 1, 1);
    const LatentDims dims(config);
    Rng rng(5);
    std::vector<float> q(3 * dims.q_width()), wuk(dims.n_heads * dims.nope_dim * dims.rank),
        wuv(dims.out_width() * dims.rank), latent_out(3 * dims.n_heads * dims.latent_dim());
    for (std::vector<float>* values : {&q, &wuk, &wuv, &latent_out}) fill_uniform(rng, *values, 1.0f);

    std::vector<float> fast(3 * dims.n_heads * dims.latent_dim()), naive(fast.size());
    CHECK(absorb_query(dims, q.data(), 3, wuk.data(), 0.5f, fast.data()) == 2 * 3 * 4 * 12 * 16);
    CHECK(absorb_query_naive(dims, q.data(), 3, wuk.data(), 0.5f, naive.data()) == 2 * 3 * 4 * 12 * 16);
    CHECK(relative_error(fast, naive) < 1e-5);
    // The RoPE part of a head's absorbed query is its q_rope, scaled.
    CHECK(fast[dims.latent_dim() + dims.rank] == 0.5f * q[dims.qk_dim() + dims.nope_dim]);

    std::vector<float> out(3 * dims.out_width()), naive_out(out.size());
    CHECK(unabsorb_output(dims, latent_out.data(), dims.latent_dim(), 3, wuv.data(), out.data()) == 2 * 3 * 4 * 16 * 12);
    unabsorb_output_naive(dims, latent_out.data(), dims.latent_dim(), 3, wuv.data(), naive_out.data());
    CHECK(relative_error(out, naive_out) < 1e-5);
}

TEST_CASE("check_kernels holds every latent kernel to its naive twin") {
    ModelConfig config = latent_config(2, 150, 2);
    config.mla.q_lora_rank = 10;
    const ModelWeights weights = make_weights(config, 6);
    const auto inputs = make_inputs(config, 6);
    const auto step_in = gather_positions(inputs, config.n_batch, config.seq_len, config.model_dim, config.seq_len - 1, 1);
    KvCache cache(config, config.seq_len);
    fill_cache_seeded(config, cache, config.seq_len - 1, 6);
    const auto checks = check_kernels(config, weights, {step_in.data(), inputs.data(), &cache, test_threads});
    std::vector<std::string> names;
    for (const KernelCheck& check : checks) {
        INFO(check.kernel);
        names.push_back(check.kernel);
        CHECK(check.rel_error < kernel_check_tolerance);
    }
    CHECK(names == std::vector<std::string>{"linear (2 rows, q down)", "linear (2 rows, q up)",
                                            "linear (2 rows, KV down)", "absorb_query", "attend_decode (latent)",
                                            "unabsorb_output", "linear (2 rows, output projection)",
                                            "linear (128 rows, c·W_uk)", "linear (128 rows, c·W_uv)",
                                            "attend_causal (150 positions, 6 rows sampled)"});
    CHECK(cache.length() == config.seq_len - 1);
}

TEST_CASE("a latent config is measurable, and one with sinks is refused by name") {
    ModelConfig config = latent_config(1, 8, 1);
    CHECK_NOTHROW(require_measurable(config));
    config.attention_sinks = true;
    CHECK_THROWS_WITH_AS(require_measurable(config), doctest::Contains("--sinks with --kv-lora-rank"), ConfigError);
}
