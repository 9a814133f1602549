// Multi-token queries on sliding-window layers and with latent attention (docs/model.md,
// "Multi-token queries"): a window layer's ring of W + Q - 1, the one pass against one
// attend_decode per token and the naive twin, the step against the uncached forward, the counts
// by hand, and planted faults that --check and the equivalence catch.
#include "kvbench/engine/cost_model.hpp"
#include "kvbench/engine/decoder.hpp"
#include "kvbench/engine/kernel_check.hpp"
#include "kvbench/engine/reference.hpp"

#include "kernel_check_support.hpp"
#include "latent_configs.hpp"
#include "multi_token_support.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

using namespace kvbench;
using kvbench::test::check_fault_is_caught;
using kvbench::test::check_step_equals_forward;
using kvbench::test::full_latent_config;
using kvbench::test::latent_config;
using kvbench::test::make_config;
using kvbench::test::paged_cache;
using kvbench::test::ragged_batch;
using kvbench::test::random_vector;
using kvbench::test::spec_tolerance;
using kvbench::test::test_threads;

// A namespace of its own: the unity build puts this file beside test_multi_token.cpp and
// test_latent.cpp, whose helpers of the same names lookup then stops short of.
namespace multi_token_windows {
namespace {

// A fault of a window layer's one pass: every token's window one position wider, which a ring
// of W + Q - 1 (Q >= 2) holds, so nothing but the count of positions is wrong.
FlopCount attend_tokens_window_one_wider(const ModelConfig& config, const float* q, std::size_t q_stride,
                                         const KvCache& cache, std::size_t layer, std::size_t n_ctx, float* out,
                                         DecodeAttentionScratch& scratch, const float* sinks) {
    ModelConfig wider = config;
    for (std::uint32_t& window : wider.layer_windows) window += window != 0 ? 1 : 0;
    return attend_each_token(&attend_decode, wider, q, q_stride, cache, layer, n_ctx, out, scratch, sinks);
}
constexpr StepKernels window_one_wider{.linear = &linear,
                                       .attend_decode = &attend_decode,
                                       .attend_causal = &attend_causal,
                                       .attend_decode_tokens = &attend_tokens_window_one_wider};

// config with Q tokens a step and window W on the layers `pattern` marks L (0: none).
ModelConfig with_windows(ModelConfig config, std::uint32_t window, const std::string& pattern, std::size_t n_tokens) {
    config.layer_windows = layer_windows_for(window, pattern, config.n_layers);
    config.n_query_tokens = n_tokens;
    validate(config);
    return config;
}

double tolerance_for(const ModelConfig& config) {
    return config.key_dtype() == KvDtype::int8 ? kernel_check_tolerance : 1e-5;
}


}  // namespace

TEST_CASE("a window layer's ring holds W + Q - 1 positions and takes back one step of Q") {
    const ModelConfig config = with_windows(make_config(1, 40, 32, 4, 2, 2), 8, "LG", 3);
    KvCache cache(config, config.seq_len);
    CHECK(cache.capacity(0) == 10);  // W + Q - 1
    CHECK(cache.capacity(1) == 40);
    CHECK(KvCache::bytes_for(config, 40) == (10 + 40) * 2 * 2 * 8 * sizeof(float));
    CHECK(kv_cache_bytes(config) == KvCache::bytes_for(config, 40));
    // A window wider than the context, less Q - 1, keeps the whole context.
    CHECK(KvCache(with_windows(make_config(1, 40, 32, 4, 2, 1), 39, "all", 3), 40).capacity(0) == 40);
    CHECK(DecodeScratch::bytes_for(config, 40, 2) == DecodeScratch(config, 40, 2).bytes());
    const ModelConfig latent = with_windows(latent_config(2, 40, 2), 8, "LG", 4);
    CHECK(DecodeScratch::bytes_for(latent, 40, 2) == DecodeScratch(latent, 40, 2).bytes());
    CHECK(KvCache(latent, 40).capacity(0) == 11);
    fill_cache_seeded(config, cache, 30, 5);
    cache.roll_back(27);  // one step of Q = 3
    cache.extend_to(30);
    CHECK_THROWS_AS(cache.roll_back(26), std::out_of_range);  // Q + 1: a position token 0 sees is gone
}

TEST_CASE("multi-token attention on window layers in one pass equals one attend_decode per token and its naive twin") {
    const std::vector<std::pair<KvDtype, KvDtype>> types{
        {KvDtype::f32, KvDtype::f32}, {KvDtype::f16, KvDtype::f16}, {KvDtype::int8, KvDtype::int8},
        {KvDtype::q8_0, KvDtype::q4_0}};
    // Windows shorter than, equal to and longer than N, and Q > W; groupings, ragged and paged.
    const std::vector<ModelConfig> layouts{make_config(2, 40, 64, 4, 4, 2),   make_config(2, 37, 80, 4, 2, 2),
                                           make_config(1, 70, 128, 16, 1, 2), ragged_batch(make_config(1, 1, 64, 4, 2, 2), {45, 9, 23}),
                                           paged_cache(make_config(2, 50, 64, 4, 2, 2), 16),
                                           paged_cache(ragged_batch(make_config(1, 1, 64, 4, 1, 2), {33, 12}), 4)};
    for (const ModelConfig& layout : layouts) {
        for (const std::uint32_t window : {5u, 16u, static_cast<std::uint32_t>(layout.seq_len), 100u}) {
            for (const std::size_t n_tokens : {2u, 3u, 8u}) {
                for (const auto& [key_dtype, value_dtype] : types) {
                    ModelConfig config = layout;
                    config.kv_dtype = key_dtype;
                    if (value_dtype != key_dtype) config.v_dtype = value_dtype;
                    config = with_windows(config, window, "LG", n_tokens);
                    KvCache cache(config, config.seq_len);
                    fill_cache_seeded(config, cache, config.seq_len, 7);
                    const std::size_t q_stride = config.q_dim() + 3;
                    const std::size_t n_rows = n_tokens * config.n_batch;
                    const std::vector<float> q = random_vector(n_rows * q_stride, 8);
                    const std::vector<float> sinks = random_vector(config.n_heads, 9, 2.0f);
                    std::vector<float> one(n_rows * config.q_dim()), each(one.size()), naive(one.size());
                    for (const std::size_t n_threads : {1u, 8u}) {
                        for (const std::size_t layer : {0u, 1u}) {  // the window layer, then the global one
                            const float* sink = n_threads == 8 ? sinks.data() : nullptr;
                            CAPTURE(describe(config));
                            CAPTURE(n_threads);
                            CAPTURE(layer);
                            DecodeAttentionScratch scratch(config, config.seq_len, n_threads);
                            const std::size_t n_ctx = config.seq_len;
                            const FlopCount one_flops = attend_decode_tokens(config, q.data(), q_stride, cache, layer,
                                                                             n_ctx, one.data(), scratch, sink);
                            const FlopCount each_flops = attend_each_token(&attend_decode, config, q.data(), q_stride,
                                                                           cache, layer, n_ctx, each.data(), scratch, sink);
                            const FlopCount naive_flops = attend_decode_tokens_naive(
                                config, q.data(), q_stride, cache, layer, n_ctx, naive.data(), scratch, sink);
                            CHECK(relative_error(one, naive) < tolerance_for(config));
                            CHECK(relative_error(each, naive) < tolerance_for(config));
                            CHECK(one_flops.useful == naive_flops.useful);
                            CHECK(each_flops.useful == naive_flops.useful);
                        }
                    }
                }
            }
        }
    }
}

TEST_CASE("a multi-token step with windows equals the forward's last Q rows and the per-token step") {
    ModelConfig full = make_config(2, 30, 32, 4, 2, 3);
    full.block = BlockKind::full;
    full.ffn_dim = 48;
    for (const std::size_t n_tokens : {1u, 2u, 5u, 12u}) {
        // W < N, W = N, W > N and (with Q = 12) Q > W; the patterns of Gemma 2 and 3 in short.
        for (const std::uint32_t window : {8u, 30u, 64u}) {
            check_step_equals_forward(with_windows(make_config(3, 30, 32, 4, 4, 2), window, "LG", n_tokens));
            check_step_equals_forward(with_windows(full, window, "LLG", n_tokens));
        }
        check_step_equals_forward(with_windows(make_config(1, 33, 64, 8, 1, 1), 6, "all", n_tokens));
        check_step_equals_forward(
            with_windows(ragged_batch(make_config(1, 1, 32, 4, 1, 2), {13, 30, 21}), 7, "LG", n_tokens));
        check_step_equals_forward(with_windows(paged_cache(make_config(2, 40, 32, 4, 2, 2), 4), 9, "LG", n_tokens));
        ModelConfig reduced = with_windows(make_config(2, 30, 32, 4, 2, 2), 8, "LG", n_tokens);
        reduced.kv_dtype = KvDtype::q8_0;
        check_step_equals_forward(reduced);
    }
}

TEST_CASE("a latent multi-token step equals the forward's last Q rows and the per-token step") {
    for (const std::size_t n_tokens : {2u, 3u, 8u}) {
        check_step_equals_forward(with_windows(latent_config(2, 21, 2), 0, "all", n_tokens));
        check_step_equals_forward(with_windows(full_latent_config(2, 17, 2), 0, "all", n_tokens));
        check_step_equals_forward(with_windows(latent_config(1, 30, 2), 6, "LG", n_tokens));
        ModelConfig reduced = with_windows(latent_config(2, 21, 1), 0, "all", n_tokens);
        reduced.kv_dtype = KvDtype::f16;
        check_step_equals_forward(reduced);
    }
}

TEST_CASE("--check holds multi-token attention on windows and latent attention to its naive twin") {
    const std::vector<ModelConfig> configs{
        with_windows(make_config(2, 40, 64, 4, 2, 2), 8, "LG", 3),
        with_windows(make_config(2, 40, 64, 4, 2, 2), 4, "all", 9),
        with_windows(ragged_batch(make_config(1, 1, 64, 4, 2, 2), {40, 17}), 8, "LG", 4),
        with_windows(paged_cache(make_config(2, 40, 64, 4, 2, 2), 4), 8, "LG", 5),
        with_windows(latent_config(2, 30, 2), 0, "all", 4),
        with_windows(full_latent_config(1, 30, 2), 0, "all", 3),
        with_windows(latent_config(1, 30, 2), 8, "LG", 3)};
    for (const ModelConfig& config : configs) {
        CAPTURE(describe(config));
        test::check_kernels_against_twins(config);
        const ModelWeights weights = make_weights(config, 9);
        const std::vector<float> step_in = make_step_inputs(config, 9);
        KvCache cache(config, config.seq_len);
        fill_cache_seeded(config, cache, config.seq_len - config.n_query_tokens, 9);
        const std::vector<KernelCheck> checks = check_kernels(config, weights, {step_in.data(), nullptr, &cache, 2});
        CHECK(std::any_of(checks.begin(), checks.end(), [](const KernelCheck& check) {
            return check.kernel.starts_with("attend_decode_tokens (");
        }));
    }
}

TEST_CASE("a window layer whose tokens see one position too many fails --check and the equivalence") {
    for (const ModelConfig& layout : {make_config(2, 24, 32, 4, 2, 2), ragged_batch(make_config(1, 1, 32, 4, 4, 2), {12, 30})}) {
        const ModelConfig config = with_windows(layout, 6, "LG", 3);
        CAPTURE(describe(config));
        check_fault_is_caught(config, 3, window_one_wider, 21);
    }
}

TEST_CASE("a multi-token step's counts on window layers and on latent attention, by hand") {
    // docs/counting.md, "Multi-token queries": B = 1, N = 10, Q = 3, D = 8, H = 2, G = 1, dh = 4,
    // L = 2 of pattern LG with W = 4, f32, P = 192. Layer 0's ring holds W + Q - 1 = 6 positions
    // and its tokens see 4 + 4 + 4; layer 1's holds 10 and its tokens see 8 + 9 + 10.
    const ModelConfig windows = with_windows(make_config(1, 10, 8, 2, 1, 2), 4, "LG", 3);
    CHECK(step_flops(windows, DecodePath::cached) == (2 * 3 * 192 + 4 * 2 * 4 * 12) + (2 * 3 * 192 + 4 * 2 * 4 * 27));
    CHECK(step_flops(windows, DecodePath::cached) == 3552);
    CHECK(kv_cache_bytes(windows) == (6 + 10) * 2 * 1 * 4 * 4);  // 512
    CHECK(step_bytes(windows, DecodePath::cached) == 2 * 192 * 4 + 512 + 2 * 2 * 3 * 1 * 8 * 4);  // 2432
    CHECK(kv_cache_bytes(with_windows(make_config(1, 10, 8, 2, 1, 2), 4, "LG", 1)) == (4 + 10) * 2 * 1 * 4 * 4);

    // Latent: B = 1, N = 6, Q = 2, D = 16, H = 2, r = 4, d_r = 2, d_n = 3, d_v = 5, no q_r, L = 1,
    // f32: P_mla = 160 + 96 + 24 + 40 + 160 = 480; the tokens see 5 + 6 = 11 positions, and the
    // step reads the latent cache of 6 positions of r + d_r once.
    ModelConfig latent = make_config(1, 6, 16, 2, 1, 1);
    latent.mla = {.kv_lora_rank = 4, .rope_dim = 2, .nope_dim = 3, .v_head_dim = 5, .q_lora_rank = 0};
    latent = with_windows(latent, 0, "all", 2);
    CHECK(step_flops(latent, DecodePath::cached) == 2 * 2 * 480 + 2 * 2 * (2 * 4 + 2) * 11);  // 2360
    CHECK(kv_cache_bytes(latent) == 6 * 6 * 4);                                                 // 144
    CHECK(step_bytes(latent, DecodePath::cached) == 480 * 4 + 144 + 2 * 2 * 1 * 16 * 4);        // 2320
}

TEST_CASE("a latent multi-token step whose token sees the next one fails --check and the equivalence") {
    check_fault_is_caught(with_windows(latent_config(2, 20, 1), 0, "all", 3), 3, kvbench::test::seeing_next, 23);
}

}  // namespace multi_token_windows
