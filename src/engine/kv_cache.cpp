// KvCache index math (per-layer rings), element conversion at the boundary and length bookkeeping.
#include "kvbench/engine/kv_cache.hpp"

#include "kvbench/engine/attention_shape.hpp"
#include "kvbench/engine/checked_size.hpp"
#include "kvbench/engine/kv_block_allocator.hpp"
#include "kvbench/engine/kv_convert.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace kvbench {

namespace {

std::vector<std::size_t> row_lags(const ModelConfig& config, std::size_t max_seq_len) {
    std::vector<std::size_t> lags(config.n_batch);
    for (std::size_t b = 0; b < config.n_batch; ++b) {
        lags[b] = config.seq_lag_of(b);
        if (lags[b] + config.shared_prefix >= max_seq_len) {
            throw std::invalid_argument(fmt::format(
                "KvCache: {} positions leave none to row {}, {} behind the longest after a shared prefix of {}",
                max_seq_len, b, lags[b], config.shared_prefix));
        }
    }
    return lags;
}

// Slots of each row's ring, (n_layers, n_batch): its window (W + Q - 1 with Q query tokens)
// where that is shorter than its longest context, max_seq_len less the row's lag.
std::vector<std::size_t> row_capacities(const ModelConfig& config, std::size_t max_seq_len) {
    const std::vector<std::size_t> lags = row_lags(config, max_seq_len);
    std::vector<std::size_t> capacities(config.n_layers * config.n_batch);
    for (std::size_t layer = 0; layer < config.n_layers; ++layer) {
        for (std::size_t b = 0; b < config.n_batch; ++b) {
            // A shared prefix's positions live in the layer's one prefix block, not the row's.
            capacities[layer * config.n_batch + b] =
                config.ring_positions(layer, max_seq_len - lags[b]) - config.shared_prefix_of(layer);
        }
    }
    return capacities;
}

// Each layer's shared positions, config.shared_prefix_of.
std::vector<std::size_t> layer_prefixes(const ModelConfig& config) {
    std::vector<std::size_t> prefixes(config.n_layers);
    for (std::size_t layer = 0; layer < config.n_layers; ++layer) prefixes[layer] = config.shared_prefix_of(layer);
    return prefixes;
}

// Slots of each layer's longest ring, the row of no lag.
std::vector<std::size_t> layer_capacities(const ModelConfig& config, std::size_t max_seq_len) {
    std::vector<std::size_t> capacities(config.n_layers);
    for (std::size_t layer = 0; layer < config.n_layers; ++layer) {
        capacities[layer] = config.ring_positions(layer, max_seq_len);
    }
    return capacities;
}

// Each layer's vectors: its shared prefix block (n_kv_heads, P), empty without one or on a
// window layer, then its rows. Returns the index of each row's first vector, (n_layers,
// n_batch), and sets prefix_first to each layer's prefix block's, (n_layers).
std::vector<std::size_t> row_first_vectors(const ModelConfig& config, const std::vector<std::size_t>& row_capacity,
                                           std::vector<std::size_t>& prefix_first) {
    const std::size_t n_kv_heads = cached_attention_shape(config).n_kv_heads;
    std::vector<std::size_t> first(row_capacity.size());
    prefix_first.assign(config.n_layers, 0);
    std::size_t at = 0;
    for (std::size_t row = 0; row < row_capacity.size(); ++row) {
        if (row % config.n_batch == 0) {
            prefix_first[row / config.n_batch] = at;
            at = checked_add(at, checked_mul(n_kv_heads, config.shared_prefix_of(row / config.n_batch)));
        }
        first[row] = at;
        at = checked_add(at, checked_mul(n_kv_heads, row_capacity[row]));
    }
    return first;
}

std::size_t blocks_of(std::size_t capacity, std::size_t block_positions) {
    return (capacity + block_positions - 1) / block_positions;
}

// Paged: each (layer, row)'s first entry in the block tables, its KV heads' rings one after
// another, each layer's rows after its shared prefix's tables (n_kv_heads of ceil(P / block)
// entries, none without a prefix or on a window layer). Sets prefix_first_block to each layer's
// first prefix entry.
std::vector<std::size_t> row_first_blocks(const ModelConfig& config, const std::vector<std::size_t>& row_capacity,
                                          std::vector<std::size_t>& prefix_first_block) {
    if (!config.is_paged()) return {};
    const std::size_t n_kv_heads = cached_attention_shape(config).n_kv_heads;
    std::vector<std::size_t> first(row_capacity.size());
    prefix_first_block.assign(config.n_layers, 0);
    std::size_t at = 0;
    for (std::size_t row = 0; row < row_capacity.size(); ++row) {
        if (row % config.n_batch == 0) {
            prefix_first_block[row / config.n_batch] = at;
            at = checked_add(at, checked_mul(n_kv_heads, blocks_of(config.shared_prefix_of(row / config.n_batch),
                                                                   config.kv_block)));
        }
        first[row] = at;
        at = checked_add(at, checked_mul(n_kv_heads, blocks_of(row_capacity[row], config.kv_block)));
    }
    return first;
}

}  // namespace

KvCache::KvCache(const ModelConfig& config, std::size_t max_seq_len, std::uint64_t block_seed)
    : key_dtype_(config.key_dtype()),
      value_dtype_(config.value_dtype()),
      key_row_bytes_(kv_row_bytes(key_dtype_, cached_attention_shape(config).key_dim)),
      value_row_bytes_(kv_row_bytes(value_dtype_, cached_attention_shape(config).key_dim)),
      n_batch_(config.n_batch),
      n_kv_heads_(cached_attention_shape(config).n_kv_heads),
      head_dim_(cached_attention_shape(config).key_dim),
      value_dim_(cached_attention_shape(config).value_dim),
      values_in_keys_(cached_attention_shape(config).values_in_keys),
      max_seq_len_(max_seq_len),
      row_lag_(row_lags(config, max_seq_len)),
      capacity_(layer_capacities(config, max_seq_len)),
      row_capacity_(row_capacities(config, max_seq_len)),
      layer_prefix_(layer_prefixes(config)),
      max_roll_back_(config.n_query_tokens),
      row_first_(row_first_vectors(config, row_capacity_, prefix_first_)),
      block_positions_(config.kv_block),
      row_first_block_(row_first_blocks(config, row_capacity_, prefix_first_block_)),
      // The pool holds exactly the blocks the rings need, so the tables are a permutation of it.
      block_table_(shuffled_free_blocks(table_entries_for(config, max_seq_len), block_seed)),
      keys_(checked_mul(vectors_for(config, max_seq_len), key_row_bytes_)),
      values_(values_in_keys_ ? 0 : checked_mul(vectors_for(config, max_seq_len), value_row_bytes_)),
      key_scales_(key_dtype_ == KvDtype::int8 ? vectors_for(config, max_seq_len) : 0),
      value_scales_(!values_in_keys_ && value_dtype_ == KvDtype::int8 ? vectors_for(config, max_seq_len) : 0) {
    for (const KvDtype dtype : {key_dtype_, value_dtype_}) {
        if (!kv_dtype_info(dtype).stored_by_engine) {
            throw std::invalid_argument(fmt::format("KvCache: {} is not a type the engine stores", kv_dtype_info(dtype).name));
        }
    }
    if (values_in_keys_ && key_dtype_ != value_dtype_) {
        throw std::invalid_argument("KvCache: a latent cache's values share its keys' type");
    }
}

std::size_t KvCache::vectors_for(const ModelConfig& config, std::size_t max_seq_len) {
    if (config.is_paged()) return checked_mul(table_entries_for(config, max_seq_len), config.kv_block);
    // Summed over layers and rows, and each global layer's one copy of the shared prefix.
    std::size_t slots = 0;
    for (std::size_t layer = 0; layer < config.n_layers; ++layer) slots = checked_add(slots, config.shared_prefix_of(layer));
    for (const std::size_t capacity : row_capacities(config, max_seq_len)) slots = checked_add(slots, capacity);
    return checked_mul(slots, cached_attention_shape(config).n_kv_heads);
}

std::size_t KvCache::table_entries_for(const ModelConfig& config, std::size_t max_seq_len) {
    if (!config.is_paged()) return 0;
    // Summed over layers and rows, and each global layer's shared prefix, its blocks once.
    std::size_t blocks = 0;
    for (std::size_t layer = 0; layer < config.n_layers; ++layer) {
        blocks = checked_add(blocks, blocks_of(config.shared_prefix_of(layer), config.kv_block));
    }
    for (const std::size_t capacity : row_capacities(config, max_seq_len)) {
        blocks = checked_add(blocks, blocks_of(capacity, config.kv_block));
    }
    return checked_mul(blocks, cached_attention_shape(config).n_kv_heads);
}

std::size_t KvCache::bytes_for(const ModelConfig& config, std::size_t max_seq_len) {
    const AttentionShape shape = cached_attention_shape(config);
    const std::size_t per_position = shape.values_in_keys
                                         ? kv_vector_bytes(config.key_dtype(), shape.key_dim)
                                         : checked_add(kv_vector_bytes(config.key_dtype(), shape.key_dim),
                                                       kv_vector_bytes(config.value_dtype(), shape.key_dim));
    return checked_add(checked_mul(vectors_for(config, max_seq_len), per_position),
                       checked_mul(table_entries_for(config, max_seq_len), sizeof(std::uint32_t)));
}

std::size_t KvCache::first_vector(std::size_t layer, std::size_t batch, std::size_t kv_head) const {
    const std::size_t row = layer * n_batch_ + batch;
    return row_first_[row] + kv_head * row_capacity_[row];
}

std::size_t KvCache::vector_of(std::size_t layer, std::size_t batch, std::size_t kv_head, std::size_t pos) const {
    const std::size_t prefix = layer_prefix_[layer];
    if (pos < prefix) {
        if (!paged()) return prefix_first_[layer] + kv_head * prefix + pos;
        return prefix_block_table(layer, kv_head)[pos / block_positions_] * block_positions_ + pos % block_positions_;
    }
    const std::size_t slot = (pos - prefix) % row_capacity_[layer * n_batch_ + batch];
    if (!paged()) return first_vector(layer, batch, kv_head) + slot;
    return block_table(layer, batch, kv_head)[slot / block_positions_] * block_positions_ + slot % block_positions_;
}

const std::uint32_t* KvCache::block_table(std::size_t layer, std::size_t batch, std::size_t kv_head) const {
    if (!paged()) return nullptr;
    const std::size_t row = layer * n_batch_ + batch;
    return block_table_.data() + row_first_block_[row] + kv_head * blocks_of(row_capacity_[row], block_positions_);
}

const std::uint32_t* KvCache::prefix_block_table(std::size_t layer, std::size_t kv_head) const {
    if (!paged() || layer_prefix_[layer] == 0) return nullptr;
    return block_table_.data() + prefix_first_block_[layer] + kv_head * blocks_of(layer_prefix_[layer], block_positions_);
}

std::size_t KvCache::data_vector(std::size_t layer, std::size_t batch, std::size_t kv_head) const {
    return paged() ? 0 : first_vector(layer, batch, kv_head);
}

std::size_t KvCache::first_prefix_vector(std::size_t layer, std::size_t kv_head) const {
    return paged() ? 0 : prefix_first_[layer] + kv_head * layer_prefix_[layer];
}

const void* KvCache::prefix_key_data(std::size_t layer, std::size_t kv_head) const {
    return vector_address(false, first_prefix_vector(layer, kv_head));
}
const void* KvCache::prefix_value_data(std::size_t layer, std::size_t kv_head) const {
    return vector_address(true, first_prefix_vector(layer, kv_head));
}
const float* KvCache::prefix_key_scales(std::size_t layer, std::size_t kv_head) const {
    return key_scales_.empty() ? nullptr : key_scales_.data() + first_prefix_vector(layer, kv_head);
}
const float* KvCache::prefix_value_scales(std::size_t layer, std::size_t kv_head) const {
    if (values_in_keys_) return prefix_key_scales(layer, kv_head);
    return value_scales_.empty() ? nullptr : value_scales_.data() + first_prefix_vector(layer, kv_head);
}

std::byte* KvCache::vector_address(bool values, std::size_t vector) const {
    const PageAlignedVector<std::byte>& storage = values && !values_in_keys_ ? values_ : keys_;
    const std::size_t row_bytes = values && !values_in_keys_ ? value_row_bytes_ : key_row_bytes_;
    return const_cast<std::byte*>(storage.data()) + vector * row_bytes;
}

float* KvCache::require_f32(bool values, std::size_t vector) const {
    const KvDtype dtype = values ? value_dtype_ : key_dtype_;
    if (dtype != KvDtype::f32) {
        throw std::logic_error(fmt::format("KvCache: float access to a {} cache", kv_dtype_info(dtype).name));
    }
    if (values && values_in_keys_) throw std::logic_error("KvCache: a latent cache keeps its values in its keys");
    return reinterpret_cast<float*>(vector_address(values, vector));
}

float* KvCache::keys(std::size_t layer, std::size_t batch, std::size_t kv_head) {
    if (paged()) throw std::logic_error("KvCache: a paged cache's rings are not one array (use store)");
    return require_f32(false, first_vector(layer, batch, kv_head));
}
const float* KvCache::keys(std::size_t layer, std::size_t batch, std::size_t kv_head) const {
    if (paged()) throw std::logic_error("KvCache: a paged cache's rings are not one array (use load_key)");
    return require_f32(false, first_vector(layer, batch, kv_head));
}
float* KvCache::values(std::size_t layer, std::size_t batch, std::size_t kv_head) {
    if (paged()) throw std::logic_error("KvCache: a paged cache's rings are not one array (use store)");
    return require_f32(true, first_vector(layer, batch, kv_head));
}
const float* KvCache::values(std::size_t layer, std::size_t batch, std::size_t kv_head) const {
    if (paged()) throw std::logic_error("KvCache: a paged cache's rings are not one array (use load_value)");
    return require_f32(true, first_vector(layer, batch, kv_head));
}

const void* KvCache::key_data(std::size_t layer, std::size_t batch, std::size_t kv_head) const {
    return vector_address(false, data_vector(layer, batch, kv_head));
}
const void* KvCache::value_data(std::size_t layer, std::size_t batch, std::size_t kv_head) const {
    return vector_address(true, data_vector(layer, batch, kv_head));
}
const float* KvCache::key_scales(std::size_t layer, std::size_t batch, std::size_t kv_head) const {
    return key_scales_.empty() ? nullptr : key_scales_.data() + data_vector(layer, batch, kv_head);
}
const float* KvCache::value_scales(std::size_t layer, std::size_t batch, std::size_t kv_head) const {
    if (values_in_keys_) return key_scales(layer, batch, kv_head);
    return value_scales_.empty() ? nullptr : value_scales_.data() + data_vector(layer, batch, kv_head);
}

void KvCache::store(std::size_t layer, std::size_t batch, std::size_t kv_head, std::size_t pos, const float* key,
                    const float* value) {
    if (pos >= max_seq_len_ - row_lag_[batch]) {
        throw std::out_of_range(fmt::format("KV cache holds at most {} positions of row {}; cannot store {}",
                                            max_seq_len_ - row_lag_[batch], batch, pos));
    }
    const std::size_t vector = vector_of(layer, batch, kv_head, pos);
    encode_vector(false, vector, key);
    if (!values_in_keys_) encode_vector(true, vector, value);
}

void KvCache::encode_vector(bool values, std::size_t vector, const float* src) {
    const KvDtype dtype = values ? value_dtype_ : key_dtype_;
    auto& scales = values ? value_scales_ : key_scales_;
    float unused_scale = 0;
    std::byte* stored = vector_address(values, vector);
    encode_kv_vector(dtype, src, head_dim_, stored, scales.empty() ? &unused_scale : &scales[vector]);
    if (!fp8_fix_patterns_) fp8_fix_patterns_ = kvbench::holds_fp8_fix_patterns(dtype, stored, head_dim_);
}

void KvCache::load_key(std::size_t layer, std::size_t batch, std::size_t kv_head, std::size_t pos, float* key) const {
    const std::size_t vector = vector_of(layer, batch, kv_head, pos);
    decode_kv_vector(key_dtype_, vector_address(false, vector), head_dim_,
                     key_scales_.empty() ? 0.0f : key_scales_[vector], key);
}

void KvCache::load_value(std::size_t layer, std::size_t batch, std::size_t kv_head, std::size_t pos,
                         float* value) const {
    const std::size_t vector = vector_of(layer, batch, kv_head, pos);
    if (values_in_keys_) {
        std::vector<float> key(head_dim_);
        load_key(layer, batch, kv_head, pos, key.data());
        std::copy_n(key.begin(), value_dim_, value);
        return;
    }
    decode_kv_vector(value_dtype_, vector_address(true, vector), head_dim_,
                     value_scales_.empty() ? 0.0f : value_scales_[vector], value);
}

void KvCache::assign_converted(const KvCache& source) {
    const std::size_t n_vectors = keys_.size() / key_row_bytes_;
    if (source.key_dtype_ != KvDtype::f32 || source.value_dtype_ != KvDtype::f32 ||
        source.keys_.size() != n_vectors * head_dim_ * sizeof(float) || source.max_seq_len_ != max_seq_len_ ||
        source.head_dim_ != head_dim_ || source.values_in_keys_ != values_in_keys_ ||
        source.row_capacity_ != row_capacity_ || source.layer_prefix_ != layer_prefix_ ||
        source.block_table_ != block_table_) {
        throw std::invalid_argument("KvCache::assign_converted: the source must be an f32 cache of the same shape");
    }
    const auto* key_floats = reinterpret_cast<const float*>(source.keys_.data());
    const auto* value_floats = reinterpret_cast<const float*>(source.values_.data());
    fp8_fix_patterns_ = false;  // every vector is written again
    for (std::size_t vector = 0; vector < n_vectors; ++vector) {
        encode_vector(false, vector, key_floats + vector * head_dim_);
        if (!values_in_keys_) encode_vector(true, vector, value_floats + vector * head_dim_);
    }
    length_ = source.length_;
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
    // Writing positions [new_length, length) overwrote positions capacity slots earlier. A ring
    // of W + Q - 1 slots holds, after a step of Q tokens, the W - 1 positions before the step
    // that its first token sees: taking back the step's Q positions loses none of them, taking
    // back more than Q from a ring that has wrapped does.
    for (std::size_t row = 0; row < row_capacity_.size(); ++row) {
        const std::size_t lag = row_lag_[row % n_batch_];
        const std::size_t row_length = length_ > lag ? length_ - lag : 0;
        const std::size_t row_new_length = new_length > lag ? new_length - lag : 0;
        const bool wrapped = row_length > layer_prefix_[row / n_batch_] + row_capacity_[row];
        if (wrapped && row_new_length != 0 && row_length - row_new_length > max_roll_back_) {
            throw std::out_of_range(fmt::format(
                "KV cache: layer {}'s ring of {} positions cannot roll back from {} to {} ({} position{}, or to 0)",
                row / n_batch_, row_capacity_[row], row_length, row_new_length, max_roll_back_,
                max_roll_back_ == 1 ? "" : "s"));
        }
    }
    length_ = new_length;
}

void KvCache::require_writable(std::size_t pos) const {
    if (pos != length_ || pos >= max_seq_len_) {
        throw std::out_of_range(fmt::format(
            "KV cache: cannot write position {} (length {}, capacity {})", pos, length_, max_seq_len_));
    }
}

std::size_t KvCache::bytes() const {
    return keys_.size() + values_.size() + (key_scales_.size() + value_scales_.size()) * sizeof(float) +
           block_table_.size() * sizeof(std::uint32_t);
}

std::vector<std::span<const std::byte>> KvCache::storage() const {
    std::vector<std::span<const std::byte>> regions{{keys_.data(), keys_.size()}};
    if (!values_.empty()) regions.emplace_back(values_.data(), values_.size());
    if (!key_scales_.empty()) {
        regions.emplace_back(reinterpret_cast<const std::byte*>(key_scales_.data()), key_scales_.size() * sizeof(float));
    }
    if (!value_scales_.empty()) {
        regions.emplace_back(reinterpret_cast<const std::byte*>(value_scales_.data()),
                             value_scales_.size() * sizeof(float));
    }
    if (!block_table_.empty()) {
        regions.emplace_back(reinterpret_cast<const std::byte*>(block_table_.data()),
                             block_table_.size() * sizeof(std::uint32_t));
    }
    return regions;
}

}  // namespace kvbench
