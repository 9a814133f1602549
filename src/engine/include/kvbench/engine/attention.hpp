// attend_decode(): the cached step's attention, every query head of the new token over the KV cache.
//
// Words that cut the work, each with one meaning in the engine:
// - group: the group_size query heads that share one KV head (h / group_size); a kernel call
//   attends a whole group, so each key and value is read from memory once for all its heads.
// - split: one of the consecutive parts the context of a (batch row, KV head) is cut into when
//   B·G alone would leave threads idle (flash-decoding's split-K); each split yields a partial
//   softmax, and the splits are merged in a fixed order.
// - task: one unit handed to a thread: (batch row, KV head, split) here, (batch row, head,
//   block of query rows) in the uncached path (causal_attention.hpp).
// - block: a run of consecutive positions processed together: up to max_key_block keys that
//   the decode kernel scores, softmaxes and accumulates while they sit in L1; in the uncached
//   path, block_rows query rows whose scores one sgemm computes.
// - tile: a register tile, rows × vectors of accumulators held in registers across a loop
//   (score tiles, output tiles), in the kernel's back-end code.
// The kernels are src/engine/kernels/: attend_group (src/engine/attend_group.hpp) picks one for
// the group's shape; the tiled one is written once against the vector primitives of
// kernels/simd.hpp, each instruction set one back-end file there.
#pragma once

#include "kvbench/engine/config.hpp"
#include "kvbench/engine/flop_count.hpp"
#include "kvbench/engine/kv_cache.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace kvbench {

struct DecodeAttentionScratch;  // below
struct SharedPrefixScratch;     // the prefix pass's (src/engine/shared_prefix_attention.hpp)
struct MultiTokenScratch;       // the multi-token pass's (src/engine/multi_token_attention.hpp)

// For every batch row b and query head h (KV head g = h / group_size), over the n positions
// [n_ctx - n, n_ctx) that the newest token n_ctx - 1 of layer `layer` sees, n =
// config.attended_positions(layer, n_ctx) (n_ctx, or its sliding window; in a ring of
// W + Q - 1 for Q query tokens, read as the two pieces either side of its wrap):
//   out[b][h·dh ..] = softmax(q_h · K_g^T / sqrt(dh)) · V_g.
// q: (n_batch, q_stride) floats with query head h at columns [h·dh, (h+1)·dh);
// out: (n_batch, q_dim) floats. A ragged batch's row b sees n_ctx - config.seq_lag_of(b) in
// place of n_ctx (docs/model.md, "Ragged batches"). Returns useful FLOPs 4·H·dh·Σ_b n_b
// (docs/counting.md)
// and the FLOPs executed: attend_group's count summed over the (batch row, KV head, split) tasks.
// A cache with a shared prefix (docs/model.md, "Shared prefixes") is read by
// attend_decode_shared_prefix: the prefix once per KV head for every sequence's queries.
// sinks: null, or (n_heads) sink logits: head h's softmax also takes sinks[h], which has no
// value (docs/model.md, "Attention sinks").
// Requires: 1 <= n_ctx <= scratch.max_seq_len and n_ctx <= cache.max_seq_len(); the cache holds
// those n positions.
FlopCount attend_decode(const ModelConfig& config, const float* q, std::size_t q_stride,
                            const KvCache& cache, std::size_t layer, std::size_t n_ctx, float* out,
                            DecodeAttentionScratch& scratch, const float* sinks = nullptr);

// attend_decode's naive twin (src/engine/reference.cpp): attention_reference per (batch row,
// head), double accumulators, one thread; the scratch is not used. Returns the FLOPs it
// executed, counted one multiply-add at a time.
FlopCount attend_decode_naive(const ModelConfig& config, const float* q, std::size_t q_stride,
                              const KvCache& cache, std::size_t layer, std::size_t n_ctx, float* out,
                              DecodeAttentionScratch& scratch, const float* sinks = nullptr);

// attend_decode and its twins: what a path's kernel table holds (step_kernels.hpp).
using AttendDecodeKernel = FlopCount (*)(const ModelConfig& config, const float* q, std::size_t q_stride,
                                         const KvCache& cache, std::size_t layer, std::size_t n_ctx, float* out,
                                         DecodeAttentionScratch& scratch, const float* sinks);

// The attention of a cached step's Q = config.n_query_tokens tokens (docs/model.md, "Multi-token
// queries"): what attend_decode gives token i (0 to Q - 1) at context n_ctx - Q + 1 + i, for
// every i, where q and out hold the step's rows token-major (token i of batch row b is row
// i·n_batch + b): q (Q·n_batch, q_stride) floats, out (Q·n_batch, q_dim) floats. Token i of
// row b sees positions [0, n_ctx - lag_b - Q + 1 + i): the step's earlier tokens, not its later.
// The cache is read once for all Q tokens: for each (batch row, KV head), the Q·group_size
// query rows are scored against the positions every token sees, [0, n_ctx - lag_b - Q + 1), in
// one kernel call per split, then each token's group against its own i further positions, and
// the two partial softmaxes merged as attend_decode merges its splits. On a window layer the
// positions every token sees are the intersection of the tokens' windows, and each token's own
// are those after it and those before it (docs/model.md, "Multi-token queries"). A cache with a
// shared prefix takes attend_each_token(attend_decode) instead.
// Returns the FLOPs of the Q attend_decode calls (useful 4·H·dh·Σ_b Σ_i n_bi), and those executed.
// Requires: attend_decode's for every token; Q <= n_ctx - lag_b for every row; scratch built
// for this config (its n_query_tokens).
FlopCount attend_decode_tokens(const ModelConfig& config, const float* q, std::size_t q_stride, const KvCache& cache,
                               std::size_t layer, std::size_t n_ctx, float* out, DecodeAttentionScratch& scratch,
                               const float* sinks = nullptr);

// attend_decode_tokens's contract, one token at a time: per_token (attend_decode or a twin) on
// token i's rows at context n_ctx - Q + 1 + i, for i = 0 to Q - 1. Returns the FLOPs summed.
FlopCount attend_each_token(AttendDecodeKernel per_token, const ModelConfig& config, const float* q,
                            std::size_t q_stride, const KvCache& cache, std::size_t layer, std::size_t n_ctx,
                            float* out, DecodeAttentionScratch& scratch, const float* sinks = nullptr);

// attend_decode_tokens's naive twin: attend_each_token(attend_decode_naive).
FlopCount attend_decode_tokens_naive(const ModelConfig& config, const float* q, std::size_t q_stride,
                                     const KvCache& cache, std::size_t layer, std::size_t n_ctx, float* out,
                                     DecodeAttentionScratch& scratch, const float* sinks = nullptr);

// Scratch of attend_decode, sized once: the partial results of as many splits as a context of
// max_seq_len positions uses on n_threads threads (1 when B·G >= threads), and one workspace per
// thread; the context itself is streamed by attend_group in blocks.
struct DecodeAttentionScratch {
    DecodeAttentionScratch(const ModelConfig& config, std::size_t max_seq_len, std::size_t n_threads);
    ~DecodeAttentionScratch();
    DecodeAttentionScratch(DecodeAttentionScratch&&) noexcept;
    DecodeAttentionScratch& operator=(DecodeAttentionScratch&&) noexcept;
    std::size_t bytes() const;
    // The partial rows a call writes, its passes' (shared prefix, multi-token) included: what a
    // cold repetition evicts with the rest of the step's buffers (docs/measuring.md).
    std::vector<std::span<const float>> partial_buffers() const;
    // What the constructor allocates, without allocating it. Throws SizeOverflow.
    static std::size_t bytes_for(const ModelConfig& config, std::size_t max_seq_len, std::size_t n_threads);
    // max_splits of a scratch built with these arguments.
    static std::size_t splits_for(const ModelConfig& config, std::size_t max_seq_len, std::size_t n_threads);

    std::size_t n_threads;
    std::size_t max_seq_len;
    std::size_t max_splits;                  // splits per (batch row, KV head) at most
    // Each split's partial softmaxes, one per piece of a ring that may wrap (two for a window
    // layer with Q > 1 query tokens, else one: ring_slots.hpp).
    std::vector<float> partial_out;          // (max_splits·pieces, n_batch, n_heads, head_dim) floats
    std::vector<float> partial_max;          // (max_splits·pieces, n_batch, n_heads) floats
    std::vector<float> partial_sum;          // (max_splits·pieces, n_batch, n_heads) floats
    // The kernels' per-thread workspaces, each for group_size rows, and the (n_threads) ranges of
    // the tasks dealt out by each call: types of src/engine/kernels, defined in attention.cpp.
    struct Threads;
    std::unique_ptr<Threads> threads;
    // With a shared prefix, the prefix pass's queries, partial rows and workspaces; else null.
    std::unique_ptr<SharedPrefixScratch> shared_prefix;
    // With Q > 1 query tokens, attend_decode_tokens's queries, partial rows and workspaces; else null.
    std::unique_ptr<MultiTokenScratch> multi_token;
};

// How many splits attend_decode cuts each context into: enough (batch row, KV head, split)
// tasks to occupy every thread when B·G is small, never splits shorter than 64 positions.
std::size_t decode_split_count(std::size_t n_tasks, std::size_t n_ctx, std::size_t n_threads,
                               std::size_t max_splits);

}  // namespace kvbench
