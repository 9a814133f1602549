// Sliding-window layers (docs/model.md, "Sliding windows"): the ring cache, the masks of both
// paths against their naive twins, and the cached step against the uncached forward.
#include "kvbench/engine/attention.hpp"
#include "kvbench/engine/causal_attention.hpp"
#include "kvbench/engine/cost_model.hpp"
#include "kvbench/engine/decoder.hpp"
#include "kvbench/engine/kernel_check.hpp"
#include "kvbench/engine/kv_cache.hpp"
#include "kvbench/engine/reference.hpp"
#include "kvbench/engine/weights.hpp"
#include "kvbench/measure/equivalence.hpp"

#include "paths_agree.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

using namespace kvbench;
using kvbench::test::check_paths_agree;
using kvbench::test::make_config;
using kvbench::test::random_vector;

namespace {

using kvbench::test::test_threads;

ModelConfig windowed(ModelConfig config, std::vector<std::uint32_t> windows) {
    config.layer_windows = std::move(windows);
    validate(config);
    return config;
}

// Writes positions [0, n) of layer 0 with keys and values that name their position: element d of
// position t's key is t + d / 100, its value the negative.
void store_named_positions(KvCache& cache, std::size_t n, std::size_t head_dim) {
    std::vector<float> key(head_dim), value(head_dim);
    for (std::size_t t = 0; t < n; ++t) {
        for (std::size_t d = 0; d < head_dim; ++d) {
            key[d] = static_cast<float>(t) + static_cast<float>(d) / 100.0f;
            value[d] = -key[d];
        }
        cache.store(0, 0, 0, t, key.data(), value.data());
    }
    cache.extend_to(n);
}

}  // namespace

TEST_CASE("a window layer's cache is a ring of its window's positions, a global layer's holds them all") {
    const ModelConfig config = windowed(make_config(1, 10, 16, 4, 1, 2), {3, 0});  // dh = 4
    KvCache cache(config, 10);
    CHECK(cache.capacity(0) == 3);
    CHECK(cache.capacity(1) == 10);
    // Hand count: (3 + 10) positions · 1 row · 1 KV head · 4 floats, K and V.
    CHECK(cache.bytes() == (3 + 10) * 4 * 4 * 2);
    CHECK(KvCache::bytes_for(config, 10) == cache.bytes());

    store_named_positions(cache, 10, 4);
    std::vector<float> key(4), value(4);
    for (std::size_t t = 7; t < 10; ++t) {
        cache.load_key(0, 0, 0, t, key.data());
        cache.load_value(0, 0, 0, t, value.data());
        CHECK(key[1] == doctest::Approx(static_cast<float>(t) + 0.01f));
        CHECK(value[3] == doctest::Approx(-static_cast<float>(t) - 0.03f));
    }
    // The ring's slots hold positions 9, 7, 8: slot t % 3.
    CHECK(cache.keys(0, 0, 0)[0] == 9.0f);
    CHECK(cache.keys(0, 0, 0)[4] == 7.0f);
    CHECK(cache.keys(0, 0, 0)[8] == 8.0f);
}

TEST_CASE("a wrapped ring rolls back one position or to 0, never further back") {
    const ModelConfig config = windowed(make_config(1, 10, 16, 4, 1, 1), {3});
    KvCache cache(config, 10);
    cache.extend_to(2);
    CHECK_NOTHROW(cache.roll_back(0));  // not wrapped: any length
    cache.extend_to(8);
    CHECK_THROWS_AS(cache.roll_back(6), std::out_of_range);
    CHECK(cache.length() == 8);
    CHECK_NOTHROW(cache.roll_back(7));
    CHECK_NOTHROW(cache.roll_back(0));
}

TEST_CASE("attend_decode over a window reads the last W positions of a wrapped ring, as its naive twin does") {
    // GQA, two batch rows, 2 threads (splits of the window), windows shorter and longer than the context.
    for (const std::uint32_t window : {1u, 5u, 37u, 200u}) {
        const ModelConfig config = windowed(make_config(2, 150, 64, 4, 2, 1), {window});  // dh = 16
        const std::size_t n_ctx = 150, dh = config.head_dim();
        KvCache cache(config, n_ctx);
        std::vector<std::vector<float>> keys, values;  // per (b, g): (n_ctx, dh) floats, every position
        for (std::size_t b = 0; b < 2; ++b) {
            for (std::size_t g = 0; g < 2; ++g) {
                keys.push_back(random_vector(n_ctx * dh, 10 + 2 * b + g));
                values.push_back(random_vector(n_ctx * dh, 20 + 2 * b + g));
                for (std::size_t t = 0; t < n_ctx; ++t) {
                    cache.store(0, b, g, t, keys.back().data() + t * dh, values.back().data() + t * dh);
                }
            }
        }
        cache.extend_to(n_ctx);
        const auto q = random_vector(2 * config.q_dim(), 30);
        DecodeAttentionScratch scratch(config, n_ctx, test_threads);
        std::vector<float> fast(2 * config.q_dim()), naive(fast.size()), expected(fast.size());
        const FlopCount flops = attend_decode(config, q.data(), config.q_dim(), cache, 0, n_ctx, fast.data(), scratch);
        attend_decode_naive(config, q.data(), config.q_dim(), cache, 0, n_ctx, naive.data(), scratch);

        // The definition, from the positions themselves rather than the cache.
        const std::size_t seen = std::min<std::size_t>(window, n_ctx);
        for (std::size_t b = 0; b < 2; ++b) {
            for (std::size_t h = 0; h < 4; ++h) {
                const std::size_t g = h / 2;
                attention_reference(q.data() + b * config.q_dim() + h * dh, keys[2 * b + g].data() + (n_ctx - seen) * dh,
                                    values[2 * b + g].data() + (n_ctx - seen) * dh, seen, 1, dh,
                                    expected.data() + b * config.q_dim() + h * dh);
            }
        }
        INFO("W=" << window);
        CHECK(relative_error(fast, expected) < 1e-5);
        CHECK(relative_error(naive, expected) < 1e-6);
        CHECK(flops.useful == 4ull * 2 * 4 * dh * seen);
    }
}

TEST_CASE("attend_causal masks each row to its window, as its naive twin does, and skips the keys left of it") {
    // Windows of one position, inside a block, across blocks, and longer than the prompt.
    for (const std::uint32_t window : {1u, 5u, 70u, 400u}) {
        for (const std::size_t block_rows : {4u, 64u}) {
            const ModelConfig config = windowed(make_config(2, 150, 32, 4, 2, 1), {window});  // dh = 8
            const auto qkv = random_vector(config.n_batch * config.seq_len * config.qkv_dim(), 11);
            std::vector<float> fast(config.n_batch * config.seq_len * config.q_dim()), naive(fast.size());
            CausalAttentionScratch scratch(config.seq_len, test_threads, block_rows);
            const FlopCount count = attend_causal(config, 0, qkv.data(), fast.data(), scratch);
            const FlopCount naive_count = attend_causal_naive(config, 0, qkv.data(), naive.data(), scratch);
            INFO("W=" << window << " block_rows=" << block_rows);
            CHECK(relative_error(fast, naive) < 1e-5);
            // Useful, by hand: row i sees min(i + 1, W) keys, 4·dh FLOPs each, for B·H = 8 heads.
            std::uint64_t seen = 0;
            for (std::uint64_t i = 0; i < 150; ++i) seen += std::min<std::uint64_t>(i + 1, window);
            CHECK(count.useful == 8 * 4 * 8 * seen);
            CHECK(naive_count.executed == count.useful);
            // Executed: each block from its first row's window to its last row.
            std::uint64_t executed = 0;
            for (std::uint64_t first = 0; first < 150; first += block_rows) {
                const std::uint64_t rows = std::min<std::uint64_t>(block_rows, 150 - first);
                const std::uint64_t first_key = first + 1 > window ? first + 1 - window : 0;
                executed += rows * (first + rows - first_key);
            }
            CHECK(count.executed == 8 * 4 * 8 * executed);

            // The mask matters: the same rows without it differ past the window.
            if (window < 150) {
                ModelConfig global = config;
                global.layer_windows.clear();
                std::vector<float> unmasked(fast.size());
                attend_causal(global, 0, qkv.data(), unmasked.data(), scratch);
                CHECK(relative_error(unmasked, fast) > 1e-2);
            }
        }
    }
}

TEST_CASE("the cached step equals the uncached forward with window layers, before and after the ring wraps") {
    // Gemma 2's alternation (layer 0 local) and Mistral's window on every layer, GQA and MQA.
    for (const auto& windows : {std::vector<std::uint32_t>{6, 0, 6}, std::vector<std::uint32_t>{6, 6, 6}}) {
        for (const std::size_t kv_heads : {1u, 2u}) {
            const ModelConfig config = windowed(make_config(2, 40, 32, 4, kv_heads, 3), windows);
            const ModelWeights weights = make_weights(config, 7);
            check_paths_agree(config, weights, 7, {3, 6, 7, 40}, test_threads);
        }
    }
}

namespace {

// An uncached attention that forgets the window: --verify must catch it.
FlopCount attend_causal_ignoring_window(const ModelConfig& config, std::size_t layer, const float* qkv, float* out,
                                        CausalAttentionScratch& scratch, const std::atomic<bool>* stop,
                                        const float* sinks) {
    ModelConfig global = config;
    global.layer_windows.clear();
    return attend_causal(global, layer, qkv, out, scratch, stop, sinks);
}

}  // namespace

TEST_CASE("--verify fails an uncached forward that attends past the window") {
    const ModelConfig config = windowed(make_config(1, 33, 32, 4, 2, 2), {8, 0});
    const ModelWeights weights = make_weights(config, 3);
    const StepKernels forgetful{&linear_sgemm, &attend_decode, &attend_causal_ignoring_window};
    CHECK(verify_at_context(config, weights, 3, 33, fast_kernels, forgetful, test_threads) > 1e-2);
}

TEST_CASE("the cached step's attention FLOPs shrink to the window on window layers only") {
    ModelConfig global = make_config(2, 100, 32, 4, 2, 2);  // dh = 8
    const ModelConfig local = windowed(global, {10, 0});
    const ModelWeights weights = make_weights(global, 5);
    auto step_flops = [&](const ModelConfig& config) {
        KvCache cache(config, 100);
        fill_cache_seeded(config, cache, 99, 5);
        DecodeScratch scratch(config, 100, test_threads);
        const std::vector<float> x = make_input_positions(config, 5, 99, 1);
        std::vector<float> out(x.size());
        return decode_step(config, weights, cache, x.data(), out.data(), scratch).useful;
    };
    // Hand count: layer 0 attends to 10 positions instead of 100, 4·B·H·dh FLOPs each.
    CHECK(step_flops(global) - step_flops(local) == 4ull * 2 * 4 * 8 * (100 - 10));
}

TEST_CASE("--check holds the window kernels to their naive twins") {
    const ModelConfig config = windowed(make_config(1, 150, 32, 4, 2, 2), {20, 0});
    const ModelWeights weights = make_weights(config, 9);
    KvCache cache(config, 150);
    fill_cache_seeded(config, cache, 149, 9);
    const std::vector<float> prompt = make_inputs(config, 9);
    const std::vector<float> step_in = make_input_positions(config, 9, 149, 1);
    const std::vector<KernelCheck> checks =
        check_kernels(config, weights, {step_in.data(), prompt.data(), &cache, test_threads, nullptr});
    REQUIRE(checks.size() == 6);
    for (const KernelCheck& check : checks) {
        INFO(check.kernel);
        CHECK(check.rel_error < kernel_check_tolerance);
    }
}

TEST_CASE("a windowed cache allocates exactly the kv bytes the cost model bills at its longest context") {
    // Mistral (every layer), Gemma 2 (every other), Gemma 3 (five local to one global), a window
    // longer than the context, in every element type the cache stores (int8's scales included).
    const std::vector<std::vector<std::uint32_t>> patterns = {
        {8, 8, 8, 8, 8, 8}, {8, 0, 8, 0, 8, 0}, {8, 8, 8, 8, 8, 0}, {64, 0, 64, 0, 64, 0}};
    for (const KvDtype dtype : {KvDtype::f32, KvDtype::f16, KvDtype::bf16, KvDtype::int8}) {
        for (const std::vector<std::uint32_t>& pattern : patterns) {
            for (const std::size_t n : {std::size_t{5}, std::size_t{8}, std::size_t{33}}) {
                ModelConfig config = make_config(2, n, 32, 4, 2, pattern.size());
                config.kv_dtype = dtype;
                config = windowed(config, pattern);
                CAPTURE(n);
                CAPTURE(static_cast<int>(dtype));
                CAPTURE(pattern[0]);
                CAPTURE(pattern[1]);
                CHECK(KvCache::bytes_for(config, n) == kv_cache_bytes(config));
                CHECK(KvCache(config, n).bytes() == kv_cache_bytes(config));
            }
        }
    }
}
