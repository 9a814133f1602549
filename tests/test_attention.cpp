#include "kvbench/attention.hpp"
#include "kvbench/causal_attention.hpp"
#include "kvbench/reference.hpp"
#include "kvbench/rng.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

using namespace kvbench;
using kvbench::test::make_config;

namespace {

std::vector<float> random_vector(std::size_t n, std::uint64_t seed, float scale = 1.0f) {
    Rng rng(seed);
    std::vector<float> v(n);
    fill_uniform(rng, v, scale);
    return v;
}

// Runs attend_decode on a cache filled with random K/V and checks every head against the reference.
void check_decode_against_reference(const ModelConfig& config, std::size_t n_ctx, std::size_t n_threads,
                                    float key_scale = 1.0f) {
    KvCache cache(config, n_ctx);
    const std::size_t dh = config.head_dim();
    for (std::size_t b = 0; b < config.n_batch; ++b) {
        for (std::size_t g = 0; g < config.n_kv_heads; ++g) {
            const auto k = random_vector(n_ctx * dh, 100 + b * 7 + g, key_scale);
            const auto v = random_vector(n_ctx * dh, 200 + b * 7 + g);
            std::copy(k.begin(), k.end(), cache.keys(0, b, g));
            std::copy(v.begin(), v.end(), cache.values(0, b, g));
        }
    }
    cache.extend_to(n_ctx);
    const std::size_t q_stride = config.model_dim + 3;  // a stride wider than the row, as in the fused qkv
    const auto q = random_vector(config.n_batch * q_stride, 300, key_scale);
    std::vector<float> out(config.n_batch * config.model_dim);
    DecodeAttentionScratch scratch(config, n_ctx, n_threads);
    const auto flops = attend_decode(config, q.data(), q_stride, cache, 0, n_ctx, out.data(), scratch);
    CHECK(flops == 4ull * config.n_batch * config.n_heads * dh * n_ctx);

    std::vector<float> expected(out.size());
    for (std::size_t b = 0; b < config.n_batch; ++b) {
        for (std::size_t h = 0; h < config.n_heads; ++h) {
            const std::size_t g = h / config.group_size();
            attention_reference(q.data() + b * q_stride + h * dh, cache.keys(0, b, g), cache.values(0, b, g),
                                n_ctx, 1, dh, expected.data() + b * config.model_dim + h * dh);
        }
    }
    CHECK(relative_error(out, expected) < 1e-5);
}

}  // namespace

TEST_CASE("attend_chunk reads one kv head for a whole group and matches the reference") {
    const std::size_t group_size = 4, head_dim = 16, n_ctx = 37;
    const auto q = random_vector(group_size * head_dim, 1);
    const auto k = random_vector(n_ctx * head_dim, 2);
    const auto v = random_vector(n_ctx * head_dim, 3);
    std::vector<float> scores(group_size * n_ctx), out(group_size * head_dim), row_max(group_size),
        row_sum(group_size);
    attend_chunk(q.data(), k.data(), v.data(), n_ctx, group_size, head_dim, 1.0f / 4.0f, scores.data(),
                 n_ctx, out.data(), row_max.data(), row_sum.data());
    for (std::size_t i = 0; i < group_size; ++i) {
        for (std::size_t d = 0; d < head_dim; ++d) out[i * head_dim + d] /= row_sum[i];
    }
    std::vector<float> expected(out.size());
    attention_reference(q.data(), k.data(), v.data(), n_ctx, group_size, head_dim, expected.data());
    CHECK(relative_error(out, expected) < 1e-5);
}

TEST_CASE("attend_decode matches the reference for mha, gqa and mqa") {
    for (std::size_t kv_heads : {8u, 4u, 2u, 1u}) {
        for (std::size_t n_ctx : {1u, 5u, 64u, 129u}) {
            INFO("G=" << kv_heads << " n_ctx=" << n_ctx);
            check_decode_against_reference(make_config(2, n_ctx, 64, 8, kv_heads, 1), n_ctx, 2);
        }
    }
}

TEST_CASE("attend_decode splits the context across threads and merges exactly") {
    // B·G = 1 and 4 threads: the context is cut into slices whose softmax states merge.
    CHECK(decode_split_count(1, 1000, 4, 8) == 4);
    CHECK(decode_split_count(1, 100, 4, 8) == 1);  // slices would be shorter than 64 positions
    CHECK(decode_split_count(8, 1000, 4, 8) == 1);
    for (std::size_t n_ctx : {300u, 1001u}) {
        INFO("n_ctx=" << n_ctx);
        check_decode_against_reference(make_config(1, n_ctx, 64, 4, 1, 1), n_ctx, 4);
    }
}

TEST_CASE("softmax stays finite with very large logits") {
    // Scores around ±1e4 overflow exp() without the max subtraction.
    check_decode_against_reference(make_config(1, 200, 32, 2, 1, 1), 200, 4, 30.0f);
}

TEST_CASE("attend_causal matches per-row reference attention and skips the upper triangle") {
    for (std::size_t block_rows : {4u, 64u}) {
        const auto config = make_config(2, 19, 32, 4, 2, 1);  // dh = 8, kv_dim = 16
        const std::size_t qkv_dim = config.qkv_dim(), dh = config.head_dim();
        const auto qkv = random_vector(config.n_batch * config.seq_len * qkv_dim, 11);
        std::vector<float> out(config.n_batch * config.seq_len * config.model_dim);
        CausalAttentionScratch scratch(config.seq_len, 2, block_rows);
        const FlopCount count = attend_causal(config, qkv.data(), out.data(), scratch);

        std::vector<float> expected(out.size()), k(config.seq_len * dh), v(config.seq_len * dh);
        for (std::size_t b = 0; b < config.n_batch; ++b) {
            for (std::size_t h = 0; h < config.n_heads; ++h) {
                const std::size_t g = h / config.group_size();
                for (std::size_t t = 0; t < config.seq_len; ++t) {
                    const float* row = qkv.data() + (b * config.seq_len + t) * qkv_dim;
                    std::copy_n(row + config.model_dim + g * dh, dh, k.data() + t * dh);
                    std::copy_n(row + config.model_dim + config.kv_dim() + g * dh, dh, v.data() + t * dh);
                }
                for (std::size_t i = 0; i < config.seq_len; ++i) {
                    attention_reference(qkv.data() + (b * config.seq_len + i) * qkv_dim + h * dh, k.data(),
                                        v.data(), i + 1, 1, dh,
                                        expected.data() + (b * config.seq_len + i) * config.model_dim + h * dh);
                }
            }
        }
        INFO("block_rows=" << block_rows);
        CHECK(relative_error(out, expected) < 1e-5);
        // Useful: 4·dh·N(N+1)/2 per (b, h). Waste: the upper half of each diagonal tile.
        const std::uint64_t heads = config.n_batch * config.n_heads, n = config.seq_len;
        CHECK(count.useful == heads * 4 * dh * n * (n + 1) / 2);
        std::uint64_t waste = 0;
        for (std::uint64_t first = 0; first < n; first += block_rows) {
            const std::uint64_t rows = std::min<std::uint64_t>(block_rows, n - first);
            waste += 4 * dh * rows * (rows - 1) / 2;
        }
        CHECK(count.executed - count.useful == heads * waste);
    }
}
