// What the multi-token tests share (docs/model.md, "Multi-token queries"): the layouts they
// build, the fault every one-pass kernel is held to (a token seeing the draft's next token),
// and the two ways such a fault must show: --check against the naive twin, and the step against
// the uncached forward.
#pragma once

#include "kvbench/engine/cost_model.hpp"
#include "kvbench/engine/decoder.hpp"
#include "kvbench/engine/kernel_check.hpp"
#include "kvbench/engine/kv_cache.hpp"
#include "kvbench/engine/reference.hpp"
#include "kvbench/engine/weights.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace kvbench::test {

inline ModelConfig paged_cache(ModelConfig config, std::size_t block) {
    config.kv_block = block;
    return config;
}

// The step's tokens one attend_decode at a time: the table of a path without the one-pass kernel.
inline constexpr StepKernels per_token_kernels{&linear, &attend_decode, &attend_causal};

// The cached step of Q tokens against the per-token step and the uncached forward's last Q
// rows (f32 caches: the forward computes in f32, so a reduced cache is held to the per-token
// step only), its useful FLOPs against the cost model's.
inline void check_step_equals_forward(const ModelConfig& config) {
    CAPTURE(describe(config));
    const std::size_t n_tokens = config.n_query_tokens;
    const ModelWeights weights = make_weights(config, 13);
    const std::vector<float> inputs = make_inputs(config, 13);
    std::vector<float> full_out(inputs.size());
    ForwardScratch forward_scratch(config, test_threads);
    KvCache cache(config, config.seq_len);
    forward_full(config, weights, inputs.data(), full_out.data(), forward_scratch, &cache);
    const std::vector<float> step_in = make_step_inputs(config, 13);
    std::vector<float> one(step_in.size()), each(step_in.size());
    DecodeScratch scratch(config, config.seq_len, test_threads);
    cache.roll_back(config.seq_len - n_tokens);
    const FlopCount one_flops = decode_step(config, weights, cache, step_in.data(), one.data(), scratch);
    cache.roll_back(config.seq_len - n_tokens);
    const FlopCount each_flops =
        decode_step(config, weights, cache, step_in.data(), each.data(), scratch, {&per_token_kernels, {}, {}});
    CHECK(relative_error(one, each) < 1e-5);
    CHECK(one_flops.useful == each_flops.useful);
    if (!config.has_experts()) CHECK(one_flops.useful == step_flops(config, DecodePath::cached));
    if (config.key_dtype() == KvDtype::f32) CHECK(relative_error(one, gather_newest(config, full_out)) < spec_tolerance);
}

// A one-pass kernel's fault: token i attends at token i + 1's context, so it sees the draft's
// next token (the last token sees what it should).
inline FlopCount attend_tokens_seeing_next(const ModelConfig& config, const float* q, std::size_t q_stride,
                                           const KvCache& cache, std::size_t layer, std::size_t n_ctx, float* out,
                                           DecodeAttentionScratch& scratch, const float* sinks) {
    const std::size_t n_tokens = config.n_query_tokens;
    FlopCount count;
    for (std::size_t i = 0; i < n_tokens; ++i) {
        count += attend_decode(config, q + i * config.n_batch * q_stride, q_stride, cache, layer,
                               std::min(n_ctx, n_ctx - n_tokens + 2 + i), out + i * config.n_batch * config.q_dim(),
                               scratch, sinks);
    }
    return count;
}
inline constexpr StepKernels seeing_next{.linear = &linear,
                                         .attend_decode = &attend_decode,
                                         .attend_causal = &attend_causal,
                                         .attend_decode_tokens = &attend_tokens_seeing_next};

// The last n_tokens positions of config as one step through `faulty`: its multi-token kernel
// must fail --check against its naive twin, and the step must differ from the uncached forward.
inline void check_fault_is_caught(const ModelConfig& config, std::size_t n_tokens, const StepKernels& faulty,
                                  std::uint64_t seed) {
    const ModelWeights weights = make_weights(config, seed);
    const std::vector<float> step_in = make_step_inputs(config, seed);
    KvCache cache(config, config.seq_len);
    fill_cache_seeded(config, cache, config.seq_len - n_tokens, seed);
    bool checked = false;
    for (const KernelCheck& check : check_kernels(config, weights, {step_in.data(), nullptr, &cache, 2}, faulty)) {
        CAPTURE(check.kernel);
        if (!check.kernel.starts_with("attend_decode_tokens")) continue;
        CHECK(check.rel_error > 10 * kernel_check_tolerance);
        checked = true;
    }
    CHECK(checked);

    const std::vector<float> inputs = make_inputs(config, seed);
    std::vector<float> full_out(inputs.size());
    ForwardScratch forward_scratch(config, test_threads);
    forward_full(config, weights, inputs.data(), full_out.data(), forward_scratch, &cache);
    cache.roll_back(config.seq_len - n_tokens);
    std::vector<float> out(step_in.size());
    DecodeScratch scratch(config, config.seq_len, test_threads);
    decode_step(config, weights, cache, step_in.data(), out.data(), scratch, {&faulty, {}, {}});
    CHECK(relative_error(out, gather_newest(config, full_out)) > 10 * spec_tolerance);
}

}  // namespace kvbench::test
