// attend_decode(): the cached step's attention over the KV cache, its kernel, and the vectorised exp.
#pragma once

#include "kvbench/engine/config.hpp"
#include "kvbench/engine/kv_cache.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kvbench {

// y[i] = e^x[i] for i < n, vectorised (AVX-512, AVX2 or plain loops, as compiled): Cephes'
// degree-5 polynomial on x - k·ln2, scaled by 2^k. Within 1.5e-7 relative of e^x for x in
// [-87.3, 88.3] (8.2e-8 measured); exactly 0 below -87.34, where e^x would be subnormal, and
// for -inf; e^88.38 above 88.38; NaN stays NaN. x and y may be the same array.
void exp_polynomial(const float* x, std::size_t n, float* y);

// row = softmax(row) over its n entries, vectorised; the max is subtracted first, so any
// finite logits are safe. Requires: n >= 1, row finite.
void softmax_row(float* row, std::size_t n);

// Keys per block of attend_chunk (at most; 32 with AVX-512): a block's scores are a few
// vectors per query row.
inline constexpr std::size_t chunk_key_block = 32;

// One attend_chunk problem: n_rows query rows against n_ctx keys and values of one KV head.
struct ChunkProblem {
    const float* q = nullptr;       // (n_rows, q_stride): query r at q + r·q_stride, head_dim floats
    std::size_t q_stride = 0;
    std::size_t n_rows = 0;
    const float* keys = nullptr;    // (n_ctx, kv_stride): key t at keys + t·kv_stride, head_dim floats
    const float* values = nullptr;  // (n_ctx, kv_stride), as keys
    std::size_t kv_stride = 0;
    std::size_t n_ctx = 0;
    std::size_t head_dim = 0;
    float scale = 1.0f;             // applied to q·k before the softmax
};

// Where attend_chunk writes, left unnormalised so that slices of one context can be merged
// (flash-decoding's split-K), with s_rt = scale · q_r · k_t:
//   row_max[r] = max_t s_rt,  row_sum[r] = Σ_t e^(s_rt - row_max[r]),
//   out_r = Σ_t e^(s_rt - row_max[r]) · v_t.
struct ChunkResult {
    float* out = nullptr;      // (n_rows, out_stride), head_dim floats per row
    std::size_t out_stride = 0;
    float* row_max = nullptr;  // (n_rows)
    float* row_sum = nullptr;  // (n_rows)
};

// Per-thread buffers of attend_chunk for up to max_rows queries of head_dim floats, sized once.
// head_dim is padded to padded_dim (a multiple of 16) so every row is whole vectors.
class ChunkWorkspace {
public:
    // Requires: max_rows >= 1, head_dim >= 1.
    ChunkWorkspace(std::size_t max_rows, std::size_t head_dim);
    std::size_t bytes() const { return storage_.size() * sizeof(float); }
    // bytes() of a workspace built with these arguments, without building it.
    static std::size_t bytes_for(std::size_t max_rows, std::size_t head_dim);

    std::size_t max_rows() const { return max_rows_; }
    std::size_t head_dim() const { return head_dim_; }
    std::size_t padded_dim() const { return layout_.padded_dim; }

    float* queries() { return base() + layout_.queries; }      // (max_rows, padded_dim): scale · q
    float* outputs() { return base() + layout_.outputs; }      // (max_rows, padded_dim): running Σ p·v
    float* probs() { return base() + layout_.probs; }          // (max_rows, chunk_key_block): a block's scores, then p
    float* lane_sums() { return base() + layout_.lane_sums; }  // (max_rows, 16): Σ p, one partial per lane
    float* row_max() { return base() + layout_.row_max; }      // (max_rows): running max score
    float* rescale() { return base() + layout_.rescale; }      // (max_rows): e^(old max - new max)
    float* keys_t() { return base() + layout_.keys_t; }        // (padded_dim, chunk_key_block): K block transposed
    float* values() { return base() + layout_.values; }        // (chunk_key_block, padded_dim): V block packed

private:
    // Offsets in floats from base(), each region a whole number of 64-byte lines.
    struct Layout {
        std::size_t padded_dim, queries, outputs, probs, lane_sums, row_max, rescale, keys_t, values, total;
    };
    static Layout layout(std::size_t max_rows, std::size_t head_dim);
    // The first 64-byte boundary inside storage_, recomputed so copies stay aligned.
    float* base();

    std::size_t max_rows_;
    std::size_t head_dim_;
    Layout layout_;
    std::vector<float> storage_;  // (layout_.total + 15): the regions above plus alignment slack
};

// Softmax attention of problem.n_rows queries over keys and values: one pass over blocks of
// chunk_key_block keys with an online softmax (running max and sum per row), a block's scores
// never leaving L1; each key and value row is loaded from memory once for all rows.
// Requires: 1 <= n_rows <= workspace.max_rows(), head_dim == workspace.head_dim(), n_ctx >= 1,
// q_stride, kv_stride >= head_dim, out_stride >= head_dim.
void attend_chunk(const ChunkProblem& problem, const ChunkResult& result, ChunkWorkspace& workspace);

// Scratch of attend_decode, sized once for the thread count; its size does not depend on
// the context, which attend_chunk streams in blocks.
struct DecodeAttentionScratch {
    DecodeAttentionScratch(const ModelConfig& config, std::size_t max_seq_len, std::size_t n_threads);
    std::size_t bytes() const;
    // What the constructor allocates, without allocating it (for memory estimates).
    static std::size_t bytes_for(const ModelConfig& config, std::size_t n_threads);

    std::size_t n_threads;
    std::size_t max_seq_len;
    std::size_t max_splits;                 // context slices per (batch, KV head) at most
    std::vector<float> partial_out;         // (max_splits, n_batch, n_heads, head_dim)
    std::vector<float> partial_max;         // (max_splits, n_batch, n_heads)
    std::vector<float> partial_sum;         // (max_splits, n_batch, n_heads)
    std::vector<ChunkWorkspace> workspaces; // (n_threads), each for group_size rows
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
