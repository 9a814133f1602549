// Latent attention (MLA): the absorbed cached step against the expanded uncached forward, the
// per-head products against their naive twins, and the counts against docs/counting.md.
#include "kvbench/engine/cost_model.hpp"
#include "kvbench/engine/decoder.hpp"
#include "kvbench/engine/kernel_check.hpp"
#include "kvbench/engine/latent_projections.hpp"
#include "kvbench/engine/layer_ops.hpp"
#include "kvbench/engine/linear.hpp"
#include "kvbench/engine/reference.hpp"
#include "kvbench/engine/rng.hpp"

#include "attention_flops.hpp"
#include "latent_configs.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

using namespace kvbench;
using kvbench::test::make_config;

namespace {

using kvbench::test::full_latent_config;
using kvbench::test::latent_config;
using kvbench::test::spec_tolerance;
using kvbench::test::test_threads;

struct LatentComparison {
    double rel_error = 0;
    double trace_error = 0;
    double mlp_trace_error = 0;  // a full layer's: what each layer's MLP or experts added
    std::size_t cached_experts_read = 0;
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
    std::vector<float> full_mlp_trace(mlp_trace_size(config));
    ForwardScratch full_scratch(config, test_threads);
    result.uncached_flops = forward_full(config, weights, inputs.data(), full_out.data(), full_scratch, nullptr, nullptr,
                                         {&fast_kernels, full_trace, full_mlp_trace});

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
    std::vector<float> step_mlp_trace(full_mlp_trace.size());
    DecodeScratch step_scratch(config, n, test_threads);
    result.cached_flops = decode_step(config, weights, cache, step_in.data(), step_out.data(), step_scratch,
                                      {&fast_kernels, step_trace, step_mlp_trace, &result.cached_experts_read});
    CHECK(cache.length() == n);
    result.rel_error = relative_error(step_out, gather_positions(full_out, config.n_batch, n, dim, n - 1, 1));
    result.trace_error = relative_error(step_trace, full_trace);
    if (!step_mlp_trace.empty()) result.mlp_trace_error = relative_error(step_mlp_trace, full_mlp_trace);
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
        // The two paths really took different routes (at N = 1 both head outputs are c·W_uv, exactly).
        if (config.seq_len > 1) CHECK(c.trace_error > 0);
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
        if (!config.layer_windows.empty()) continue;
        // Exactly, for every layer (docs/counting.md, "Latent attention (MLA)"), from the kernels'
        // documented padding: the cached step attends H query rows to one KV vector of r + d_r,
        // read as key and as value; the uncached forward attends heads of max(d_n + d_r, d_v).
        const std::uint64_t b = config.n_batch, h = config.n_heads, n = config.seq_len, layers = config.n_layers;
        const std::uint64_t r = config.mla.kv_lora_rank, d_r = config.mla.rope_dim;
        const std::uint64_t qk = config.mla.nope_dim + d_r, d_v = config.mla.v_head_dim;
        const ModelConfig decode_view = make_config(b, n, config.model_dim, h, 1, layers, r + d_r);
        const std::uint64_t cached_extra =
            test::expected_decode_executed(decode_view, 4 * b * h * (r + d_r) * n, n, test_threads) -
            2 * b * h * n * (2 * r + d_r);
        CHECK(c.cached_flops.executed == c.cached_flops.useful + layers * cached_extra);
        const std::uint64_t head_width = std::max(qk, d_v), pairs = n * (n + 1) / 2;
        const ModelConfig causal_view = make_config(b, n, config.model_dim, h, h, layers, head_width);
        const std::uint64_t uncached_extra = 4 * b * h * head_width * pairs - 2 * b * h * (qk + d_v) * pairs +
                                             test::causal_waste_flops(causal_view, CausalAttentionScratch::default_block_rows);
        CHECK(c.uncached_flops.executed == c.uncached_flops.useful + layers * uncached_extra);
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
    std::vector<float> rows(3 * (dims.nope_dim + dims.rank + dims.v_head_dim));
    CHECK(absorb_query(dims, q.data(), 3, wuk.data(), 0.5f, fast.data(), rows.data()) == 2 * 3 * 4 * 12 * 16);
    CHECK(absorb_query_naive(dims, q.data(), 3, wuk.data(), 0.5f, naive.data()) == 2 * 3 * 4 * 12 * 16);
    CHECK(relative_error(fast, naive) < 1e-5);
    // The RoPE part of a head's absorbed query is its q_rope, scaled.
    CHECK(fast[dims.latent_dim() + dims.rank] == 0.5f * q[dims.qk_dim() + dims.nope_dim]);

    std::vector<float> out(3 * dims.out_width()), naive_out(out.size());
    CHECK(unabsorb_output(dims, latent_out.data(), dims.latent_dim(), 3, wuv.data(), out.data(), rows.data()) ==
          2 * 3 * 4 * 16 * 12);
    unabsorb_output_naive(dims, latent_out.data(), dims.latent_dim(), 3, wuv.data(), naive_out.data());
    CHECK(relative_error(out, naive_out) < 1e-5);

    // The uncached keys: c·W_uk_h for every head, against the naive twin.
    std::vector<float> latent(3 * dims.rank), k_nope(3 * dims.n_heads * dims.nope_dim), naive_k_nope(k_nope.size());
    fill_uniform(rng, latent, 1.0f);
    CHECK(expand_keys(dims, latent.data(), 3, wuk.data(), k_nope.data(), nullptr) == 2 * 3 * 4 * 16 * 12);
    CHECK(expand_keys_naive(dims, latent.data(), 3, wuk.data(), naive_k_nope.data()) == 2 * 3 * 4 * 16 * 12);
    CHECK(relative_error(k_nope, naive_k_nope) < 1e-5);
    // Head 1's first key element is c · (column 0 of W_uk_1, rows [r, 2r) of wuk).
    double expected = 0;
    for (std::size_t j = 0; j < dims.rank; ++j) expected += double{latent[j]} * wuk[(dims.rank + j) * dims.nope_dim];
    CHECK(k_nope[dims.nope_dim] == doctest::Approx(expected).epsilon(1e-5));
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
                                            "expand_keys (128 rows)", "linear (128 rows, c·W_uv)",
                                            "attend_causal (150 positions, 6 rows sampled)"});
    CHECK(cache.length() == config.seq_len - 1);
}

TEST_CASE("a latent cache shares a prefix: one copy of its latents, the step equal to the forward and to its twins") {
    // DeepSeek served with prefix caching: the batch's first P latents cached once per layer,
    // the prefix pass scoring all B·H absorbed queries against them (docs/model.md, "Shared
    // prefixes"). By hand: B = 3, N = 40, P = 20, L = 2, r + d_r = 24 floats: (20 + 3·20)·2
    // latents of 96 bytes, against 3·40·2 unshared.
    ModelConfig attention_only = latent_config(3, 40, 2);
    attention_only.shared_prefix = 20;
    validate(attention_only);
    ModelConfig unshared = attention_only;
    unshared.shared_prefix = 0;
    CHECK(kv_cache_bytes(attention_only) == 160 * 96);
    CHECK(kv_cache_bytes(unshared) == 240 * 96);
    CHECK(KvCache(attention_only, 40).bytes() == kv_cache_bytes(attention_only));
    CHECK(step_flops(attention_only, DecodePath::cached) == step_flops(unshared, DecodePath::cached));
    CHECK(step_bytes(unshared, DecodePath::cached) - step_bytes(attention_only, DecodePath::cached) == 80 * 96);
    ModelConfig whole_layer = full_latent_config(3, 17, 2);
    whole_layer.shared_prefix = 8;
    validate(whole_layer);
    for (const ModelConfig& config : {attention_only, whole_layer}) {
        INFO(describe(config));
        const LatentComparison c = compare_paths(config, 17);
        CHECK(c.rel_error < spec_tolerance);
        CHECK(c.trace_error < spec_tolerance);
        CHECK(c.trace_error > 0);
        CHECK(c.cached_flops.useful == step_flops(config, DecodePath::cached));
    }
    // --check's twins on a cache filled through the prefix: the absorbed queries of every
    // sequence against one copy of it.
    ModelConfig checked = latent_config(2, 150, 2);
    checked.shared_prefix = 75;
    validate(checked);
    const ModelWeights weights = make_weights(checked, 6);
    const auto inputs = make_inputs(checked, 6);
    const auto step_in = gather_positions(inputs, 2, 150, checked.model_dim, 149, 1);
    KvCache cache(checked, checked.seq_len);
    fill_cache_seeded(checked, cache, checked.seq_len - 1, 6);
    // The seeded fill reaches every position of every row, the prefix's and each row's own.
    std::vector<float> latent(cache.head_dim());
    std::size_t empty = 0;
    for (std::size_t b = 0; b < 2; ++b) {
        for (std::size_t t = 0; t < checked.seq_len - 1; ++t) {
            cache.load_key(1, b, 0, t, latent.data());
            if (std::all_of(latent.begin(), latent.end(), [](float x) { return x == 0.0f; })) ++empty;
        }
    }
    CHECK(empty == 0);
    for (const KernelCheck& check : check_kernels(checked, weights, {step_in.data(), inputs.data(), &cache, test_threads})) {
        INFO(check.kernel);
        CHECK(check.rel_error < kernel_check_tolerance);
    }
}

TEST_CASE("a latent config is measurable, and one with sinks is refused by name") {
    ModelConfig config = latent_config(1, 8, 1);
    CHECK_NOTHROW(require_measurable(config));
    CHECK_NOTHROW(require_measurable(full_latent_config(1, 8, 2)));
    config.attention_sinks = true;
    CHECK_THROWS_WITH_AS(require_measurable(config), doctest::Contains("--sinks with --kv-lora-rank"), ConfigError);
}

TEST_CASE("DeepSeek's whole layer around latent attention: the cached step equals the uncached forward") {
    std::vector<ModelConfig> configs;
    for (std::size_t n_batch : {1u, 3u}) {
        for (std::size_t seq_len : {1u, 17u, 70u}) configs.push_back(full_latent_config(n_batch, seq_len, 2));
    }
    ModelConfig dense = full_latent_config(2, 9, 2);  // q straight from x, a dense MLP on every layer
    dense.mla.q_lora_rank = 0;
    dense.moe = {};
    configs.push_back(dense);
    for (const WeightDtype dtype : {WeightDtype::bf16, WeightDtype::f16, WeightDtype::int8}) {
        ModelConfig typed = full_latent_config(3, 12, 2);
        typed.weight_dtype = dtype;
        configs.push_back(typed);
    }
    for (const ModelConfig& config : configs) {
        INFO(describe(config));
        validate(config);
        const LatentComparison c = compare_paths(config, 13);
        CHECK(c.rel_error < spec_tolerance);
        CHECK(c.trace_error < spec_tolerance);
        CHECK(c.mlp_trace_error < spec_tolerance);
        if (config.seq_len > 1) {  // the paths really took different routes
            CHECK(c.trace_error > 0);
            CHECK(c.mlp_trace_error > 0);
        }
        if (config.has_experts()) {
            CHECK(c.cached_experts_read >= config.moe.n_active);  // the second layer's experts
            CHECK(c.cached_experts_read <= std::min<std::size_t>(5, 2 * config.n_batch));
        }
    }
}

TEST_CASE("the full latent layer's norms and RoPE change its output, and its cache holds them") {
    // Without its own norms and RoPE the same weights give another step: the layer really runs them.
    const ModelConfig config = full_latent_config(1, 6, 1);
    const ModelWeights weights = make_weights(config, 4);
    REQUIRE(weights.layers[0].latent.kv_norm.size() == 16);
    REQUIRE(weights.layers[0].latent.q_norm.size() == 10);
    const auto inputs = make_inputs(config, 4);
    KvCache cache(config, config.seq_len);
    ForwardScratch scratch(config, test_threads);
    std::vector<float> out(inputs.size());
    forward_full(config, weights, inputs.data(), out.data(), scratch, &cache);
    // Position 0 is not turned by RoPE; its cached c is normalised: mean square 1 before the gains.
    std::vector<float> cached(24);
    cache.load_key(0, 0, 0, 0, cached.data());
    double mean_square = 0;
    for (std::size_t i = 0; i < 16; ++i) {
        const double unscaled = cached[i] / weights.layers[0].latent.kv_norm[i];
        mean_square += unscaled * unscaled / 16;
    }
    CHECK(mean_square == doctest::Approx(1.0).epsilon(1e-3));
    // Position 5's k_rope is turned: it differs from x·W_kr of that position.
    const LatentDims d(config);
    std::vector<float> normed(config.model_dim), projected(d.latent_dim());
    rmsnorm_naive(inputs.data() + 5 * config.model_dim, 1, config.model_dim, weights.layers[0].attention_norm.data(),
                  normed.data());
    linear_naive(normed.data(), 1, config.model_dim, weights.layers[0].latent.wkv_down.view(), d.latent_dim(), 0.0f,
                 projected.data());
    cache.load_key(0, 0, 0, 5, cached.data());
    double rope_norm = 0, projected_norm = 0;
    bool turned = false;
    for (std::size_t i = d.rank; i < d.latent_dim(); ++i) {
        rope_norm += double{cached[i]} * cached[i];
        projected_norm += double{projected[i]} * projected[i];
        turned |= std::abs(cached[i] - projected[i]) > 1e-3f;
    }
    CHECK(turned);
    CHECK(rope_norm == doctest::Approx(projected_norm).epsilon(1e-4));  // a rotation keeps the length
}

TEST_CASE("the full latent layer counts the FLOPs of docs/counting.md, and its weights are the bytes it counts") {
    for (const ModelConfig& config : {full_latent_config(1, 5, 2), full_latent_config(3, 20, 2)}) {
        INFO(describe(config));
        const LatentComparison c = compare_paths(config, 3);
        CHECK(c.cached_flops.useful == step_flops(config, DecodePath::cached));
        CHECK(c.uncached_flops.useful == step_flops(config, DecodePath::uncached));
        // Every dense weight once, the experts read once each.
        CHECK(step_bytes(config, DecodePath::cached, c.cached_experts_read) ==
              kv_cache_bytes(config) + 2 * 2 * config.n_batch * config.model_dim * 4 +
                  ModelWeights::bytes_for(config) - (5 - c.cached_experts_read) * 3 * 32 * 24 * 4);
    }
    for (const WeightDtype dtype : {WeightDtype::f32, WeightDtype::bf16, WeightDtype::int8}) {
        ModelConfig config = full_latent_config(1, 4, 2);
        config.weight_dtype = dtype;
        CHECK(make_weights(config, 1).bytes() == ModelWeights::bytes_for(config));
    }
}

TEST_CASE("check_kernels holds the full latent layer's norms, RoPE and experts to their naive twins") {
    ModelConfig config = full_latent_config(2, 40, 2);
    config.moe.n_dense_layers = 0;  // layer 0's experts
    config.ffn_dim = 0;
    config.weight_dtype = WeightDtype::bf16;
    validate(config);
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
    CHECK(names == std::vector<std::string>{"rmsnorm", "linear (2 rows, q down)", "linear (2 rows, q up)",
                                            "linear (2 rows, KV down)", "rope (latent)", "absorb_query",
                                            "attend_decode (latent)", "unabsorb_output",
                                            "linear (2 rows, output projection)", "silu_gate", "experts (3 of 5 read)",
                                            "expand_keys (40 rows)", "linear (40 rows, c·W_uv)",
                                            "attend_causal (40 positions, 2 rows sampled)"});

    // A planted fault in the rope kernel shows in its check.
    StepKernels faulty = fast_kernels;
    faulty.rope = [](const ModelConfig& c, float* qkv, std::size_t n_rows, std::size_t seq_len, std::size_t first_pos) {
        apply_rope(c, qkv, n_rows, seq_len, first_pos + 1);
    };
    double rope_error = 0;
    for (const KernelCheck& check : check_kernels(config, weights, {step_in.data(), nullptr, &cache, test_threads}, faulty)) {
        if (check.kernel == "rope (latent)") rope_error = check.rel_error;
    }
    CHECK(rope_error > kernel_check_tolerance);
}
