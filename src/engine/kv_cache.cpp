// KvCache index math and length bookkeeping.
#include "kvbench/engine/kv_cache.hpp"

#include "kvbench/engine/checked_size.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace kvbench {

KvCache::KvCache(const ModelConfig& config, std::size_t max_seq_len)
    : n_batch_(config.n_batch),
      n_kv_heads_(config.n_kv_heads),
      head_dim_(config.head_dim()),
      max_seq_len_(max_seq_len),
      keys_(elements_for(config, max_seq_len)),
      values_(keys_.size()) {}

std::size_t KvCache::elements_for(const ModelConfig& config, std::size_t max_seq_len) {
    return checked_product({config.n_layers, config.n_batch, config.n_kv_heads, max_seq_len, config.head_dim()});
}

std::size_t KvCache::bytes_for(const ModelConfig& config, std::size_t max_seq_len) {
    return checked_product({2, elements_for(config, max_seq_len), sizeof(float)});
}

std::size_t KvCache::offset(std::size_t layer, std::size_t batch, std::size_t kv_head) const {
    return ((layer * n_batch_ + batch) * n_kv_heads_ + kv_head) * max_seq_len_ * head_dim_;
}

float* KvCache::keys(std::size_t layer, std::size_t batch, std::size_t kv_head) {
    return keys_.data() + offset(layer, batch, kv_head);
}
const float* KvCache::keys(std::size_t layer, std::size_t batch, std::size_t kv_head) const {
    return keys_.data() + offset(layer, batch, kv_head);
}
float* KvCache::values(std::size_t layer, std::size_t batch, std::size_t kv_head) {
    return values_.data() + offset(layer, batch, kv_head);
}
const float* KvCache::values(std::size_t layer, std::size_t batch, std::size_t kv_head) const {
    return values_.data() + offset(layer, batch, kv_head);
}

void KvCache::extend_to(std::size_t new_length) {
    if (new_length > max_seq_len_) {
        throw std::out_of_range(fmt::format("KV cache holds at most {} positions; cannot extend to {}",
                                            max_seq_len_, new_length));
    }
    if (new_length < length_) {
        throw std::out_of_range(
            fmt::format("KV cache extend_to({}) is below its length {}", new_length, length_));
    }
    length_ = new_length;
}

void KvCache::roll_back(std::size_t new_length) {
    if (new_length > length_) {
        throw std::out_of_range(fmt::format("KV cache of length {} cannot roll back to {}",
                                            length_, new_length));
    }
    length_ = new_length;
}

void KvCache::require_writable(std::size_t pos) const {
    if (pos != length_ || pos >= max_seq_len_) {
        throw std::out_of_range(fmt::format(
            "KV cache: cannot write position {} (length {}, capacity {})", pos, length_, max_seq_len_));
    }
}

std::size_t KvCache::bytes() const { return (keys_.size() + values_.size()) * sizeof(float); }

}  // namespace kvbench
