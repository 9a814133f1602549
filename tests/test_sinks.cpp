// Attention sinks (docs/model.md, "Attention sinks"): a learned logit per query head that joins
// the softmax with no value, on both paths and their naive twins.
#include "kvbench/engine/attention.hpp"
#include "kvbench/engine/causal_attention.hpp"
#include "kvbench/engine/decoder.hpp"
#include "kvbench/engine/kernel_check.hpp"
#include "kvbench/engine/reference.hpp"
#include "kvbench/engine/weights.hpp"
#include "kvbench/measure/equivalence.hpp"

#include "paths_agree.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

using namespace kvbench;
using kvbench::test::check_paths_agree;
using kvbench::test::make_config;
using kvbench::test::random_vector;

namespace {

using kvbench::test::test_threads;

ModelConfig with_sinks(ModelConfig config) {
    config.attention_sinks = true;
    validate(config);
    return config;
}

}  // namespace

TEST_CASE("a sink logit takes its share of the softmax and gives no value") {
    // One key: softmax over {s, sink} gives the key e^s / (e^s + e^sink), so out = v times it.
    const std::vector<float> q{1.0f, 0.0f, 0.0f, 0.0f}, k{2.0f, 0.0f, 0.0f, 0.0f}, v{1.0f, 2.0f, 3.0f, 4.0f};
    std::vector<float> out(4);
    const double score = 2.0 / 2.0;  // q·k / sqrt(4)
    const double sink = 0.5;
    attention_reference(q.data(), k.data(), v.data(), 1, 1, 4, out.data(), sink);
    const double share = std::exp(score) / (std::exp(score) + std::exp(sink));
    CHECK(out[3] == doctest::Approx(4.0 * share).epsilon(1e-6));
    attention_reference(q.data(), k.data(), v.data(), 1, 1, 4, out.data());
    CHECK(out[3] == doctest::Approx(4.0));
}

TEST_CASE("attend_decode and attend_causal with sinks match their naive twins, split or not") {
    for (const std::size_t n_threads : {1u, 4u}) {
        const ModelConfig config = with_sinks(make_config(2, 300, 64, 4, 2, 1));  // dh = 16
        const std::size_t n = config.seq_len;
        const auto sinks = random_vector(config.n_heads, 5, 2.0f);
        KvCache cache(config, n);
        fill_cache_seeded(config, cache, n, 6);
        const auto q = random_vector(config.n_batch * config.q_dim(), 7);
        DecodeAttentionScratch decode_scratch(config, n, n_threads);
        std::vector<float> fast(config.n_batch * config.q_dim()), naive(fast.size()), sinkless(fast.size());
        attend_decode(config, q.data(), config.q_dim(), cache, 0, n, fast.data(), decode_scratch, sinks.data());
        attend_decode_naive(config, q.data(), config.q_dim(), cache, 0, n, naive.data(), decode_scratch, sinks.data());
        attend_decode(config, q.data(), config.q_dim(), cache, 0, n, sinkless.data(), decode_scratch);
        INFO("threads=" << n_threads);
        CHECK(relative_error(fast, naive) < 1e-5);
        CHECK(relative_error(sinkless, naive) > 1e-3);  // the sinks matter

        const auto qkv = random_vector(config.n_batch * n * config.qkv_dim(), 8);
        std::vector<float> causal_fast(config.n_batch * n * config.q_dim()), causal_naive(causal_fast.size());
        CausalAttentionScratch causal_scratch(n, n_threads);
        attend_causal(config, 0, qkv.data(), causal_fast.data(), causal_scratch, nullptr, sinks.data());
        attend_causal_naive(config, 0, qkv.data(), causal_naive.data(), causal_scratch, nullptr, sinks.data());
        CHECK(relative_error(causal_fast, causal_naive) < 1e-5);
    }
}

TEST_CASE("the cached step equals the uncached forward with sinks, and with sinks on window layers") {
    for (const bool windows : {false, true}) {
        ModelConfig config = make_config(2, 40, 32, 4, 2, 2);
        if (windows) config.layer_windows = {8, 0};  // GPT-OSS: sinks on every layer, every other one local
        config = with_sinks(config);
        const ModelWeights weights = make_weights(config, 11);
        REQUIRE(weights.layers[1].sinks.size() == 4);
        check_paths_agree(config, weights, 11, {1, 9, 40}, test_threads);
        const std::vector<float> inputs = make_inputs(config, 12);

        KvCache cache(config, 40);
        fill_cache_seeded(config, cache, 39, 13);
        const std::vector<float> step_in = make_input_positions(config, 13, 39, 1);
        for (const KernelCheck& check :
             check_kernels(config, weights, {step_in.data(), inputs.data(), &cache, test_threads, nullptr})) {
            INFO(check.kernel);
            CHECK(check.rel_error < kernel_check_tolerance);
        }
    }
}

TEST_CASE("sink logits are weights of their own stream: the matrices are those of the model without them") {
    const ModelConfig plain = make_config(1, 4, 32, 4, 2, 2);
    const ModelWeights without = make_weights(plain, 3);
    const ModelWeights with = make_weights(with_sinks(plain), 3);
    CHECK(without.layers[1].wo.to_f32() == with.layers[1].wo.to_f32());
    CHECK(without.layers[0].sinks.empty());
    // Hand count: 4 heads · 2 layers of f32 logits beside the matrices.
    CHECK(with.bytes() - without.bytes() == 4 * 2 * sizeof(float));
    CHECK(ModelWeights::bytes_for(with_sinks(plain)) == with.bytes());
}
