// The memory bill of serving a model: KV bytes per token, per sequence and per batch, weights,
// and what fits in a budget (docs/memory.md). Pure arithmetic on whole bytes; no allocation.
#pragma once

#include "kvbench/engine/kv_dtype.hpp"
#include "kvbench/plan/model_preset.hpp"

#include <cstdint>
#include <optional>

namespace kvbench {

// How a server lays the cache out. The windows are the model's (ModelPreset::layer_windows).
struct CacheLayout {
    KvDtype kv_dtype = KvDtype::f16;
    std::uint64_t block_size = 1;     // tokens per allocation block (vLLM pages: 16); 1: exact
    std::uint64_t shared_prefix = 0;  // tokens every sequence starts with, cached once per global layer
};

// Bytes one token adds to the caches of all layers, windows aside: 2 (K and V) * L * G *
// kv_vector_bytes(dtype, dh), query heads not appearing (only the G KV heads are cached); for
// latent attention L * kv_vector_bytes(dtype, r + d_r), whatever H is (docs/memory.md).
std::uint64_t kv_bytes_per_token(const ModelPreset& model, KvDtype kv_dtype);

// Each layer caches min(seq_len, its window) positions, in whole blocks of its own; with a
// shared prefix of P tokens a global layer's sequence caches its own seq_len - P after it, and
// the prefix is billed once (prefix_bill).
struct SequenceBill {
    std::uint64_t cached_tokens = 0;     // the most positions any layer holds: min(seq_len, W) on a global-free model
    std::uint64_t allocated_tokens = 0;  // cached_tokens rounded up to whole blocks
    std::uint64_t kv_bytes = 0;          // Σ over layers of its allocated positions * its bytes per position
    std::uint64_t waste_bytes = 0;       // the last blocks' unfilled parts, over the layers
};

// One sequence of seq_len tokens. Requires: seq_len > layout.shared_prefix (>= 1),
// layout.block_size >= 1. Throws SizeOverflow past 2^64 bytes.
SequenceBill sequence_bill(const ModelPreset& model, std::uint64_t seq_len, const CacheLayout& layout);
// The shared prefix's one copy: P tokens on each global layer (a window layer's sequences keep
// their own), in whole blocks of its own; empty without a prefix.
SequenceBill prefix_bill(const ModelPreset& model, const CacheLayout& layout);
// The batch's cache: prefix_bill once and `batch` sequences' own.
std::uint64_t batch_kv_bytes(const ModelPreset& model, std::uint64_t seq_len, std::uint64_t batch,
                             const CacheLayout& layout);

// Bytes of n_params weights stored at `dtype` (its bits per element; no scales counted).
std::uint64_t weight_bytes(std::uint64_t n_params, KvDtype dtype);

// The largest batch whose caches of seq_len tokens, the shared prefix's once, fit in
// kv_budget_bytes (0 if none).
std::uint64_t max_batch(const ModelPreset& model, std::uint64_t seq_len, const CacheLayout& layout,
                        std::uint64_t kv_budget_bytes);

// The longest context at which `batch` sequences fit in kv_budget_bytes: 0 if not even one
// token (of each sequence's own, past a shared prefix) does; unset if every length fits
// (windows on every layer cap the cache below the budget).
// Requires: batch >= 1.
std::optional<std::uint64_t> max_context(const ModelPreset& model, std::uint64_t batch, const CacheLayout& layout,
                                         std::uint64_t kv_budget_bytes);

// The same model with G KV heads instead of its own: G = H is its MHA twin, G = 1 its MQA twin.
// Its K and V projections are G heads wide, so its parameters (when known) change by
// 2 · L · D · dh per KV head: a twin's weights are those of the model it would be.
ModelPreset with_kv_heads(const ModelPreset& model, std::uint64_t n_kv_heads);

// The same model with one window on every layer, or (nullopt) none: `kvbench memory --window`.
ModelPreset with_window(const ModelPreset& model, std::optional<std::uint64_t> window);

}  // namespace kvbench
