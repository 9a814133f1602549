#include "kvbench/engine/cost_model.hpp"
#include "kvbench/engine/decoder.hpp"
#include "kvbench/engine/kernel_check.hpp"
#include "kvbench/engine/reference.hpp"

#include "attention_flops.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using namespace kvbench;
using kvbench::test::divisors;
using kvbench::test::make_config;
using kvbench::test::causal_waste_flops;
using kvbench::test::expected_decode_executed;

namespace {

using kvbench::test::spec_tolerance;
using kvbench::test::test_threads;

struct Comparison {
    double rel_error = 0;
    FlopCount cached_flops;
    FlopCount uncached_flops;
};

// docs/model.md: fill a cache with positions 1..N-1 from a prefill of the first N-1 tokens,
// take one cached step for token N, compare with row N of the uncached forward.
Comparison compare_cached_with_uncached(const ModelConfig& config, std::uint64_t seed) {
    const ModelWeights weights = make_weights(config, seed);
    const std::vector<float> inputs = make_inputs(config, seed);
    const std::size_t n = config.seq_len, dim = config.model_dim;

    std::vector<float> full_out(inputs.size());
    ForwardScratch full_scratch(config, test_threads);
    Comparison result;
    result.uncached_flops = forward_full(config, weights, inputs.data(), full_out.data(), full_scratch);

    KvCache cache(config, n);
    if (n > 1) {
        ModelConfig prefix_config = config;
        prefix_config.seq_len = n - 1;
        const auto prefix_inputs = gather_positions(inputs, config.n_batch, n, dim, 0, n - 1);
        std::vector<float> prefix_out(prefix_inputs.size());
        ForwardScratch prefix_scratch(prefix_config, test_threads);
        forward_full(prefix_config, weights, prefix_inputs.data(), prefix_out.data(), prefix_scratch, &cache);
    }
    REQUIRE(cache.length() == n - 1);
    const auto step_in = gather_positions(inputs, config.n_batch, n, dim, n - 1, 1);
    std::vector<float> step_out(step_in.size());
    DecodeScratch step_scratch(config, n, test_threads);
    result.cached_flops = decode_step(config, weights, cache, step_in.data(), step_out.data(), step_scratch);
    CHECK(cache.length() == n);

    result.rel_error = relative_error(step_out, gather_positions(full_out, config.n_batch, n, dim, n - 1, 1));
    return result;
}

}  // namespace

TEST_CASE("the cached step equals the last row of the uncached forward over the whole grid") {
    std::size_t n_configs = 0;
    double worst = 0;
    for (std::size_t n_batch : {1u, 3u}) {
        for (std::size_t seq_len : {1u, 2u, 17u, 64u}) {
            for (std::size_t dim : {64u, 96u}) {
                for (std::size_t n_heads : {4u, 8u}) {
                    for (std::size_t n_kv_heads : divisors(n_heads)) {
                        for (std::size_t n_layers : {1u, 3u}) {
                            const auto config = make_config(n_batch, seq_len, dim, n_heads, n_kv_heads, n_layers);
                            const Comparison c = compare_cached_with_uncached(config, 42 + n_configs);
                            INFO(describe(config));
                            CHECK(c.rel_error < spec_tolerance);
                            worst = std::max(worst, c.rel_error);
                            ++n_configs;
                        }
                    }
                }
            }
        }
    }
    CHECK(n_configs == 2 * 4 * 2 * (3 + 4) * 2);
    MESSAGE("worst relative error over " << n_configs << " configurations: " << worst);
}

TEST_CASE("the cached step equals the uncached forward with a head dimension apart from D/H") {
    // H·dh above D (96 < 4·64; 64 < 2·48), below it (100 > 8·8), odd (40), and H not dividing D.
    const ModelConfig shapes[] = {make_config(1, 1, 96, 4, 4, 1, 64),  make_config(1, 1, 96, 4, 2, 1, 64),
                                  make_config(1, 1, 96, 4, 1, 1, 64),  make_config(1, 1, 64, 2, 1, 1, 48),
                                  make_config(1, 1, 64, 4, 2, 1, 40),  make_config(1, 1, 100, 8, 8, 1, 8),
                                  make_config(1, 1, 100, 8, 2, 1, 16)};
    std::size_t n_configs = 0;
    for (const ModelConfig& shape : shapes) {
        for (std::size_t n_batch : {1u, 3u}) {
            for (std::size_t seq_len : {1u, 2u, 17u, 64u}) {
                for (std::size_t n_layers : {1u, 3u}) {
                    ModelConfig config = shape;
                    config.n_batch = n_batch;
                    config.seq_len = seq_len;
                    config.n_layers = n_layers;
                    INFO(describe(config));
                    CHECK(compare_cached_with_uncached(config, 500 + n_configs).rel_error < spec_tolerance);
                    ++n_configs;
                }
            }
        }
    }
    CHECK(n_configs == 7 * 2 * 4 * 2);
}

TEST_CASE("an explicit head dimension equal to D/H is the same model, bit for bit") {
    const auto implicit = make_config(2, 20, 64, 4, 2, 2);
    const auto explicit_dh = make_config(2, 20, 64, 4, 2, 2, 16);
    const ModelWeights w1 = make_weights(implicit, 3), w2 = make_weights(explicit_dh, 3);
    const auto inputs = make_inputs(implicit, 3);
    std::vector<float> out1(inputs.size()), out2(inputs.size());
    ForwardScratch s1(implicit, test_threads), s2(explicit_dh, test_threads);
    forward_full(implicit, w1, inputs.data(), out1.data(), s1);
    forward_full(explicit_dh, w2, inputs.data(), out2.data(), s2);
    CHECK(std::memcmp(out1.data(), out2.data(), out1.size() * sizeof(float)) == 0);
    // Another dh is another model: its weights have other shapes and its output differs.
    const auto wider = make_config(2, 20, 64, 4, 2, 2, 24);
    const ModelWeights w3 = make_weights(wider, 3);
    CHECK(w3.layers[0].wqkv.size() == (4 * 24 + 2 * 2 * 24) * 64);
    CHECK(w3.layers[0].wo.size() == 64 * 4 * 24);
    CHECK(w3.bytes() == ModelWeights::bytes_for(wider));
    ForwardScratch s3(wider, test_threads);
    std::vector<float> out3(inputs.size());
    forward_full(wider, w3, inputs.data(), out3.data(), s3);
    CHECK(relative_error(out3, out1) > 1e-2);
}

TEST_CASE("a whole generation through the cache reproduces every row of one uncached forward") {
    for (std::size_t n_kv_heads : {8u, 2u, 1u}) {
        const auto config = make_config(2, 40, 64, 8, n_kv_heads, 2);
        const ModelWeights weights = make_weights(config, 7);
        const std::vector<float> inputs = make_inputs(config, 7);
        std::vector<float> full_out(inputs.size());
        ForwardScratch full_scratch(config, test_threads, 16);
        forward_full(config, weights, inputs.data(), full_out.data(), full_scratch);

        KvCache cache(config, config.seq_len);
        DecodeScratch scratch(config, config.seq_len, test_threads);
        double worst = 0;
        for (std::size_t pos = 0; pos < config.seq_len; ++pos) {
            const auto x = gather_positions(inputs, config.n_batch, config.seq_len, config.model_dim, pos, 1);
            std::vector<float> y(x.size());
            decode_step(config, weights, cache, x.data(), y.data(), scratch);
            const auto expected = gather_positions(full_out, config.n_batch, config.seq_len, config.model_dim, pos, 1);
            worst = std::max(worst, relative_error(y, expected));
        }
        INFO(describe(config));
        CHECK(cache.length() == config.seq_len);
        CHECK(worst < spec_tolerance);
    }
}

TEST_CASE("the uncached forward matches the plain-loop reference model") {
    for (std::size_t n_kv_heads : {4u, 2u, 1u}) {
        const auto config = make_config(2, 70, 32, 4, n_kv_heads, 2);  // 70 rows: two tiles of 64
        const ModelWeights weights = make_weights(config, 3);
        const std::vector<float> inputs = make_inputs(config, 3);
        std::vector<float> out(inputs.size());
        ForwardScratch scratch(config, test_threads);
        forward_full(config, weights, inputs.data(), out.data(), scratch);
        INFO(describe(config));
        CHECK(relative_error(out, forward_reference(config, weights, inputs)) < spec_tolerance);
    }
    // With dh apart from D/H: H·dh = 48 > 32, H·dh = 20 < 32, and H = 3 not dividing D.
    for (const ModelConfig& config : {make_config(2, 70, 32, 4, 2, 2, 12), make_config(1, 33, 32, 4, 1, 2, 5),
                                      make_config(1, 20, 32, 3, 3, 1, 40)}) {
        const ModelWeights weights = make_weights(config, 3);
        const std::vector<float> inputs = make_inputs(config, 3);
        std::vector<float> out(inputs.size());
        ForwardScratch scratch(config, test_threads);
        forward_full(config, weights, inputs.data(), out.data(), scratch);
        INFO(describe(config));
        CHECK(relative_error(out, forward_reference(config, weights, inputs)) < spec_tolerance);
    }
}

TEST_CASE("kv heads equal to query heads is exactly the mha computation") {
    // The reference computes MHA head by head with its own K and V per head.
    const auto config = make_config(1, 9, 64, 8, 8, 2);
    const ModelWeights weights = make_weights(config, 5);
    const auto inputs = make_inputs(config, 5);
    KvCache cache(config, config.seq_len);
    DecodeScratch scratch(config, config.seq_len, test_threads);
    std::vector<float> y(config.model_dim);
    for (std::size_t pos = 0; pos < config.seq_len; ++pos) {
        decode_step(config, weights, cache, inputs.data() + pos * config.model_dim, y.data(), scratch);
    }
    const auto expected = forward_reference(config, weights, inputs);
    CHECK(relative_error(y, gather_positions(expected, 1, config.seq_len, config.model_dim, config.seq_len - 1, 1)) <
          spec_tolerance);
}

TEST_CASE("mha with kv weights shared across heads computes the same as its mqa version") {
    const auto mqa = make_config(2, 23, 64, 4, 1, 2);
    auto mha = mqa;
    mha.n_kv_heads = mqa.n_heads;
    const ModelWeights mqa_weights = make_weights(mqa, 9);
    ModelWeights mha_weights;
    const std::size_t dim = mqa.model_dim, dh = mqa.head_dim();
    for (const LayerWeights& layer : mqa_weights.layers) {
        LayerWeights copy;
        copy.wo = layer.wo;
        // Wq^T rows as they are; the single K head's rows (and V's) repeated once per query head.
        const std::vector<float> wqkv = layer.wqkv.to_f32();
        std::vector<float> rows(wqkv.begin(), wqkv.begin() + static_cast<std::ptrdiff_t>(dim * dim));
        for (std::size_t part = 0; part < 2; ++part) {
            const auto first = wqkv.begin() + static_cast<std::ptrdiff_t>((dim + part * dh) * dim);
            for (std::size_t h = 0; h < mha.n_heads; ++h) {
                rows.insert(rows.end(), first, first + static_cast<std::ptrdiff_t>(dh * dim));
            }
        }
        REQUIRE(rows.size() == mha.qkv_dim() * dim);
        copy.wqkv = WeightMatrix(WeightDtype::f32, mha.qkv_dim(), dim, rows);
        mha_weights.layers.push_back(std::move(copy));
    }
    const auto inputs = make_inputs(mqa, 9);
    std::vector<float> mqa_out(inputs.size()), mha_out(inputs.size());
    ForwardScratch mqa_scratch(mqa, test_threads), mha_scratch(mha, test_threads);
    forward_full(mqa, mqa_weights, inputs.data(), mqa_out.data(), mqa_scratch);
    forward_full(mha, mha_weights, inputs.data(), mha_out.data(), mha_scratch);
    CHECK(relative_error(mha_out, mqa_out) < 1e-6);
    // And a genuinely different MHA model does not agree, so the check above can fail.
    const ModelWeights other = make_weights(mha, 9);
    std::vector<float> other_out(inputs.size());
    forward_full(mha, other, inputs.data(), other_out.data(), mha_scratch);
    CHECK(relative_error(other_out, mqa_out) > 1e-2);
}

TEST_CASE("counted flops equal the spec formulas for both paths") {
    const ModelConfig configs[] = {make_config(1, 1, 64, 4, 4, 1),    make_config(3, 17, 96, 8, 2, 3),
                                   make_config(2, 64, 64, 4, 1, 2),   make_config(1, 200, 128, 8, 8, 1),
                                   make_config(1, 300, 192, 2, 1, 1), make_config(1, 150, 240, 20, 2, 1),
                                   make_config(2, 33, 96, 4, 2, 2, 64), make_config(1, 70, 64, 4, 1, 1, 40)};
    for (const ModelConfig& config : configs) {
        INFO(describe(config));
        const Comparison c = compare_cached_with_uncached(config, 1);
        CHECK(c.cached_flops.useful == step_flops(config, DecodePath::cached));
        CHECK(c.uncached_flops.useful == step_flops(config, DecodePath::uncached));
        // Executed: the useful work plus the padding each kernel documents, in every layer.
        const std::uint64_t attention_useful = 4ull * config.n_batch * config.n_heads * config.head_dim() * config.seq_len;
        const std::uint64_t attention_padding =
            expected_decode_executed(config, attention_useful, config.seq_len, test_threads) - attention_useful;
        CHECK(c.cached_flops.executed == c.cached_flops.useful + config.n_layers * attention_padding);
        CHECK(c.uncached_flops.executed ==
              c.uncached_flops.useful +
                  config.n_layers * causal_waste_flops(config, CausalAttentionScratch::default_block_rows));
    }
}

TEST_CASE("same seed gives the same output bit for bit and another seed does not") {
    const auto config = make_config(2, 33, 64, 8, 2, 2);
    auto run = [&](std::uint64_t seed) {
        const ModelWeights weights = make_weights(config, seed);
        const auto inputs = make_inputs(config, seed);
        std::vector<float> out(inputs.size());
        ForwardScratch scratch(config, test_threads);
        KvCache cache(config, config.seq_len + 1);
        forward_full(config, weights, inputs.data(), out.data(), scratch, &cache);
        DecodeScratch step_scratch(config, config.seq_len + 1, test_threads);
        std::vector<float> step_out(config.n_batch * config.model_dim);
        decode_step(config, weights, cache, out.data(), step_out.data(), step_scratch);
        out.insert(out.end(), step_out.begin(), step_out.end());
        return out;
    };
    const auto first = run(11), second = run(11), third = run(12);
    REQUIRE(first.size() == second.size());
    CHECK(std::memcmp(first.data(), second.data(), first.size() * sizeof(float)) == 0);
    CHECK(std::memcmp(first.data(), third.data(), first.size() * sizeof(float)) != 0);
}

TEST_CASE("a full cache refuses the next step instead of writing past its end") {
    const auto config = make_config(1, 2, 32, 4, 4, 1);
    const ModelWeights weights = make_weights(config, 1);
    KvCache cache(config, 2);
    DecodeScratch scratch(config, 2, test_threads);
    std::vector<float> x(config.model_dim, 0.5f), y(config.model_dim);
    decode_step(config, weights, cache, x.data(), y.data(), scratch);
    decode_step(config, weights, cache, x.data(), y.data(), scratch);
    CHECK_THROWS_AS(decode_step(config, weights, cache, x.data(), y.data(), scratch), std::out_of_range);
    CHECK(cache.length() == 2);
}

TEST_CASE("activations stay of order one through many layers") {
    const auto config = make_config(1, 16, 128, 8, 2, 12);
    const ModelWeights weights = make_weights(config, 4);
    const auto inputs = make_inputs(config, 4);
    std::vector<float> out(inputs.size());
    ForwardScratch scratch(config, test_threads);
    forward_full(config, weights, inputs.data(), out.data(), scratch);
    double sum_sq = 0;
    for (float v : out) sum_sq += double(v) * v;
    const double rms = std::sqrt(sum_sq / double(out.size()));
    CHECK(rms > 0.5);
    CHECK(rms < 3.0);
}

TEST_CASE("check_kernels runs every kernel of a point against its naive twin and they agree") {
    const auto config = make_config(2, 150, 64, 8, 2, 2);  // 150 positions: more than the 128 checked
    const ModelWeights weights = make_weights(config, 6);
    const auto inputs = make_inputs(config, 6);
    const auto step_in = gather_positions(inputs, config.n_batch, config.seq_len, config.model_dim, config.seq_len - 1, 1);
    KvCache cache(config, config.seq_len);
    fill_cache_seeded(config, cache, config.seq_len - 1, 6);
    const auto checks = check_kernels(config, weights, {step_in.data(), inputs.data(), &cache, test_threads});
    REQUIRE(checks.size() == 6);
    CHECK(checks[0].kernel == "linear (2 rows)");
    CHECK(checks[1].kernel == "attend_decode");
    CHECK(checks[2].kernel == "linear (2 rows, output projection)");
    CHECK(checks[3].kernel == "linear (256 rows)");
    // Blocks of 64: rows 0, 63, 64, 127, 128 and 149, the whole prompt's last.
    CHECK(checks[4].kernel == "attend_causal (150 positions, 6 rows sampled)");
    CHECK(checks[5].kernel == "linear (256 rows, output projection)");
    for (const KernelCheck& check : checks) {
        INFO(check.kernel);
        CHECK(check.rel_error < kernel_check_tolerance);
        CHECK(check.rel_error > 0);  // double and float sums differ: the two sides really ran
    }
    CHECK(cache.length() == config.seq_len - 1);
    // Without a cache or a prompt, the step's two projections are checked.
    const auto step_only = check_kernels(config, weights, {step_in.data(), nullptr, nullptr, test_threads});
    REQUIRE(step_only.size() == 2);
    CHECK(step_only[1].kernel == "linear (2 rows, output projection)");
    CHECK(step_only[1].rel_error < kernel_check_tolerance);
}

TEST_CASE("the causal check samples every block's edges, and spreads its blocks past a budget") {
    CHECK(sampled_causal_rows(1, 64, 8) == std::vector<std::size_t>{0});
    CHECK(sampled_causal_rows(65, 64, 8) == std::vector<std::size_t>{0, 63, 64});
    CHECK(sampled_causal_rows(200, 64, 8) == std::vector<std::size_t>{0, 63, 64, 127, 128, 191, 192, 199});
    // 100 blocks, 6 allowed: 1 and 2, and four spread from the first to the last (0, 33, 66, 99).
    const std::vector<std::size_t> spread = sampled_causal_rows(6400, 64, 6);
    CHECK(spread == std::vector<std::size_t>{0, 63, 64, 127, 128, 191, 2112, 2175, 4224, 4287, 6336, 6399});
}

TEST_CASE("check_kernels agrees with the naive twins with a head dimension apart from D/H") {
    const auto config = make_config(2, 40, 64, 4, 2, 1, 40);  // q is 160 wide
    const ModelWeights weights = make_weights(config, 6);
    const auto inputs = make_inputs(config, 6);
    const auto step_in = gather_positions(inputs, config.n_batch, config.seq_len, config.model_dim, config.seq_len - 1, 1);
    KvCache cache(config, config.seq_len);
    fill_cache_seeded(config, cache, config.seq_len - 1, 6);
    const auto checks = check_kernels(config, weights, {step_in.data(), inputs.data(), &cache, test_threads});
    REQUIRE(checks.size() == 6);
    for (const KernelCheck& check : checks) {
        INFO(check.kernel);
        CHECK(check.rel_error < kernel_check_tolerance);
        CHECK(check.rel_error > 0);
    }
}

TEST_CASE("activations stay of order one with H·dh four times D") {
    // Wo's variance follows its fan-in H·dh, not D: the residual stream keeps its scale.
    const auto config = make_config(1, 16, 64, 8, 2, 12, 32);
    const ModelWeights weights = make_weights(config, 4);
    const auto inputs = make_inputs(config, 4);
    std::vector<float> out(inputs.size());
    ForwardScratch scratch(config, test_threads);
    forward_full(config, weights, inputs.data(), out.data(), scratch);
    double sum_sq = 0;
    for (float v : out) sum_sq += double(v) * v;
    const double rms = std::sqrt(sum_sq / double(out.size()));
    CHECK(rms > 0.5);
    CHECK(rms < 3.0);
}

TEST_CASE("the inputs of some positions are those positions of the whole prompt, drawn alone") {
    const auto config = make_config(3, 20, 64, 4, 4, 1);
    const auto all = make_inputs(config, 8);
    for (std::size_t first : {0u, 7u, 19u}) {
        const std::size_t count = std::min<std::size_t>(5, config.seq_len - first);
        INFO("first=" << first);
        CHECK(make_input_positions(config, 8, first, count) ==
              gather_positions(all, config.n_batch, config.seq_len, config.model_dim, first, count));
    }
    CHECK(make_input_positions(config, 9, 19, 1) != gather_positions(all, 3, 20, 64, 19, 1));
}

TEST_CASE("relative_error fails on a NaN or infinity on either side and on different sizes") {
    const std::vector<float> good{1.0f, -2.0f, 3.0f};
    CHECK(relative_error(good, good) == 0.0);
    CHECK(relative_error(std::vector<float>{1.0f, -2.0f, 3.5f}, good) == doctest::Approx(0.5 / 3.0));
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    for (float bad : {nan, inf, -inf}) {
        const std::vector<float> broken{1.0f, bad, 3.0f};
        INFO("bad=" << bad);
        CHECK_FALSE(relative_error(broken, good) < spec_tolerance);
        CHECK_FALSE(relative_error(good, broken) < spec_tolerance);  // the expected side broken
    }
    CHECK_FALSE(relative_error(std::vector<float>{1.0f, -2.0f}, good) < spec_tolerance);
    CHECK_FALSE(relative_error(good, std::vector<float>{1.0f, -2.0f, 3.0f, 4.0f}) < spec_tolerance);
    CHECK_FALSE(relative_error(std::vector<float>{}, std::vector<float>{}) < spec_tolerance);
}

TEST_CASE("a raised stop flag ends the forward, its prefill and the seeded fill before any work") {
    const auto config = make_config(2, 40, 64, 4, 2, 3);
    const ModelWeights weights = make_weights(config, 2);
    const auto inputs = make_inputs(config, 2);
    std::vector<float> out(inputs.size());
    ForwardScratch scratch(config, test_threads);
    KvCache cache(config, config.seq_len);
    const std::atomic<bool> stop{true}, go{false};
    const FlopCount stopped = forward_full(config, weights, inputs.data(), out.data(), scratch, &cache, &stop);
    CHECK(stopped.useful == 0);
    CHECK(stopped.executed == 0);
    CHECK(cache.length() == 0);
    CHECK(attend_causal(config, 0, scratch.qkv.data(), out.data(), scratch.attention_scratch, &stop).executed == 0);
    fill_cache_seeded(config, cache, config.seq_len - 1, 2, &stop);
    CHECK(cache.length() == 0);
    // An unset flag changes nothing.
    const FlopCount full = forward_full(config, weights, inputs.data(), out.data(), scratch, &cache, &go);
    CHECK(full.useful == step_flops(config, DecodePath::uncached));
    CHECK(cache.length() == config.seq_len);
    fill_cache_seeded(config, cache, config.seq_len - 1, 2, &go);
    CHECK(cache.length() == config.seq_len - 1);
}
