// Plain-loop reference implementations (llm.c's *_naive), no BLAS: what every fast path is held to.
#pragma once

#include "kvbench/engine/config.hpp"
#include "kvbench/engine/weights.hpp"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace kvbench {

// The naive twins of the kernels are declared beside them: linear_naive (linear.hpp),
// attend_decode_naive (attention.hpp), attend_causal_naive (causal_attention.hpp).

// Normalised attention of group_size queries sharing one KV head over n_ctx positions.
// q: (group_size, head_dim) floats; keys, values: (n_ctx, head_dim) floats; out: (group_size,
// head_dim) floats. sink_logit joins the softmax with no value (docs/model.md, "Attention
// sinks"); minus infinity, the default, is no sink. Returns the multiply-adds it did (2 FLOPs each).
std::uint64_t attention_reference(const float* q, const float* keys, const float* values, std::size_t n_ctx,
                         std::size_t group_size, std::size_t head_dim, float* out,
                         double sink_logit = -std::numeric_limits<double>::infinity());

// The model of docs/model.md written as directly as possible: every layer, every position, separate
// Wq, Wk, Wv, the causal mask as a loop bound. inputs and result: (n_batch, seq_len, model_dim);
// q and the head outputs are H·dh wide, which is model_dim only when dh = D/H.
std::vector<float> forward_reference(const ModelConfig& config, const ModelWeights& weights,
                                     std::span<const float> inputs);

// The equivalence measure of docs/model.md: max |actual - expected| / max |expected|. Returns 0
// when both are all zero, and infinity (which fails every tolerance) when only `expected` is, when
// either side holds a NaN or an infinity, or when the sizes differ or are zero.
double relative_error(std::span<const float> actual, std::span<const float> expected);

}  // namespace kvbench
