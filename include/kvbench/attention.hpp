// attend_decode(): the cached step's attention, one new token per sequence over its KV cache.
#pragma once

#include "kvbench/config.hpp"
#include "kvbench/kv_cache.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kvbench {

// Softmax attention of the group_size query heads that share one KV head, over a slice
// of context, left unnormalised so slices can be merged (flash-decoding's split-K):
//   scores[i][t] = scale · q_i · k_t,  row_max[i] = max_t scores[i][t],
//   row_sum[i] = Σ_t exp(scores[i][t] - row_max[i]),  out_i = Σ_t exp(scores[i][t] - row_max[i]) · v_t.
// Each key and value row is read once for all group_size queries.
// q: (group_size, head_dim); keys, values: (n_ctx, head_dim) contiguous;
// scores: (group_size, score_stride) scratch; out: (group_size, head_dim); row_max, row_sum: (group_size).
// Requires: n_ctx >= 1, score_stride >= n_ctx.
void attend_chunk(const float* q, const float* keys, const float* values, std::size_t n_ctx,
                  std::size_t group_size, std::size_t head_dim, float scale, float* scores,
                  std::size_t score_stride, float* out, float* row_max, float* row_sum);

// Scratch of attend_decode, sized once for the longest context and the thread count.
struct DecodeAttentionScratch {
    DecodeAttentionScratch(const ModelConfig& config, std::size_t max_seq_len, std::size_t n_threads);
    std::size_t bytes() const;

    std::size_t n_threads;
    std::size_t max_seq_len;
    std::size_t max_splits;             // context slices per (batch, KV head) at most
    std::vector<float> scores;          // (n_batch, n_heads, max_seq_len)
    std::vector<float> partial_out;     // (max_splits, n_batch, n_heads, head_dim)
    std::vector<float> partial_max;     // (max_splits, n_batch, n_heads)
    std::vector<float> partial_sum;     // (max_splits, n_batch, n_heads)
};

// How many context slices attend_decode uses: enough (batch, KV head, slice) tasks to
// occupy every thread when B·G is small, never slices shorter than 64 positions.
std::size_t decode_split_count(std::size_t n_tasks, std::size_t n_ctx, std::size_t n_threads,
                               std::size_t max_splits);

// For every batch row b and query head h (KV head g = h / group_size):
//   out[b][h·dh ..] = softmax(q_h · K_g[0..n_ctx)^T / sqrt(dh)) · V_g[0..n_ctx).
// q: (n_batch, q_stride) with query head h at columns [h·dh, (h+1)·dh); out: (n_batch, model_dim).
// Returns the FLOPs executed: 4 · B · H · dh · n_ctx.
// Requires: 1 <= n_ctx <= scratch.max_seq_len and n_ctx <= cache.max_seq_len().
std::uint64_t attend_decode(const ModelConfig& config, const float* q, std::size_t q_stride,
                            const KvCache& cache, std::size_t layer, std::size_t n_ctx, float* out,
                            DecodeAttentionScratch& scratch);

}  // namespace kvbench
