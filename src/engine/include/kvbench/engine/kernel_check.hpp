// check_kernels(): every fast kernel against its naive twin on one point's own data (llm.c's discipline).
#pragma once

#include "kvbench/engine/config.hpp"
#include "kvbench/engine/decoder.hpp"
#include "kvbench/engine/kv_cache.hpp"
#include "kvbench/engine/step_kernels.hpp"
#include "kvbench/engine/weights.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace kvbench {

// A fast kernel and its naive twin disagree when their relative error (relative_error in
// reference.hpp: max |fast - naive| / max |naive|) reaches this (docs/measuring.md#kernel-check;
// the measure is docs/model.md#equivalence's).
inline constexpr double kernel_check_tolerance = 1e-4;

struct KernelCheck {
    std::string kernel;  // what ran, e.g. "linear (1 row)", "attend_decode"
    double rel_error = 0;
};

// What a point's kernels are checked on. The naive twins run on one thread in double, so the
// expensive shapes are cut down: the many-row projections to their first 256 outputs, and the
// causal attention, which runs on the whole prompt, to a sample of query rows (docs/measuring.md).
struct KernelCheckInputs {
    // (Q·n_batch, model_dim) floats: the step's Q = n_query_tokens tokens of every sequence,
    // token-major (its first n_batch rows are the first token's); required, whichever paths run
    const float* step_in = nullptr;
    // (n_batch, seq_len, model_dim) floats: every position's input, for the uncached path's
    // kernels; null when that path does not run.
    const float* prompt = nullptr;
    // Holds positions [0, seq_len - Q) of every layer; the step's k and v are written at
    // seq_len - Q to seq_len - 1 (as a decode step would) without changing its length. Null:
    // attend_decode is not checked.
    KvCache* cache = nullptr;
    std::size_t n_threads = 1;
    // Buffers the uncached path's checks may overwrite (the point's own, built for config):
    // the causal attention of the whole prompt needs O(N·D) of them. Null: allocated here.
    ForwardScratch* forward_scratch = nullptr;
};

// Runs `kernels` and their naive twins on layer 0's weights, and returns each kernel's
// relative error:
// - linear on the step's rows: the fused Wqkv projection, and the output projection Wo
//   (in_dim H·dh, beta = 1 onto the residual);
// - attend_decode, with a cache; with Q > 1 query tokens, also the step's attend_decode_tokens
//   (one attend_decode per token where the table has none) against attend_decode_tokens_naive;
// - with a prompt: linear on its rows (Wqkv, and Wo with beta = 1), and attend_causal on every
//   position, compared at the first and last query row of every block of
//   CausalAttentionScratch::default_block_rows (past a budget of about a second, of a spread of
//   blocks: sampled_causal_rows), each row on one head, turn by turn.
// Allocates its own small buffers (and the prompt's, without forward_scratch).
// Requires: config validated; buffers shaped as above for config.
std::vector<KernelCheck> check_kernels(const ModelConfig& config, const ModelWeights& weights,
                                       const KernelCheckInputs& inputs, const StepKernels& kernels = fast_kernels);

// attend_causal's output `fast_out` ((n_batch · seq_len, q_dim) floats) for layer 0 (with its
// window) against attention_reference at sampled_causal_rows, within about a second of naive work.
// qkv: (n_batch · seq_len, qkv_dim) floats as attend_causal read them; sinks as attend_causal's.
KernelCheck check_causal_attention(const ModelConfig& config, const float* qkv, const float* fast_out,
                                   const float* sinks);

// A full layer's second half on the step's rows, each against its naive twin: SwiGLU's gate on
// the MLP's (or the first expert's) product, then what layer 0's MLP, or its router and experts,
// add to a zero stream. normed: (n_batch, model_dim) floats, the MLP's input. Appends to checks.
void check_feed_forward(const ModelConfig& config, const LayerWeights& layer, const StepKernels& kernels,
                        const float* normed, std::vector<KernelCheck>& checks);

// The query rows of a prompt of seq_len positions whose causal attention check_kernels compares,
// ascending: every block's first and last row when there are at most max_blocks blocks, else
// those of blocks 1 and 2 and of max_blocks - 2 blocks spread evenly from the first to the last.
// Requires: seq_len >= 1, block_rows >= 1, max_blocks >= 4.
std::vector<std::size_t> sampled_causal_rows(std::size_t seq_len, std::size_t block_rows, std::size_t max_blocks);

}  // namespace kvbench
