// step_equivalence_error(): docs/model.md's equivalence measure of one decode step against another.
#pragma once

#include "kvbench/engine/config.hpp"
#include "kvbench/engine/step_kernels.hpp"
#include "kvbench/engine/weights.hpp"

#include <cstddef>
#include <cstdint>
#include <span>

namespace kvbench {

// What a step computed for the newest position of every sequence.
struct StepRecord {
    std::span<const float> output;           // (n_batch, model_dim) floats: the residual stream after the last layer
    std::span<const float> attention_trace;  // (n_layers, n_batch, q_dim) floats: PathOptions::attention_trace
    // (n_layers, n_batch, model_dim) floats of a full block: PathOptions::mlp_trace; else empty.
    std::span<const float> mlp_trace = {};
};

// The worst relative error (reference.hpp's relative_error) of `actual` against `expected`
// over the output, each layer's attention output and, in a full block, what each layer's MLP
// (or experts) added, each layer on its own scale. The output
// alone hides the block: it is x + y, where x is as large as the input whatever the step
// computed, while the attention output of a long context shrinks like 1/sqrt(N) for random
// values (docs/model.md, "Equivalence").
// Requires: both records shaped as above for config.
double step_equivalence_error(const ModelConfig& config, const StepRecord& actual, const StepRecord& expected);

// The short context --verify checks beside a point's own N. At a long context the output of
// this model's attention keeps a mean of order 1/sqrt(D): K and V are projections of the same
// inputs, so the softmax weights and the values correlate. One key of N then moves what the
// block computes by about sqrt(D)/N of its scale (3e-5 at N = 131072, D = 16), below any
// tolerance that rounding needs, and a step that lost a key would pass. At 33 positions every
// key weighs a few percent, and the newest one sits alone in the last block of 16 or 32 keys (in
// the last vector of the fused tiles' blocks of 64).
inline constexpr std::size_t verify_short_context = 33;

// docs/model.md's equivalence at a context of n_positions: the uncached forward of the
// config's own first n_positions inputs (make_input_positions of `seed`) on `reference`
// kernels, which also fills a cache of config.kv_dtype, then one cached step on `timed` for
// the last of them; returns step_equivalence_error of the step against the forward's last row.
// Allocates a cache, scratch and inputs for n_positions.
// Requires: config validated, 1 <= n_positions <= config.seq_len, n_threads >= 1.
double verify_at_context(const ModelConfig& config, const ModelWeights& weights, std::uint64_t seed,
                         std::size_t n_positions, const StepKernels& timed, const StepKernels& reference,
                         std::size_t n_threads);

}  // namespace kvbench
