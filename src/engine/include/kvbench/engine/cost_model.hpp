// Analytic FLOPs, bytes and KV-cache bytes of one decode step (docs/counting.md).
#pragma once

#include "kvbench/engine/config.hpp"

#include <cstdint>
#include <optional>

namespace kvbench {

enum class DecodePath { cached, uncached };

const char* path_name(DecodePath path);  // "cached" / "uncached"

// Activations are f32 whatever the weights and the cache store (docs/counting.md). Weights are
// the config's weight_dtype (weight_matrix_bytes, an int8 matrix's scales included); the cached
// K/V element is its kv_dtype (kv_vector_bytes, an int8 vector's scale included).
inline constexpr std::uint64_t activation_elem_bytes = 4;
// One entry of a paged cache's block table: a 32-bit physical block id (KvCache's).
inline constexpr std::uint64_t kv_block_table_entry_bytes = 4;
// The two RMSNorm weight vectors of a full layer stay f32, whatever the matrices are.
inline constexpr std::uint64_t norm_elem_bytes = 4;
// Sink logits (--sinks) are f32 too, one per query head and layer.
inline constexpr std::uint64_t sink_elem_bytes = 4;

struct StepCost {
    std::uint64_t flops = 0;     // model FLOPs of matrix products, causal triangle only
    std::uint64_t bytes = 0;     // compulsory memory traffic of the step
    std::uint64_t kv_bytes = 0;  // the cache at context N (each layer's min(N, W) positions)

    bool operator==(const StepCost&) const = default;
};

// The attention's weights of one layer, in elements. Multi-head: P = 2·D·H·dh + 2·D·G·dh (Wq,
// Wk, Wv, Wo). Latent (MLA): the q projection (through q_lora_rank when set), the KV down
// projection to r + d_r, W_uk, W_uv and Wo (docs/counting.md, "Latent attention (MLA)").
std::uint64_t weights_per_layer(const ModelConfig& config);
// The full layer's MLP weights of `layer`, in elements: 3·D·F dense, or the router D·E plus
// every expert's 3·D·Fe (routed and shared). 0 in the attention block.
std::uint64_t mlp_weights_of_layer(const ModelConfig& config, std::size_t layer);

// Routed experts the step reads at most, summed over the layers that have experts: each MoE
// layer reads min(E, tokens·K), tokens = B on the cached path and B·N on the uncached one. The
// seeded router decides the true count, which the decoder reports; without it the bound is used.
std::uint64_t most_experts_read(const ModelConfig& config, DecodePath path);

// Bytes one position of one KV head occupies: its key and its value, head_dim elements each of
// their types (multi-head), or the latent plus its RoPE key, r + d_r elements in one vector
// (MLA); scales included (kv_vector_bytes).
std::uint64_t kv_head_position_bytes(const ModelConfig& config);
// Bytes one position occupies in the cache of one sequence, summed over the layers, windows
// aside (the "KV bytes per token" of a model card): G·dh·(c_K + c_V) per multi-head layer,
// (r + d_r)·c per latent one.
std::uint64_t kv_bytes_per_position(const ModelConfig& config);

// A ragged batch's counts are sums over its sequences, each at its own N_b (docs/counting.md).
std::uint64_t step_flops(const ModelConfig& config, DecodePath path);
// step_flops of one sequence at context n.
std::uint64_t sequence_flops(const ModelConfig& config, DecodePath path, std::uint64_t n);
// Cached positions summed over layers (each min(N_b, W)) and sequences; a shared prefix's
// positions once per layer.
std::uint64_t cached_positions(const ModelConfig& config);
// experts_read: routed experts read by the step, summed over layers (the decoder's count);
// unset: most_experts_read().
std::uint64_t step_bytes(const ModelConfig& config, DecodePath path,
                         std::optional<std::uint64_t> experts_read = std::nullopt);
// The cache at context N; of a paged cache (docs/counting.md, "Paged caches"), every ring's
// blocks whole (the last one's empty slots included) plus its block table.
std::uint64_t kv_cache_bytes(const ModelConfig& config);
// A paged cache's blocks summed over layers and sequences, per KV head: Σ ceil(min(N_b, W) / P);
// with a shared prefix of S positions, L·(ceil(S / P) + Σ_b ceil((N_b - S) / P)); 0 for a
// contiguous cache.
std::uint64_t kv_blocks_per_head(const ModelConfig& config);
// Its block tables, one entry per block of each KV head: what the step reads besides the
// positions, and what the cache holds besides them (docs/counting.md, "Paged caches").
std::uint64_t kv_block_table_bytes(const ModelConfig& config);
// The cache of the multi-head attention that a config's cache stands in for, at its B, N, H, L
// and kv_dtype: G = H heads of dh for grouped attention; for latent attention, K of d_n + d_r
// and V of d_v for every head (docs/counting.md, "Latent attention (MLA)"). kv_cache_bytes for MHA.
std::uint64_t kv_cache_bytes_as_mha(const ModelConfig& config);
StepCost step_cost(const ModelConfig& config, DecodePath path,
                   std::optional<std::uint64_t> experts_read = std::nullopt);
// Throws ConfigError, naming the point, when its counts could pass 64 bits: a bound of every
// count of docs/counting.md (each product of two widths at most the square of their sum, every
// layer attending to all N positions, every expert) above 2^64. validate() bounds the widths;
// N and B only this (a dry run of N = 1M, B = 64 for a 70B model would otherwise wrap).
void require_countable(const ModelConfig& config);
// The same bound as a question: whether every count of the config stays below 2^64.
bool countable(const ModelConfig& config);
// What the uncached forward of a configuration is counted on: it keeps no cache, so its K and V
// are f32 activations, in no blocks, each sequence's own whole context (a shared prefix is the
// cache's saving); its kv_bytes is that f32 value (docs/counting.md, "KV bytes").
ModelConfig uncached_counting_config(const ModelConfig& config);

// The weight bytes the cached step reads: every layer's matrices (int8 scales included), the
// full layer's norms, and the experts of most_experts_read(). Embeddings are no part of a step.
std::uint64_t step_weight_bytes(const ModelConfig& config);

// N*: the smallest context N at which the cached step's KV bytes (kv_cache_bytes, B sequences)
// reach its weight bytes (step_weight_bytes), for the config's B and types; seq_len is ignored.
// Unset when no context reaches them (every layer windowed, the cache capped below the weights).
std::optional<std::uint64_t> kv_weight_crossover(const ModelConfig& config);

}  // namespace kvbench
