// The two decode paths of docs/model.md: decode_step (cached) and forward_full (uncached).
// Neither allocates, prints or owns memory: buffers live in the scratch structs,
// sized once per configuration like llama2.c's RunState.
#pragma once

#include "kvbench/engine/attention.hpp"
#include "kvbench/engine/causal_attention.hpp"
#include "kvbench/engine/config.hpp"
#include "kvbench/engine/feed_forward.hpp"
#include "kvbench/engine/flop_count.hpp"
#include "kvbench/engine/kv_cache.hpp"
#include "kvbench/engine/latent_step.hpp"
#include "kvbench/engine/step_kernels.hpp"
#include "kvbench/engine/weights.hpp"

#include <atomic>
#include <cstddef>
#include <span>
#include <vector>

namespace kvbench {

// Throws ConfigError naming the first part of `config` that neither decode path computes yet
// (docs/model.md says what each path computes); a validated config that passes runs on both.
void require_measurable(const ModelConfig& config);

struct DecodeScratch {
    // Requires: config validated, max_seq_len >= 1, n_threads >= 1.
    DecodeScratch(const ModelConfig& config, std::size_t max_seq_len, std::size_t n_threads);
    std::size_t bytes() const;
    // bytes() of a scratch built with these arguments, without building it. Throws SizeOverflow.
    static std::size_t bytes_for(const ModelConfig& config, std::size_t max_seq_len, std::size_t n_threads);

    std::vector<float> qkv;                    // (n_batch, qkv_dim) floats: q | k | v of the new token
    std::vector<float> head_outputs;           // (n_batch, q_dim) floats: every head's attention output, concatenated
    DecodeAttentionScratch attention_scratch;  // attend_decode's split partials and per-thread workspaces
    FullBlockScratch block;                    // a full block's norms, MLP and experts, n_batch rows
    LatentDecodeBuffers latent;  // a latent config's buffers, in place of qkv and head_outputs (left empty)
    // Bytes linear() keeps to convert reduced-type weights for these rows (linear.hpp), counted
    // in bytes() since they are held while the scratch is used.
    std::size_t weight_conversion = 0;
};

struct ForwardScratch {
    // Sized for config.seq_len tokens; block_rows is the height of the query blocks of attend_causal.
    // Requires: config validated, n_threads >= 1, block_rows >= 1.
    ForwardScratch(const ModelConfig& config, std::size_t n_threads,
                   std::size_t block_rows = CausalAttentionScratch::default_block_rows);
    std::size_t bytes() const;
    // bytes() of a scratch built with these arguments, without building it. Throws SizeOverflow.
    static std::size_t bytes_for(const ModelConfig& config, std::size_t n_threads,
                                 std::size_t block_rows = CausalAttentionScratch::default_block_rows);

    std::vector<float> qkv;                    // (total_tokens, qkv_dim) floats: q | k | v of every position
    std::vector<float> head_outputs;           // (total_tokens, q_dim) floats: every head's output, concatenated
    CausalAttentionScratch attention_scratch;  // attend_causal's per-thread scores
    FullBlockScratch block;                    // a full block's norms, MLP and experts, total_tokens rows
    LatentForwardBuffers latent;  // a latent config's buffers, in place of qkv and head_outputs (left empty)
    // Bytes linear() keeps to convert reduced-type weights for these rows (linear.hpp), counted
    // in bytes() since they are held while the scratch is used.
    std::size_t weight_conversion = 0;
};

// What a path is asked beyond its output: which kernels run (the fast ones, --verify's reference,
// or a test's planted fault), and a record of what each layer's attention computed for the
// newest position, which --verify compares because the residual stream hides it (docs/model.md).
struct PathOptions {
    const StepKernels* kernels = &fast_kernels;
    // Empty, or (n_layers, n_batch, attention_output_dim) floats: layer l's attention output (every
    // head's, concatenated) for the newest position of each sequence, written as the path runs.
    std::span<float> attention_trace;
    // Empty, or (n_layers, n_batch, model_dim) floats of a full block: what layer l's MLP (or
    // experts) added to the residual stream at the newest position of each sequence.
    std::span<float> mlp_trace = {};
    // When given, set to the routed experts the path read, summed over its layers of experts.
    std::size_t* experts_read = nullptr;
};

// Floats of a PathOptions::attention_trace for config.
std::size_t attention_trace_size(const ModelConfig& config);
// Floats of a PathOptions::mlp_trace for config: 0 for an attention block.
std::size_t mlp_trace_size(const ModelConfig& config);

// A latent config (config.is_latent()) runs latent_step.hpp's attention in place of the
// multi-head one, in the same layer loop and with the same contracts; a full block's norms and
// MLP or experts around it are the same code.

// Cached path: one step for the token at position pos = cache.length() of every sequence.
// A full block first normalises the residual stream and turns q and k by RoPE at pos, and adds
// its MLP or experts after the attention (docs/model.md). Computes q, k, v of that token only, writes k, v into the cache at pos, attends over
// positions [0, pos], and leaves the cache at length pos + 1.
// x_in, x_out: (n_batch, model_dim); x_out is the residual stream after the last layer.
// With Q = config.n_query_tokens > 1 (docs/model.md, "Multi-token queries") the step adds the
// tokens at positions pos .. pos + Q - 1 of every sequence, x_in and x_out are token-major (Q,
// n_batch, model_dim), token i attends over [0, pos + i], and the cache ends at pos + Q; the
// traces hold the last token's.
// A ragged batch (docs/model.md, "Ragged batches"): row b's token is at its own position
// pos - config.seq_lag_of(b) and attends over that row's positions.
// Throws std::out_of_range (before touching anything) if the cache is full, or a ragged row has
// no position yet (pos below its lag).
// Requires: cache and scratch built for this config's n_batch, n_kv_heads, head_dim, n_layers;
// options.attention_trace empty or attention_trace_size(config) floats, options.mlp_trace empty
// or mlp_trace_size(config) floats.
FlopCount decode_step(const ModelConfig& config, const ModelWeights& weights, KvCache& cache,
                      const float* x_in, float* x_out, DecodeScratch& scratch, const PathOptions& options = {});

// Uncached path: the full causal forward of config.seq_len tokens of every sequence,
// recomputing Q, K, V of every position in every layer.
// x_in, x_out: (n_batch, seq_len, model_dim); a ragged batch's are (total_tokens, model_dim),
// sequence b's N_b rows from first_token(b), and its attention runs one sequence at a time on a
// copy of config made per call. When `prefill` is given, K and V of every
// layer and position are also stored in it and its length becomes seq_len (a prefill).
// `stop`, when given, is read before every layer and every attention task: once it is set the
// forward returns within one layer's projections plus one attention block per thread, x_out
// incomplete and a prefill cache left at length 0.
// The attention and MLP traces hold row seq_len - 1 of each sequence.
// Requires: scratch built for this config; prefill (if any) has max_seq_len >= seq_len;
// options.attention_trace empty or attention_trace_size(config) floats.
FlopCount forward_full(const ModelConfig& config, const ModelWeights& weights, const float* x_in,
                       float* x_out, ForwardScratch& scratch, KvCache* prefill = nullptr,
                       const std::atomic<bool>* stop = nullptr, const PathOptions& options = {});

}  // namespace kvbench
