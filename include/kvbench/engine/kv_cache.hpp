// KvCache: K and V of every layer, preallocated for the longest context a run needs.
#pragma once

#include "kvbench/engine/config.hpp"
#include "kvbench/engine/page_aligned.hpp"

#include <cstddef>
#include <vector>

namespace kvbench {

// Layout of keys_ and values_, each (n_layers, n_batch, n_kv_heads, max_seq_len, head_dim) floats:
// one KV head's positions are contiguous, so attention streams a head's K (and V)
// as a single (length, head_dim) block, and all query heads of its group read it together.
class KvCache {
public:
    // Requires: config validated, max_seq_len >= 1. Allocates (and zeroes) everything up front.
    KvCache(const ModelConfig& config, std::size_t max_seq_len);

    std::size_t max_seq_len() const { return max_seq_len_; }
    // Positions held, the same for every layer, batch row and head.
    std::size_t length() const { return length_; }

    // (max_seq_len, head_dim) block of one layer, batch row and KV head.
    float* keys(std::size_t layer, std::size_t batch, std::size_t kv_head);
    const float* keys(std::size_t layer, std::size_t batch, std::size_t kv_head) const;
    float* values(std::size_t layer, std::size_t batch, std::size_t kv_head);
    const float* values(std::size_t layer, std::size_t batch, std::size_t kv_head) const;

    // Marks positions [length, new_length) as written. Throws std::out_of_range
    // past max_seq_len, so no step ever writes outside the allocation.
    void extend_to(std::size_t new_length);
    // Forgets positions [new_length, length). Throws std::out_of_range if new_length > length.
    void roll_back(std::size_t new_length);
    // Throws std::out_of_range unless position `pos` may be written now (pos == length < max_seq_len).
    void require_writable(std::size_t pos) const;

    // Bytes allocated for K and V together: kv_bytes at N = max_seq_len (docs/counting.md).
    std::size_t bytes() const;
    // bytes() of a cache built with these arguments, without building it. Throws SizeOverflow.
    static std::size_t bytes_for(const ModelConfig& config, std::size_t max_seq_len);

private:
    // Floats in keys_ (and in values_).
    static std::size_t elements_for(const ModelConfig& config, std::size_t max_seq_len);
    std::size_t offset(std::size_t layer, std::size_t batch, std::size_t kv_head) const;

    std::size_t n_batch_;
    std::size_t n_kv_heads_;
    std::size_t head_dim_;
    std::size_t max_seq_len_;
    std::size_t length_ = 0;
    PageAlignedVector<float> keys_;    // (n_layers, n_batch, n_kv_heads, max_seq_len, head_dim)
    PageAlignedVector<float> values_;  // same shape as keys_
};

}  // namespace kvbench
