// KvCache: K and V of every layer, preallocated for the longest context a run needs, stored in
// the config's kv_dtype (docs/model.md, "KV-cache element types").
#pragma once

#include "kvbench/engine/config.hpp"
#include "kvbench/engine/kv_dtype.hpp"
#include "kvbench/engine/page_aligned.hpp"

#include <array>
#include <cstddef>
#include <span>
#include <vector>

namespace kvbench {

// Layout of keys_ and values_, each (n_layers, n_batch, n_kv_heads, max_seq_len, head_dim)
// elements of kv_dtype: one KV head's positions are contiguous, so attention streams a head's K
// (and V) as a single (length, head_dim) block, and all query heads of its group read it
// together. An int8 cache also keeps one f32 scale per cached vector, (n_layers, n_batch,
// n_kv_heads, max_seq_len) floats for K and for V.
class KvCache {
public:
    // Requires: config validated (kv_dtype stored by the engine), max_seq_len >= 1.
    // Allocates (and zeroes) everything up front.
    KvCache(const ModelConfig& config, std::size_t max_seq_len);

    KvDtype dtype() const { return dtype_; }
    std::size_t head_dim() const { return head_dim_; }
    std::size_t max_seq_len() const { return max_seq_len_; }
    // Positions held, the same for every layer, batch row and head.
    std::size_t length() const { return length_; }

    // (max_seq_len, head_dim) floats of one layer, batch row and KV head. Requires an f32 cache.
    float* keys(std::size_t layer, std::size_t batch, std::size_t kv_head);
    const float* keys(std::size_t layer, std::size_t batch, std::size_t kv_head) const;
    float* values(std::size_t layer, std::size_t batch, std::size_t kv_head);
    const float* values(std::size_t layer, std::size_t batch, std::size_t kv_head) const;

    // Any type: the (max_seq_len, head_dim) elements of one block, position t at element t·head_dim.
    const void* key_data(std::size_t layer, std::size_t batch, std::size_t kv_head) const;
    const void* value_data(std::size_t layer, std::size_t batch, std::size_t kv_head) const;
    // int8: (max_seq_len) floats, the scale of each cached vector; nullptr for the other types.
    const float* key_scales(std::size_t layer, std::size_t batch, std::size_t kv_head) const;
    const float* value_scales(std::size_t layer, std::size_t batch, std::size_t kv_head) const;

    // Writes position pos's K and V (head_dim floats each), converted to dtype(). Does not
    // change length(). Requires: pos < max_seq_len.
    void store(std::size_t layer, std::size_t batch, std::size_t kv_head, std::size_t pos, const float* key,
               const float* value);
    // Position pos's K (or V) read back as head_dim floats.
    void load_key(std::size_t layer, std::size_t batch, std::size_t kv_head, std::size_t pos, float* key) const;
    void load_value(std::size_t layer, std::size_t batch, std::size_t kv_head, std::size_t pos, float* value) const;
    // This cache holds `source`'s positions and length, converted to dtype(). Requires: source
    // is an f32 cache of the same shape and capacity.
    void assign_converted(const KvCache& source);

    // Marks positions [length, new_length) as written. Throws std::out_of_range
    // past max_seq_len, so no step ever writes outside the allocation.
    void extend_to(std::size_t new_length);
    // Forgets positions [new_length, length). Throws std::out_of_range if new_length > length.
    void roll_back(std::size_t new_length);
    // Throws std::out_of_range unless position `pos` may be written now (pos == length < max_seq_len).
    void require_writable(std::size_t pos) const;

    // Bytes allocated for K and V together, scales included: kv_bytes at N = max_seq_len
    // (docs/counting.md).
    std::size_t bytes() const;
    // bytes() of a cache built with these arguments, without building it. Throws SizeOverflow.
    static std::size_t bytes_for(const ModelConfig& config, std::size_t max_seq_len);
    // Every allocation of the cache, for the cold-cache eviction: K, V and, for int8, their scales.
    std::vector<std::span<const std::byte>> storage() const;

private:
    // Cached vectors (positions × heads × rows × layers) in the cache, for K (and as many for V).
    static std::size_t vectors_for(const ModelConfig& config, std::size_t max_seq_len);
    // Index of the block's first vector.
    std::size_t first_vector(std::size_t layer, std::size_t batch, std::size_t kv_head) const;
    std::byte* element_address(const PageAlignedVector<std::byte>& storage, std::size_t vector) const;
    float* require_f32(const PageAlignedVector<std::byte>& storage, std::size_t vector) const;

    KvDtype dtype_;
    std::size_t element_bytes_;
    std::size_t n_batch_;
    std::size_t n_kv_heads_;
    std::size_t head_dim_;
    std::size_t max_seq_len_;
    std::size_t length_ = 0;
    PageAlignedVector<std::byte> keys_;    // (n_layers, n_batch, n_kv_heads, max_seq_len, head_dim) elements
    PageAlignedVector<std::byte> values_;  // same shape as keys_
    PageAlignedVector<float> key_scales_;    // int8: (n_layers, n_batch, n_kv_heads, max_seq_len); else empty
    PageAlignedVector<float> value_scales_;  // same shape as key_scales_
};

}  // namespace kvbench
