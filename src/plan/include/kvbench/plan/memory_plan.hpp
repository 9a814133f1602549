// The memory bill of serving a model: KV bytes per token, per sequence and per batch, weights,
// and what fits in a budget (docs/memory.md). Pure arithmetic on whole bytes; no allocation.
#pragma once

#include "kvbench/engine/kv_dtype.hpp"
#include "kvbench/plan/model_preset.hpp"

#include <cstdint>
#include <optional>

namespace kvbench {

// How a server lays the cache out.
struct CacheLayout {
    KvDtype kv_dtype = KvDtype::f16;
    std::optional<std::uint64_t> window;  // cached tokens per sequence at most; unset: all of them
    std::uint64_t block_size = 1;         // tokens per allocation block (vLLM pages: 16); 1: exact
};

// 2 (K and V) * L * G * kv_vector_bytes(dtype, dh). Query heads do not appear: only the G KV
// heads are cached, whatever H is.
std::uint64_t kv_bytes_per_token(const ModelPreset& model, KvDtype kv_dtype);

struct SequenceBill {
    std::uint64_t cached_tokens = 0;     // min(seq_len, window)
    std::uint64_t allocated_tokens = 0;  // cached_tokens rounded up to whole blocks
    std::uint64_t kv_bytes = 0;          // allocated_tokens * kv_bytes_per_token
    std::uint64_t waste_bytes = 0;       // the last block's unfilled part
};

// One sequence of seq_len tokens. Requires: seq_len >= 1, layout.block_size >= 1.
// Throws SizeOverflow past 2^64 bytes.
SequenceBill sequence_bill(const ModelPreset& model, std::uint64_t seq_len, const CacheLayout& layout);

// Bytes of n_params weights stored at `dtype` (its bits per element; no scales counted).
std::uint64_t weight_bytes(std::uint64_t n_params, KvDtype dtype);

// The largest batch whose caches of seq_len tokens fit in kv_budget_bytes (0 if none).
std::uint64_t max_batch(const ModelPreset& model, std::uint64_t seq_len, const CacheLayout& layout,
                        std::uint64_t kv_budget_bytes);

// The longest context at which `batch` sequences fit in kv_budget_bytes: 0 if not even one
// token does; unset if every length fits (a sliding window caps the cache below the budget).
// Requires: batch >= 1.
std::optional<std::uint64_t> max_context(const ModelPreset& model, std::uint64_t batch, const CacheLayout& layout,
                                         std::uint64_t kv_budget_bytes);

// The same model with G KV heads instead of its own: G = H is its MHA twin, G = 1 its MQA twin.
ModelPreset with_kv_heads(const ModelPreset& model, std::uint64_t n_kv_heads);

}  // namespace kvbench
