#include "attend_group.hpp"
#include "kernels/attention_grouped.hpp"
#include "kernels/attention_kernel.hpp"
#include "kernels/prefetch_plan.hpp"
#include "kernels/vector_math.hpp"

#include "kvbench/engine/attention.hpp"
#include "kvbench/engine/causal_attention.hpp"
#include "kvbench/engine/kernel_isa.hpp"
#include "kvbench/engine/reference.hpp"
#include "kvbench/engine/rng.hpp"
#include "kvbench/engine/weights.hpp"

#include "attention_flops.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using namespace kvbench;
using kvbench::test::random_vector;
using kvbench::test::make_config;
using kvbench::test::documented_group_flops;
using kvbench::test::expected_decode_executed;

namespace {

// One group's problem over contiguous rows: n_rows queries q_stride apart, n_ctx keys and values
// kv_stride elements apart, f32 unless the caller sets their types.
GroupAttention contiguous_group(const float* q, std::size_t q_stride, std::size_t n_rows, const void* keys,
                                const void* values, std::size_t kv_stride, std::size_t n_ctx, std::size_t head_dim,
                                float scale) {
    GroupAttention problem;
    problem.q = q;
    problem.q_stride = q_stride;
    problem.n_rows = n_rows;
    problem.keys = keys;
    problem.values = values;
    problem.kv_stride = kv_stride;
    problem.n_ctx = n_ctx;
    problem.head_dim = head_dim;
    problem.scale = scale;
    return problem;
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
    const std::size_t q_stride = config.q_dim() + 3;  // a stride wider than the row, as in the fused qkv
    const auto q = random_vector(config.n_batch * q_stride, 300, key_scale);
    std::vector<float> out(config.n_batch * config.q_dim());
    DecodeAttentionScratch scratch(config, n_ctx, n_threads);
    const FlopCount flops = attend_decode(config, q.data(), q_stride, cache, 0, n_ctx, out.data(), scratch);
    CHECK(flops.useful == 4ull * config.n_batch * config.n_heads * dh * n_ctx);

    std::vector<float> expected(out.size());
    const FlopCount naive = attend_decode_naive(config, q.data(), q_stride, cache, 0, n_ctx, expected.data(), scratch);
    CHECK(relative_error(out, expected) < 1e-5);
    CHECK(naive.executed == flops.useful);
    CHECK(flops.executed == expected_decode_executed(config, naive.executed, n_ctx, n_threads));
}

}  // namespace

TEST_CASE("attend_group reads one kv head for a whole group and matches the reference") {
    const std::size_t group_size = 4, head_dim = 16, n_ctx = 37;
    const auto q = random_vector(group_size * head_dim, 1);
    const auto k = random_vector(n_ctx * head_dim, 2);
    const auto v = random_vector(n_ctx * head_dim, 3);
    std::vector<float> out(group_size * head_dim), row_max(group_size), row_sum(group_size);
    const GroupAttention problem =
        contiguous_group(q.data(), head_dim, group_size, k.data(), v.data(), head_dim, n_ctx, head_dim, 1.0f / 4.0f);
    AttendWorkspace workspace(group_size, head_dim);
    attend_group(problem, {out.data(), head_dim, row_max.data(), row_sum.data()}, workspace);
    for (std::size_t i = 0; i < group_size; ++i) {
        for (std::size_t d = 0; d < head_dim; ++d) out[i * head_dim + d] /= row_sum[i];
    }
    std::vector<float> expected(out.size());
    attention_reference(q.data(), k.data(), v.data(), n_ctx, group_size, head_dim, expected.data());
    CHECK(relative_error(out, expected) < 1e-5);
}

TEST_CASE("e4m3 read as f32 bits: keys give binary16's bits, values binary16's but below f32's normal range") {
    // Every byte pattern (the NaN S.1111.111 only where the block scan would look for it; value
    // subnormals or not), in the one-row, 2-row, 4-row and group tiles, whole and partial blocks.
    // A query of 2^7 or more (here up to 3000 · 0.125) keeps binary16 for the keys, as its 2^120
    // would not stay finite. Values read as bits give binary16's bits where no product p · v / 2^8
    // of binary16's falls below 2^-126: normal values and probabilities above e^-15 (the query at
    // 0.001 keeps every score within ±7.2). On a build without AVX-512 every read is binary16's.
    using Read = GroupAttention::E4m3Read;
    const auto bits_of = [](const std::vector<float>& xs) {
        std::vector<std::uint32_t> out(xs.size());
        std::memcpy(out.data(), xs.data(), xs.size() * sizeof(float));
        return out;
    };
    const auto nan_mask = [](const std::vector<float>& xs) {
        std::vector<bool> out(xs.size());
        std::transform(xs.begin(), xs.end(), out.begin(), [](float x) { return std::isnan(x); });
        return out;
    };
    for (const bool with_nan : {false, true}) {
        for (const bool subnormal_values : {false, true}) {
            for (const std::size_t head_dim : {16u, 64u, 128u}) {
                for (const std::size_t n_rows : {1u, 2u, 3u, 4u, 8u}) {
                    for (const std::size_t n_ctx : {1u, 37u, 100u, 200u}) {
                        for (const float query_scale : {0.001f, 1.0f, 3000.0f}) {
                            Rng rng(1000 + head_dim + n_rows + n_ctx);
                            std::vector<std::uint8_t> keys(n_ctx * head_dim), values(n_ctx * head_dim);
                            for (std::uint8_t& b : keys) b = static_cast<std::uint8_t>(rng.next_u64());
                            for (std::uint8_t& b : values) b = static_cast<std::uint8_t>(rng.next_u64());
                            for (std::uint8_t* bytes : {keys.data(), values.data()}) {
                                for (std::size_t i = 0; i < n_ctx * head_dim; ++i) {
                                    if ((bytes[i] & 0x7f) == 0x7f && !with_nan) bytes[i] = 0x7e;
                                }
                            }
                            if (!subnormal_values) {
                                for (std::uint8_t& b : values) b = (b & 0x78) == 0 ? (b | 0x08) : b;  // exponent 0 → 1
                            }
                            const auto q = random_vector(n_rows * head_dim, 7, query_scale);
                            const auto run = [&](Read read) {
                                GroupAttention problem = contiguous_group(q.data(), head_dim, n_rows, keys.data(), values.data(),
                                                                          head_dim, n_ctx, head_dim, 0.125f);
                                problem.kv_dtype = KvDtype::e4m3;
                                problem.value_dtype = KvDtype::e4m3;
                                problem.fp8_fix_free = !with_nan;
                                problem.e4m3_read = read;
                                std::vector<float> out(n_rows * head_dim), row_max(n_rows), row_sum(n_rows);
                                AttendWorkspace workspace(n_rows, head_dim);
                                attend_group_tiled(problem, {out.data(), head_dim, row_max.data(), row_sum.data()}, workspace);
                                out.insert(out.end(), row_max.begin(), row_max.end());
                                out.insert(out.end(), row_sum.begin(), row_sum.end());
                                return out;
                            };
                            const std::vector<float> binary16 = run(Read::binary16);
                            const std::vector<float> f32_bits = run(Read::f32_bits);
                            const std::vector<float> host = run(Read::host);
                            CAPTURE(with_nan);
                            CAPTURE(subnormal_values);
                            CAPTURE(head_dim);
                            CAPTURE(n_rows);
                            CAPTURE(n_ctx);
                            CAPTURE(query_scale);
                            CHECK(bits_of(run(Read::f32_bit_keys)) == bits_of(binary16));
                            CHECK((bits_of(host) == bits_of(binary16) || bits_of(host) == bits_of(f32_bits)));
                            CHECK(nan_mask(f32_bits) == nan_mask(binary16));
                            if (!with_nan) {
                                CHECK(std::none_of(binary16.begin(), binary16.end(), [](float x) { return std::isnan(x); }));
                                CHECK(relative_error(f32_bits, binary16) < 1e-6);
                                if (!subnormal_values && query_scale == 0.001f) CHECK(bits_of(f32_bits) == bits_of(binary16));
                            }
                        }
                    }
                }
            }
        }
    }
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
    // B·G = 1 and 4 threads: the context is cut into splits whose softmax states merge.
    CHECK(decode_split_count(1, 1000, 4, 8) == 4);
    CHECK(decode_split_count(1, 100, 4, 8) == 1);  // splits would be shorter than 64 positions
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
    // dh = 8 (D/H); dh = 12 and 48, set apart from D/H, so q and out are H·dh wide, not D.
    for (const ModelConfig& config : {make_config(2, 19, 32, 4, 2, 1), make_config(2, 19, 32, 4, 2, 1, 12),
                                      make_config(1, 23, 64, 2, 1, 1, 48)})
    for (std::size_t block_rows : {4u, 64u}) {
        const std::size_t qkv_dim = config.qkv_dim(), dh = config.head_dim(), q_dim = config.q_dim();
        const auto qkv = random_vector(config.n_batch * config.seq_len * qkv_dim, 11);
        std::vector<float> out(config.n_batch * config.seq_len * q_dim);
        CausalAttentionScratch scratch(config.seq_len, 2, block_rows);
        const FlopCount count = attend_causal(config, 0, qkv.data(), out.data(), scratch);

        std::vector<float> expected(out.size()), k(config.seq_len * dh), v(config.seq_len * dh);
        for (std::size_t b = 0; b < config.n_batch; ++b) {
            for (std::size_t h = 0; h < config.n_heads; ++h) {
                const std::size_t g = h / config.group_size();
                for (std::size_t t = 0; t < config.seq_len; ++t) {
                    const float* row = qkv.data() + (b * config.seq_len + t) * qkv_dim;
                    std::copy_n(row + q_dim + g * dh, dh, k.data() + t * dh);
                    std::copy_n(row + q_dim + config.kv_dim() + g * dh, dh, v.data() + t * dh);
                }
                for (std::size_t i = 0; i < config.seq_len; ++i) {
                    attention_reference(qkv.data() + (b * config.seq_len + i) * qkv_dim + h * dh, k.data(),
                                        v.data(), i + 1, 1, dh,
                                        expected.data() + (b * config.seq_len + i) * q_dim + h * dh);
                }
            }
        }
        INFO(describe(config) << " block_rows=" << block_rows);
        CHECK(relative_error(out, expected) < 1e-5);
        // Useful: what the naive twin counts, 4·dh·N(N+1)/2 per (b, h). Waste: the upper half of
        // each diagonal block.
        const std::uint64_t heads = config.n_batch * config.n_heads, n = config.seq_len;
        std::vector<float> naive_out(out.size());
        const FlopCount naive = attend_causal_naive(config, 0, qkv.data(), naive_out.data(), scratch);
        CHECK(naive.executed == heads * 4 * dh * n * (n + 1) / 2);
        CHECK(count.useful == naive.executed);
        std::uint64_t waste = 0;
        for (std::uint64_t first = 0; first < n; first += block_rows) {
            const std::uint64_t rows = std::min<std::uint64_t>(block_rows, n - first);
            waste += 4 * dh * rows * (rows - 1) / 2;
        }
        CHECK(count.executed - count.useful == heads * waste);
    }
}

namespace {

// attend_group (or `kernel`) on random data, normalised, against the reference. q and K/V rows
// are strided wider than head_dim when `padded`, as in the uncached qkv rows.
double group_error(std::size_t group_size, std::size_t head_dim, std::size_t n_ctx, bool padded,
                   GroupKernel kernel = &attend_group) {
    const std::size_t q_stride = padded ? head_dim + 5 : head_dim;
    const std::size_t kv_stride = padded ? head_dim + 3 : head_dim;
    const auto q = random_vector(group_size * q_stride, 40 + group_size);
    const auto k = random_vector(n_ctx * kv_stride, 41 + n_ctx, 2.0f);
    const auto v = random_vector(n_ctx * kv_stride, 42 + head_dim);
    std::vector<float> out(group_size * head_dim), row_max(group_size), row_sum(group_size);
    const GroupAttention problem = contiguous_group(q.data(), q_stride, group_size, k.data(), v.data(), kv_stride, n_ctx,
                                                    head_dim, 1.0f / std::sqrt(static_cast<float>(head_dim)));
    AttendWorkspace workspace(group_size, head_dim);
    const std::uint64_t flops = kernel(problem, {out.data(), head_dim, row_max.data(), row_sum.data()}, workspace);
    if (kernel == &attend_group_by_lanes) {
        CHECK(flops == 4 * group_size * n_ctx * head_dim);  // the lanes kernel pads nothing
    } else {
        CHECK(flops == documented_group_flops(group_size, head_dim, n_ctx));
    }
    for (std::size_t i = 0; i < group_size; ++i) {
        for (std::size_t d = 0; d < head_dim; ++d) out[i * head_dim + d] /= row_sum[i];
    }

    // The reference takes contiguous rows, with the scale folded into q.
    std::vector<float> q_rows(group_size * head_dim), k_rows(n_ctx * head_dim), v_rows(n_ctx * head_dim);
    const float unscale = std::sqrt(static_cast<float>(head_dim)) * problem.scale;
    for (std::size_t i = 0; i < group_size; ++i) {
        for (std::size_t d = 0; d < head_dim; ++d) q_rows[i * head_dim + d] = q[i * q_stride + d] * unscale;
    }
    for (std::size_t t = 0; t < n_ctx; ++t) {
        std::copy_n(k.data() + t * kv_stride, head_dim, k_rows.data() + t * head_dim);
        std::copy_n(v.data() + t * kv_stride, head_dim, v_rows.data() + t * head_dim);
    }
    std::vector<float> expected(out.size());
    attention_reference(q_rows.data(), k_rows.data(), v_rows.data(), n_ctx, group_size, head_dim, expected.data());
    return relative_error(out, expected);
}

}  // namespace

TEST_CASE("exp_polynomial is within 1.5e-7 of exp over the float range, and exact at the edges") {
    // 2^20 + 3 points: not a multiple of any vector width, so the masked tail runs too.
    const std::size_t n = (std::size_t{1} << 20) + 3;
    std::vector<float> x(n), y(n);
    for (std::size_t i = 0; i < n; ++i) {
        x[i] = -87.3f + 175.6f * static_cast<float>(i) / static_cast<float>(n - 1);
    }
    exp_polynomial(x.data(), n, y.data());
    double worst = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const double expected = std::exp(static_cast<double>(x[i]));
        worst = std::max(worst, std::abs(static_cast<double>(y[i]) - expected) / expected);
    }
    MESSAGE("worst relative error of exp_polynomial: " << worst);
    CHECK(worst < 1.5e-7);

    std::vector<float> edges = {-std::numeric_limits<float>::infinity(), -1000.0f, -87.34f, 0.0f, 1.0f,
                                std::numeric_limits<float>::quiet_NaN()};
    exp_polynomial(edges.data(), edges.size(), edges.data());  // in place
    CHECK(edges[0] == 0.0f);
    CHECK(edges[1] == 0.0f);
    CHECK(edges[2] == 0.0f);
    CHECK(edges[3] == 1.0f);
    CHECK(std::abs(edges[4] - 2.7182817f) < 3e-7f);
    CHECK(std::isnan(edges[5]));
}

TEST_CASE("softmax_row sums to one, is stable with large logits and leaves nothing past n") {
    for (std::size_t n : {1u, 7u, 16u, 33u, 1000u}) {
        auto row = random_vector(n + 1, 50 + n, 1e4f);  // logits up to ±1e4 overflow a naive exp
        row[n] = 123.0f;
        std::vector<double> expected(n);
        const float max_logit = *std::max_element(row.begin(), row.begin() + static_cast<std::ptrdiff_t>(n));
        double total = 0;
        for (std::size_t t = 0; t < n; ++t) total += expected[t] = std::exp(static_cast<double>(row[t] - max_logit));
        softmax_row(row.data(), n);
        INFO("n=" << n);
        double sum = 0, worst = 0;
        for (std::size_t t = 0; t < n; ++t) {
            sum += row[t];
            worst = std::max(worst, std::abs(row[t] - expected[t] / total));
        }
        CHECK(std::abs(sum - 1.0) < 1e-5);
        CHECK(worst < 1e-6);
        CHECK(row[n] == 123.0f);
    }
}

TEST_CASE("attend_group matches the reference for group sizes 1-20, odd head dims and ragged contexts") {
    // Group sizes up to 8 take the dot-product tiles, larger ones the transposed-key tiles;
    // 13 and 20 leave partial tiles. Contexts straddle the 16- and 32-key blocks. Head dims
    // that are whole vectors read keys with plain loads, 20 (and 24 on AVX-512) with masks.
    for (std::size_t group_size : {1u, 2u, 3u, 4u, 5u, 7u, 8u, 9u, 12u, 13u, 16u, 20u}) {
        for (std::size_t head_dim : {8u, 20u, 24u, 64u, 128u}) {
            for (std::size_t n_ctx : {1u, 15u, 33u, 70u}) {
                INFO("group_size=" << group_size << " head_dim=" << head_dim << " n_ctx=" << n_ctx);
                CHECK(group_error(group_size, head_dim, n_ctx, false) < 1e-5);
            }
        }
    }
    // Strided rows (values packed, keys read with a stride).
    for (std::size_t group_size : {1u, 6u, 17u}) {
        for (std::size_t head_dim : {24u, 64u}) {
            INFO("strided group_size=" << group_size << " head_dim=" << head_dim);
            CHECK(group_error(group_size, head_dim, 100, true) < 1e-5);
        }
    }
}

TEST_CASE("attend_group matches the reference for large groups, as the grouped kernel takes them") {
    // Builds without AVX-512 run attention_grouped.cpp's kernel for groups that are a multiple of
    // its vector (8 rows on AVX2, 4 otherwise; 8 at least) with whole-vector head dims; the rest,
    // and every group on AVX-512, take attend_group_tiled. Contexts straddle the lanes kernel's 24-key
    // blocks and the 6- and 12-key score tiles; 40 and 56 rows leave partial output tiles.
    for (std::size_t group_size : {8u, 12u, 16u, 24u, 32u, 40u, 56u, 64u}) {
        for (std::size_t head_dim : {8u, 16u, 40u, 64u, 128u}) {
            for (std::size_t n_ctx : {1u, 5u, 23u, 24u, 25u, 49u, 300u}) {
                INFO("group_size=" << group_size << " head_dim=" << head_dim << " n_ctx=" << n_ctx);
                CHECK(group_error(group_size, head_dim, n_ctx, false) < 1e-5);
            }
        }
    }
    for (std::size_t group_size : {8u, 32u}) {
        INFO("strided group_size=" << group_size);
        CHECK(group_error(group_size, 64, 100, true) < 1e-5);
    }
}

TEST_CASE("attend_group_by_lanes matches the reference on every build, where it is chosen or not") {
    // AVX-512 builds compile the lanes kernel (8 lanes) but choose their own tiles: held to the
    // reference here all the same. Groups and head dims are whole vectors of its lanes.
    const std::size_t width = lanes_kernel_width();
    for (std::size_t group_size : {width, 2 * width, 3 * width, 8 * width}) {
        for (std::size_t head_dim : {width, 5 * width, 64 / width * width}) {
            for (std::size_t n_ctx : {1u, 23u, 25u, 300u}) {
                INFO("group_size=" << group_size << " head_dim=" << head_dim << " n_ctx=" << n_ctx);
                CHECK(group_error(group_size, head_dim, n_ctx, false, &attend_group_by_lanes) < 1e-5);
            }
        }
    }
    INFO("strided");
    CHECK(group_error(2 * width, 8 * width, 100, true, &attend_group_by_lanes) < 1e-5);
}

TEST_CASE("attend_decode's kernel is chosen in one place, by the group's shape and the build") {
    // The lanes kernel takes groups of 8 rows or more, whole vectors of its lanes, with head_dim
    // whole vectors too, on builds without AVX-512 (kernels/tuning.hpp); every other group the tiles.
    const auto chosen = [](std::size_t n_rows, std::size_t head_dim) -> std::string {
        const GroupKernel kernel = group_kernel_for(n_rows, head_dim);
        return kernel == &attend_group_tiled ? "tiled" : kernel == &attend_group_by_lanes ? "lanes" : "neither";
    };
    const std::string large_groups = std::string(kernel_isa()) == "avx512" ? "tiled" : "lanes";
    const std::size_t width = lanes_kernel_width();
    CHECK(chosen(1, 64) == "tiled");
    CHECK(chosen(4, 64) == "tiled");
    CHECK(chosen(9, 64) == "tiled");
    CHECK(chosen(16, 64) == large_groups);
    CHECK(chosen(8 * width, 64) == large_groups);
    CHECK(chosen(16, 63) == "tiled");
}

TEST_CASE("attend_decode matches the reference for head dims 8 to 128 and group sizes up to 24") {
    struct Shape {
        std::size_t n_batch, model_dim, n_heads, n_kv_heads;
    };
    // dh = 8, 24, 64, 128; group sizes 1, 2, 3, 8, 12, 16, 24.
    for (const Shape& s : {Shape{2, 64, 8, 8}, Shape{1, 192, 8, 1}, Shape{3, 72, 3, 1}, Shape{1, 1024, 16, 2},
                           Shape{2, 1536, 12, 1}, Shape{1, 1024, 16, 1}, Shape{1, 1536, 24, 1}, Shape{2, 512, 4, 2}}) {
        for (std::size_t n_ctx : {1u, 31u, 77u, 300u}) {
            const auto config = make_config(s.n_batch, n_ctx, s.model_dim, s.n_heads, s.n_kv_heads, 1);
            INFO(describe(config));
            check_decode_against_reference(config, n_ctx, 2);
        }
    }
}

TEST_CASE("attend_decode matches the reference with a head dimension apart from D/H") {
    // q and out are H·dh wide: D=96 H=4 dh=64 (256 > D), D=64 H=2 dh=48 (96), odd dh = 40 and
    // 20 (not whole vectors), D=100 H=8 dh=16 (H does not divide D), and gemma-7b's dh = 256.
    for (const ModelConfig& shape : {make_config(2, 1, 96, 4, 4, 1, 64), make_config(2, 1, 96, 4, 1, 1, 64),
                                     make_config(1, 1, 64, 2, 1, 1, 48), make_config(2, 1, 64, 4, 2, 1, 40),
                                     make_config(1, 1, 64, 12, 3, 1, 20), make_config(3, 1, 100, 8, 2, 1, 16),
                                     make_config(1, 1, 3072, 16, 16, 1, 256)}) {
        for (std::size_t n_ctx : {1u, 31u, 300u}) {
            ModelConfig config = shape;
            config.seq_len = n_ctx;
            INFO(describe(config));
            check_decode_against_reference(config, n_ctx, 2);
        }
    }
    // B·G = 1 on 4 threads: the splits' partial outputs are dh wide, not D/H.
    check_decode_against_reference(make_config(1, 1000, 64, 4, 1, 1, 40), 1000, 4);
}

TEST_CASE("attend_decode splits long contexts of large groups and merges them") {
    // B·G = 1 < 4 threads: up to 4 splits of at least 64 positions, each a multi-block split.
    CHECK(decode_split_count(1, 1000, 4, 8) == 4);
    for (std::size_t n_ctx : {129u, 1000u}) {
        INFO("n_ctx=" << n_ctx);
        check_decode_against_reference(make_config(1, n_ctx, 1024, 16, 1, 1), n_ctx, 4);  // gs 16, dh 64
        check_decode_against_reference(make_config(1, n_ctx, 384, 3, 1, 1), n_ctx, 3);    // gs 3, dh 128
    }
}

TEST_CASE("attend_decode gives the same bits on every run") {
    const auto config = make_config(2, 500, 256, 8, 2, 1);
    KvCache cache(config, 500);
    for (std::size_t b = 0; b < 2; ++b) {
        for (std::size_t g = 0; g < 2; ++g) {
            const auto k = random_vector(500 * 32, 60 + b + 2 * g), v = random_vector(500 * 32, 70 + b + 2 * g);
            std::copy(k.begin(), k.end(), cache.keys(0, b, g));
            std::copy(v.begin(), v.end(), cache.values(0, b, g));
        }
    }
    cache.extend_to(500);
    const auto q = random_vector(2 * 256, 80);
    DecodeAttentionScratch scratch(config, 500, 3);  // 3 threads, 4 tasks: uneven shares
    std::vector<float> first(2 * 256), again(2 * 256);
    attend_decode(config, q.data(), 256, cache, 0, 500, first.data(), scratch);
    for (int run = 0; run < 5; ++run) {
        attend_decode(config, q.data(), 256, cache, 0, 500, again.data(), scratch);
        CHECK(std::memcmp(first.data(), again.data(), first.size() * sizeof(float)) == 0);
    }
}

TEST_CASE("attend_decode of a large group gives the same bits on every run") {
    // MQA with 32 query heads: the grouped kernel on builds without AVX-512, split over the context.
    const auto config = make_config(1, 700, 2048, 32, 1, 1);
    KvCache cache(config, 700);
    const auto k = random_vector(700 * 64, 91), v = random_vector(700 * 64, 92);
    std::copy(k.begin(), k.end(), cache.keys(0, 0, 0));
    std::copy(v.begin(), v.end(), cache.values(0, 0, 0));
    cache.extend_to(700);
    const auto q = random_vector(2048, 93);
    DecodeAttentionScratch scratch(config, 700, 2);
    std::vector<float> first(2048), again(2048);
    attend_decode(config, q.data(), 2048, cache, 0, 700, first.data(), scratch);
    for (int run = 0; run < 3; ++run) {
        attend_decode(config, q.data(), 2048, cache, 0, 700, again.data(), scratch);
        CHECK(std::memcmp(first.data(), again.data(), first.size() * sizeof(float)) == 0);
    }
    check_decode_against_reference(config, 700, 2);
}

TEST_CASE("the decode scratch reports what it allocates, its split buffers sized by the splits used") {
    const auto config = make_config(3, 100, 192, 6, 2, 1);
    for (std::size_t n_threads : {1u, 2u, 5u}) {
        // B·G = 6 tasks occupy up to 6 threads: one split, whatever the context.
        const DecodeAttentionScratch scratch(config, 100, n_threads);
        CHECK(scratch.bytes() == DecodeAttentionScratch::bytes_for(config, 100, n_threads));
        CHECK(scratch.max_splits == 1);
        CHECK(scratch.partial_out.size() == config.n_batch * config.model_dim);
        // With an explicit dh the partials are H·dh wide.
        const auto wide = make_config(3, 100, 192, 6, 2, 1, 48);
        const DecodeAttentionScratch wide_scratch(wide, 100, n_threads);
        CHECK(wide_scratch.partial_out.size() == wide.n_batch * 6 * 48);
        CHECK(wide_scratch.bytes() == DecodeAttentionScratch::bytes_for(wide, 100, n_threads));
        CHECK(DecodeAttentionScratch(config, 5000, n_threads).bytes() == scratch.bytes());
    }
    // B·G = 1 on 4 threads: 1 split for 100 positions (splits are at least 64), 4 for 5000.
    const auto single = make_config(1, 100, 64, 4, 1, 1);
    const DecodeAttentionScratch short_context(single, 100, 4), long_context(single, 5000, 4);
    CHECK(short_context.max_splits == 1);
    CHECK(long_context.max_splits == 4);
    CHECK(long_context.partial_out.size() == 4 * single.model_dim);
    CHECK(long_context.bytes() == DecodeAttentionScratch::bytes_for(single, 5000, 4));
    CHECK(AttendWorkspace(3, 24).bytes() == AttendWorkspace::bytes_for(3, 24));
}

TEST_CASE("attend_decode_naive and attend_causal_naive compute what the fast kernels compute") {
    const auto config = make_config(2, 45, 64, 8, 2, 1);
    const std::size_t n_ctx = config.seq_len;
    KvCache cache(config, n_ctx);
    fill_cache_seeded(config, cache, n_ctx, 3);
    const auto q = random_vector(config.n_batch * config.qkv_dim(), 4);
    DecodeAttentionScratch decode_scratch(config, n_ctx, 2);
    std::vector<float> fast(config.n_batch * config.model_dim), naive(fast.size());
    attend_decode(config, q.data(), config.qkv_dim(), cache, 0, n_ctx, fast.data(), decode_scratch);
    attend_decode_naive(config, q.data(), config.qkv_dim(), cache, 0, n_ctx, naive.data(), decode_scratch);
    CHECK(relative_error(fast, naive) < 1e-5);

    const auto qkv = random_vector(config.n_batch * n_ctx * config.qkv_dim(), 5);
    CausalAttentionScratch causal_scratch(n_ctx, 2, 16);
    std::vector<float> causal_fast(config.n_batch * n_ctx * config.model_dim), causal_naive(causal_fast.size());
    attend_causal(config, 0, qkv.data(), causal_fast.data(), causal_scratch);
    attend_causal_naive(config, 0, qkv.data(), causal_naive.data(), causal_scratch);
    CHECK(relative_error(causal_fast, causal_naive) < 1e-5);
    // And they are not trivially equal: another query gives another answer.
    const auto other_q = random_vector(q.size(), 6);
    attend_decode_naive(config, other_q.data(), config.qkv_dim(), cache, 0, n_ctx, naive.data(), decode_scratch);
    CHECK(relative_error(fast, naive) > 1e-2);
}

TEST_CASE("GQA's f32 dot tiles take the next block into L1 only where the L1 holds 48 KiB") {
    // prefetch_plan.hpp's measured choices, written out: (blocks ahead, into L2) per stored
    // type on this build's instruction set, then the exception for GQA's f32 dot tiles.
    struct Expected {
        KvDtype stored;
        std::size_t blocks_ahead;
        bool into_l2;
    };
    // Chosen by the kernels' instruction set at run time, so that a case compiled for another
    // level than the kernels fails here rather than checking a row no kernel runs.
    REQUIRE(std::string(tuning.name) == kernel_isa());
    const bool avx512 = std::string(kernel_isa()) == "avx512";
    const std::vector<Expected> rule =
        avx512 ? std::vector<Expected>{{KvDtype::f32, 1, true},   {KvDtype::f16, 1, false},  {KvDtype::bf16, 1, false},
                                       {KvDtype::int8, 2, false}, {KvDtype::e4m3, 2, false}, {KvDtype::e5m2, 2, false},
                                       {KvDtype::q8_0, 2, false}, {KvDtype::q4_0, 2, false}}
               : std::vector<Expected>{{KvDtype::f32, 2, true},   {KvDtype::f16, 2, true},  {KvDtype::bf16, 2, true},
                                       {KvDtype::int8, 1, false}, {KvDtype::e4m3, 2, true}, {KvDtype::e5m2, 2, true},
                                       {KvDtype::q8_0, 2, true},  {KvDtype::q4_0, 2, true}};
    constexpr std::size_t zen4_l1 = 32 * 1024, zen5_l1 = 48 * 1024;
    for (const Expected& e : rule) {
        INFO("stored=" << static_cast<int>(e.stored));
        for (const bool groups : {false, true}) {
            for (const std::size_t l1 : {zen4_l1, zen5_l1}) {
                const PrefetchPlan plan = block_prefetch_plan(e.stored, groups, l1);
                const bool exception = e.stored == KvDtype::f32 && groups && l1 == zen5_l1;
                CHECK(plan.blocks_ahead == (exception ? 1 : e.blocks_ahead));
                CHECK(plan.into_l2 == (exception ? false : e.into_l2));
            }
        }
    }
    CHECK(large_l1_bytes == zen5_l1);
}
