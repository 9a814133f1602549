// attend_causal(): the uncached path's attention, every position of every sequence at once.
#pragma once

#include "kvbench/engine/config.hpp"
#include "kvbench/engine/flop_count.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace kvbench {

// Scratch of attend_causal: the scores of one block of query rows per thread, so extra
// memory is O(threads · block_rows · N), never H · N².
struct CausalAttentionScratch {
    // Requires: block_rows >= 1.
    CausalAttentionScratch(std::size_t max_seq_len, std::size_t n_threads,
                           std::size_t block_rows = default_block_rows);
    std::size_t bytes() const;
    // What the constructor allocates, without allocating it (for memory estimates).
    static std::size_t bytes_for(std::size_t max_seq_len, std::size_t n_threads,
                                 std::size_t block_rows = default_block_rows);

    // Tall enough for sgemm to run near its peak on Q·K^T, short enough that the diagonal
    // blocks' masked half stays a small fraction of the work.
    static constexpr std::size_t default_block_rows = 64;

    std::size_t n_threads;
    std::size_t max_seq_len;
    std::size_t block_rows;     // query rows per block
    std::vector<float> scores;  // (n_threads, block_rows, max_seq_len) floats: a block's scores, then p
};

// Causal softmax attention of layer `layer` for all seq_len positions of every batch row:
//   out[b, i, h] = softmax_{i - W < t <= i}(q[b, i, h] · k[b, t, g] / sqrt(dh)) · v[b, ·, g],  g = h / group_size,
// W the layer's sliding window (config.window_of; none for a global layer).
// qkv: (n_batch · seq_len, qkv_dim) floats, each row q | k | v as the fused projection writes it;
// out: (n_batch · seq_len, q_dim) floats. A block of block_rows queries multiplies only the keys
// from its first row's window to its last row, so the upper triangle (and the keys left of every
// window) is skipped except inside the blocks a mask's edge crosses.
// `stop`, when given, is read before each (batch row, head, block) task; once it is set the
// remaining tasks are skipped and `out` is left incomplete (the caller sees the flag too).
// sinks: null, or (n_heads) sink logits that join each head's softmax with no value.
// Requires: config.seq_len <= scratch.max_seq_len.
FlopCount attend_causal(const ModelConfig& config, std::size_t layer, const float* qkv, float* out,
                        CausalAttentionScratch& scratch, const std::atomic<bool>* stop = nullptr,
                        const float* sinks = nullptr);

// attend_causal's naive twin (src/engine/reference.cpp): attention_reference per (batch row,
// head, position) over the positions up to it within its window, double accumulators, one thread; the scratch is
// not used. Returns the FLOPs it executed, counted one multiply-add at a time.
FlopCount attend_causal_naive(const ModelConfig& config, std::size_t layer, const float* qkv, float* out,
                              CausalAttentionScratch& scratch, const std::atomic<bool>* stop = nullptr,
                              const float* sinks = nullptr);

}  // namespace kvbench
