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

struct ModelWeights;  // weights.hpp

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

    std::vector<float> q_down;        // (n_batch, q_lora_rank) floats; empty without q_lora_rank
    std::vector<float> q;             // (n_batch, H·(d_n + d_r)) floats: q_nope | q_rope per head
    std::vector<float> kv_down;       // (n_batch, r + d_r) floats: the new position's c | k_rope, as cached
    std::vector<float> q_latent;      // (n_batch, H·(r + d_r)) floats: absorbed queries
    std::vector<float> latent_out;    // (n_batch, H·(r + d_r)) floats: Σ p·[c | k_rope] per head, first r used
    std::vector<float> head_outputs;  // (n_batch, H·d_v) floats: every head's output, what Wo reads
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
};

// decode_step (decoder.hpp) of a latent config, same contract: per layer q (through
// q_lora_rank when set), c | k_rope = x·W_dkv stored at pos, the query absorbed (absorb_query),
// attend_decode over the latent cache, the output un-absorbed (unabsorb_output), then Wo with the
// residual. Useful FLOPs are docs/counting.md's; executed ones add the kernels' padding and the
// d_r values of every position that the shared vector drags through p·V.
// Requires: config latent; cache, scratch and buffers built for it.
FlopCount latent_decode_step(const ModelConfig& config, const ModelWeights& weights, KvCache& cache,
                             const float* x_in, float* x_out, LatentDecodeBuffers& buffers,
                             DecodeAttentionScratch& attention_scratch, const StepKernels& kernels,
                             std::span<float> attention_trace);

// forward_full (decoder.hpp) of a latent config, same contract: per layer q and c | k_rope of
// every position (stored in `prefill` when given), K = [c·W_uk | k_rope] and V = c·W_uv
// expanded for every head and position, attend_causal, then Wo with the residual.
// Requires: config latent; scratch and buffers built for it.
FlopCount latent_forward_full(const ModelConfig& config, const ModelWeights& weights, const float* x_in,
                              float* x_out, LatentForwardBuffers& buffers, CausalAttentionScratch& attention_scratch,
                              KvCache* prefill, const std::atomic<bool>* stop, const StepKernels& kernels,
                              std::span<float> attention_trace);

}  // namespace kvbench
