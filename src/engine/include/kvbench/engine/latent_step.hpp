// The two decode paths of a latent attention model (MLA): the cached step over the latent cache,
// with W_uk and W_uv absorbed, and the uncached forward, which expands K and V per head.
#pragma once

#include "kvbench/engine/attention.hpp"
#include "kvbench/engine/causal_attention.hpp"
#include "kvbench/engine/config.hpp"
#include "kvbench/engine/flop_count.hpp"
#include "kvbench/engine/kv_cache.hpp"
#include "kvbench/engine/latent_weights.hpp"
#include "kvbench/engine/step_kernels.hpp"

#include <atomic>
#include <cstddef>
#include <span>
#include <vector>

namespace kvbench {

// What the decode attention kernels see of a config: the config itself for multi-head
// attention; for latent attention the MQA it is once W_uk is absorbed (docs/model.md, "Latent
// attention"): H query heads against one shared cached vector of r + d_r per position (its
// key; its value is its first r), so attend_decode and its scratch run it unchanged.
ModelConfig decode_attention_view(const ModelConfig& config);

// The uncached forward's attention of a latent config as attend_causal runs it: H heads of
// their own keys and values, each head_dim = max(d_n + d_r, d_v) wide, the shorter of the two
// padded with zeros. Requires: config latent.
ModelConfig causal_attention_view(const ModelConfig& config);

// The cached step's buffers beyond attend_decode's scratch; empty for a multi-head config.
struct LatentDecodeBuffers {
    explicit LatentDecodeBuffers(const ModelConfig& config);
    std::size_t bytes() const;
    static std::size_t bytes_for(const ModelConfig& config);  // Throws SizeOverflow.

    // Rows are the step's Q·n_batch tokens, token-major (token i of sequence b is row i·B + b).
    std::vector<float> q_down;        // (Q·n_batch, q_lora_rank) floats; empty without q_lora_rank
    std::vector<float> q;             // (Q·n_batch, H·(d_n + d_r)) floats: q_nope | q_rope per head
    std::vector<float> kv_down;       // (Q·n_batch, r + d_r) floats: the new positions' c | k_rope, as cached
    std::vector<float> q_latent;      // (Q·n_batch, H·(r + d_r)) floats: absorbed queries
    std::vector<float> latent_out;    // (Q·n_batch, H·(r + d_r)) floats: Σ p·[c | k_rope] per head, first r used
    std::vector<float> head_outputs;  // (Q·n_batch, H·d_v) floats: every head's output, what Wo reads
    std::vector<float> head_rows;     // (Q·n_batch, max(d_n + r, r + d_v)) floats: one head's rows, gathered
    std::vector<float> rope;          // (Q·n_batch, (H + 2)·d_r) floats: what RoPE turns, packed; full layer only
};

// The uncached forward's buffers beyond attend_causal's scratch; empty for a multi-head config.
struct LatentForwardBuffers {
    explicit LatentForwardBuffers(const ModelConfig& config);
    std::size_t bytes() const;
    static std::size_t bytes_for(const ModelConfig& config);  // Throws SizeOverflow.

    std::vector<float> q_down;        // (B·N, q_lora_rank) floats; empty without q_lora_rank
    std::vector<float> q;             // (B·N, H·(d_n + d_r)) floats
    std::vector<float> kv_down;       // (B·N, r + d_r) floats: c | k_rope of every position
    std::vector<float> latent;        // (B·N, r) floats: c alone, the expansions' input
    std::vector<float> k_nope;        // (B·N, H·d_n) floats: c·W_uk
    std::vector<float> values;        // (B·N, H·d_v) floats: c·W_uv
    std::vector<float> qkv;           // (B·N, 3·H·hd) floats: q | k | v per head, hd = causal view's head_dim
    std::vector<float> padded_out;    // (B·N, H·hd) floats: attend_causal's output
    std::vector<float> head_outputs;  // (B·N, H·d_v) floats: every head's output, what Wo reads
    std::vector<float> converted;     // (r, d_n) floats: one head's W_uk in f32, reduced weight types only
    std::vector<float> rope;          // (B·N, (H + 2)·d_r) floats: what RoPE turns, packed; full layer only
};

// One layer of decode_step (decoder.hpp) for a latent config: for each of the step's Q =
// n_query_tokens tokens, q (through q_lora_rank when set) and c | k_rope = x·W_dkv, stored at
// position pos + i (pos = cache.length()); the queries absorbed (absorb_query); the Q tokens
// over the latent cache in one pass (attend_decode_tokens on the MQA view, causal among them);
// the outputs un-absorbed (unabsorb_output), then x_out += that·Wo. In a full layer the q latent
// and c are normalised (their own RMSNorm) and each head's q_rope and the shared k_rope turned
// by RoPE at the token's position before c | k_rope is cached.
// block_in: (Q·n_batch, model_dim) floats, token-major, the layer's input (already normalised
// in a full layer); x_out: (Q·n_batch, model_dim) floats, the residual stream. Useful FLOPs are
// docs/counting.md's; executed ones add the kernels' padding and the d_r values of every position
// that the shared vector drags through p·V. Does not extend the cache.
// Requires: config latent, uniform batch; cache, scratch and buffers built for it;
// attention_trace empty or (n_layers, n_batch, H·d_v) floats (the newest token's).
FlopCount latent_attention_step(const ModelConfig& config, std::size_t layer, const LatentWeights& weights,
                                KvCache& cache, const float* block_in, float* x_out, LatentDecodeBuffers& buffers,
                                DecodeAttentionScratch& attention_scratch, const StepKernels& kernels,
                                std::span<float> attention_trace);

// One layer of forward_full (decoder.hpp) for a latent config: q and c | k_rope of every position
// (normalised and turned as latent_attention_step says, in a full layer; stored in `prefill`
// when given), K = [c·W_uk | k_rope] and V = c·W_uv expanded for every head and position,
// attend_causal, then x_out += heads·Wo. block_in, x_out: (B·N, model_dim) floats.
// Requires: config latent, uniform batch; scratch and buffers built for it.
FlopCount latent_attention_forward(const ModelConfig& config, std::size_t layer, const LatentWeights& weights,
                                   const float* block_in, float* x_out, LatentForwardBuffers& buffers,
                                   CausalAttentionScratch& attention_scratch, KvCache* prefill,
                                   const std::atomic<bool>* stop, const StepKernels& kernels,
                                   std::span<float> attention_trace);

}  // namespace kvbench
