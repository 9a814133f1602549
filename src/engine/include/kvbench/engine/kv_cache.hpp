// KvCache: K and V of every layer, preallocated for the longest context a run needs, stored in
// the config's key and value types (docs/model.md, "KV-cache element types"); a sliding-window layer keeps
// a ring of its window's positions, a latent layer one latent vector per position.
#pragma once

#include "kvbench/engine/config.hpp"
#include "kvbench/engine/kv_dtype.hpp"
#include "kvbench/engine/page_aligned.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace kvbench {

// Layout of keys_ and values_: layer after layer, each (n_batch, n_kv_heads, capacity(layer, b),
// head_dim) elements of the key (value) type, a vector kv_row_bytes(type, head_dim) bytes: one
// KV head's positions are contiguous, so attention streams a head's K (and V) as a single
// (length, head_dim) block, and all query heads of its group read it together. int8 keys (or
// values) also keep one f32 scale per cached vector, laid out as the vectors; q8_0's and
// q4_0's scales are inside their vectors' blocks.
//
// A layer's capacity is the most positions a step ever attends to: max_seq_len, or its window W
// when smaller (docs/model.md, "Sliding windows"), W + Q - 1 with Q query tokens a step
// (config.ring_positions; docs/model.md, "Multi-token queries"). Position pos lives in slot
// pos % capacity, a ring, so the slots hold the layer's last capacity positions in rotated
// order; attention does not depend on the order of its keys, so a token whose window fills the
// ring reads its slots as one block, and one whose window is shorter reads its positions' slots
// as at most two blocks, the ring cut where it wraps (ring_slots.hpp).
//
// A ragged batch (docs/model.md, "Ragged batches") gives each row its own capacity: row b is
// config.seq_lag_of(b) positions behind the longest, so it keeps max_seq_len minus that lag, and
// the cache's bytes are the sum of its sequences' caches. Rows advance together: row b's own
// length is length() minus its lag, and its positions count from its own 0.
//
// A shared prefix of P positions (docs/model.md, "Shared prefixes") is kept once per global
// layer and KV head, a (P, head_dim) block before the layer's rows: positions [0, P) of every
// row are its slots, and each row's own block holds positions P onwards (slot s is position
// P + s), so a row's capacity is max_seq_len - P. A window layer shares nothing: its rings keep
// each row's last positions, prefix or not.
// A paged cache (config.kv_block = P > 0; docs/model.md, "Paged caches") cuts each (layer, row,
// KV head) ring into blocks of P slots, ceil(capacity / P) of them, the last partly filled: its
// slot s is slot s % P of physical block block_table[s / P], and the keys (values, scales) are
// one pool of physical blocks, P vectors each, handed out by the seeded allocator
// (kv_block_allocator.hpp) so that a ring's blocks are neither adjacent nor in order. A ragged
// row's rings take their own blocks, as many as their own capacity needs. A shared prefix takes
// blocks of its own, once per layer and KV head, found through a table of its own
// (prefix_block_table): every row's table is then its own positions', as a serving engine's
// tables point at the prefix's blocks and then at the sequence's.
//
// A latent cache (docs/model.md, "Latent attention") holds one vector of r + d_r per position,
// the latent and the RoPE key, and no V: a value is the first r elements of its key
// (values_in_keys()), and head_dim() is r + d_r, n_kv_heads() 1.
class KvCache {
public:
    // Requires: config validated (kv_dtype stored by the engine), max_seq_len greater than every
    // row's lag (max_seq_len >= 1 for a uniform batch).
    // Allocates (and zeroes) everything up front; a paged cache's blocks placed from block_seed.
    KvCache(const ModelConfig& config, std::size_t max_seq_len, std::uint64_t block_seed = 0);

    KvDtype key_dtype() const { return key_dtype_; }
    KvDtype value_dtype() const { return value_dtype_; }
    // Elements of one cached key: dh, or r + d_r for a latent cache.
    std::size_t head_dim() const { return head_dim_; }
    // Elements of one cached value: dh, or r for a latent cache (the first r of its key).
    std::size_t value_dim() const { return value_dim_; }
    bool values_in_keys() const { return values_in_keys_; }
    std::size_t n_kv_heads() const { return n_kv_heads_; }
    std::size_t max_seq_len() const { return max_seq_len_; }
    // Positions layer `layer` keeps, its ring's slots: min(max_seq_len, its window).
    std::size_t capacity(std::size_t layer) const { return capacity_[layer]; }
    // Slots of row b's ring in `layer`: capacity(layer) less the row's lag, or its window.
    std::size_t capacity(std::size_t layer, std::size_t batch) const { return row_capacity_[layer * n_batch_ + batch]; }
    // Positions written to the longest rows, the same for every layer and head (a ring layer
    // keeps only the last capacity(layer) of them).
    std::size_t length() const { return length_; }
    // Positions written to row b: length() less its lag (none before the row starts).
    std::size_t length(std::size_t batch) const { return length_ > row_lag_[batch] ? length_ - row_lag_[batch] : 0; }

    // Positions per block of a paged cache; 0 for the contiguous one.
    std::size_t block_positions() const { return block_positions_; }
    bool paged() const { return block_positions_ != 0; }
    // A paged cache: the physical block of each of the ring's ceil(capacity(layer, batch) / P)
    // blocks, in slot order; nullptr for a contiguous cache.
    const std::uint32_t* block_table(std::size_t layer, std::size_t batch, std::size_t kv_head) const;

    // (capacity(layer), head_dim) floats of one layer, batch row and KV head, slot by slot.
    // Requires f32 keys (values), a contiguous cache; values() values of their own.
    float* keys(std::size_t layer, std::size_t batch, std::size_t kv_head);
    const float* keys(std::size_t layer, std::size_t batch, std::size_t kv_head) const;
    float* values(std::size_t layer, std::size_t batch, std::size_t kv_head);
    const float* values(std::size_t layer, std::size_t batch, std::size_t kv_head) const;

    // Any type: the (capacity(layer), head_dim) elements of one block, slot s at element
    // s·head_dim (position shared_prefix(layer) + s); of a paged cache, its pool's first vector
    // whatever the arguments (slot s at vector block_table[s / P]·P + s % P). A latent cache's
    // value_data is its key_data.
    const void* key_data(std::size_t layer, std::size_t batch, std::size_t kv_head) const;
    const void* value_data(std::size_t layer, std::size_t batch, std::size_t kv_head) const;
    // int8 keys (values): (capacity(layer)) floats, the scale of each cached vector, laid out as
    // key_data's vectors (paged: the pool's); nullptr for the other types. A latent cache's value_scales are its key_scales.
    const float* key_scales(std::size_t layer, std::size_t batch, std::size_t kv_head) const;
    const float* value_scales(std::size_t layer, std::size_t batch, std::size_t kv_head) const;

    // P: the positions every row shares in `layer`, kept once (0: none, or a window layer).
    std::size_t shared_prefix(std::size_t layer) const { return layer_prefix_[layer]; }
    // A paged cache's shared prefix of one layer and KV head: the physical block of each of its
    // ceil(P / block_positions()) blocks, position t in block t / block_positions(); nullptr for a
    // contiguous cache or without a prefix.
    const std::uint32_t* prefix_block_table(std::size_t layer, std::size_t kv_head) const;
    // The shared prefix of one layer and KV head, as key_data and the rest: (P, head_dim)
    // elements, slot t holding position t; of a paged cache, its pool's first vector (position
    // t at vector prefix_block_table[t / P]·P + t % P). Requires: shared_prefix(layer) > 0.
    const void* prefix_key_data(std::size_t layer, std::size_t kv_head) const;
    const void* prefix_value_data(std::size_t layer, std::size_t kv_head) const;
    const float* prefix_key_scales(std::size_t layer, std::size_t kv_head) const;
    const float* prefix_value_scales(std::size_t layer, std::size_t kv_head) const;

    // Writes position pos (of row `batch`'s own positions) K (head_dim floats) and V (value_dim
    // floats) into its slot, converted to the cache's types. Does not change length(). A latent
    // cache takes value == nullptr. A position of the shared prefix goes to the one copy every
    // row reads, so its K and V must be the same for every row. Requires: pos < max_seq_len less
    // the row's lag.
    void store(std::size_t layer, std::size_t batch, std::size_t kv_head, std::size_t pos, const float* key,
               const float* value);
    // Position pos's K (head_dim floats) or V (value_dim floats) read back from its slot.
    // Requires: pos is one of the layer's last capacity(layer) positions written.
    void load_key(std::size_t layer, std::size_t batch, std::size_t kv_head, std::size_t pos, float* key) const;
    void load_value(std::size_t layer, std::size_t batch, std::size_t kv_head, std::size_t pos, float* value) const;
    // This cache holds `source`'s positions and length, converted to its types. Requires:
    // source is an f32 cache of the same shape and capacity.
    void assign_converted(const KvCache& source);
    // Whether any vector written so far holds an e4m3 or e5m2 pattern the kernels' conversion
    // fixes up (holds_fp8_fix_patterns: from a NaN, or in e5m2 an infinity); stays true once
    // set. False, the kernels read the 8-bit floats without looking for those patterns
    // (docs/model.md, "KV-cache element types").
    bool holds_fp8_fix_patterns() const { return fp8_fix_patterns_; }

    // Marks positions [length, new_length) as written. Throws std::out_of_range
    // past max_seq_len, so no step ever writes outside the allocation.
    void extend_to(std::size_t new_length);
    // Forgets positions [new_length, length). Throws std::out_of_range if new_length > length,
    // or when a ring layer has overwritten a position the next step would attend to: a ring can
    // roll back Q positions, one step of the config's Q query tokens (a step repeated, as the
    // runner repeats it), or to 0, or any way before it first wraps.
    void roll_back(std::size_t new_length);
    // Throws std::out_of_range unless position `pos` may be written now (pos == length < max_seq_len).
    void require_writable(std::size_t pos) const;

    // Bytes allocated for K and V together, scales included, and a paged cache's block tables
    // and its last blocks' empty slots: kv_bytes at N = max_seq_len (docs/counting.md).
    std::size_t bytes() const;
    // bytes() of a cache built with these arguments, without building it. Throws SizeOverflow.
    static std::size_t bytes_for(const ModelConfig& config, std::size_t max_seq_len);
    // Every allocation of the cache, for the cold-cache eviction: K, V and int8's scales.
    std::vector<std::span<const std::byte>> storage() const;

private:
    // Cached keys (slots × heads × rows, summed over layers; paged, every ring's slots rounded up
    // to whole blocks) in the cache, and as many values unless they live in the keys.
    static std::size_t vectors_for(const ModelConfig& config, std::size_t max_seq_len);
    // Entries of a paged cache's block tables, one per block of every ring; 0 when contiguous.
    static std::size_t table_entries_for(const ModelConfig& config, std::size_t max_seq_len);
    // Index of the block's first vector, and of position pos's vector in it.
    std::size_t first_vector(std::size_t layer, std::size_t batch, std::size_t kv_head) const;
    std::size_t vector_of(std::size_t layer, std::size_t batch, std::size_t kv_head, std::size_t pos) const;
    std::size_t first_prefix_vector(std::size_t layer, std::size_t kv_head) const;
    // The vector key_data() points at: the block's first, or a paged cache's pool's first (0).
    std::size_t data_vector(std::size_t layer, std::size_t batch, std::size_t kv_head) const;
    // The vector's first byte in keys_ (values_ when `values`).
    std::byte* vector_address(bool values, std::size_t vector) const;
    // Writes `src` (head_dim floats) as the key (value) vector `vector`, in its type.
    void encode_vector(bool values, std::size_t vector, const float* src);
    float* require_f32(bool values, std::size_t vector) const;

    KvDtype key_dtype_;
    KvDtype value_dtype_;
    std::size_t key_row_bytes_;    // one cached key: kv_row_bytes(key_dtype_, head_dim)
    std::size_t value_row_bytes_;  // one cached value, as key_row_bytes_
    std::size_t n_batch_;
    std::size_t n_kv_heads_;
    std::size_t head_dim_;
    std::size_t value_dim_;
    bool values_in_keys_;
    std::size_t max_seq_len_;
    std::vector<std::size_t> row_lag_;       // (n_batch): positions each row is behind the longest
    std::vector<std::size_t> capacity_;      // (n_layers): slots of each layer's longest ring
    std::vector<std::size_t> row_capacity_;  // (n_layers, n_batch): slots of each row's ring
    std::vector<std::size_t> layer_prefix_;  // (n_layers): P, positions every row shares (0 on a window layer)
    bool fp8_fix_patterns_ = false;          // holds_fp8_fix_patterns()
    std::size_t max_roll_back_;              // Q: positions a wrapped ring can take back
    std::vector<std::size_t> prefix_first_;  // (n_layers): index of each layer's shared prefix block
    std::vector<std::size_t> row_first_;     // (n_layers, n_batch): index of each row's first vector
    std::size_t block_positions_;            // P of a paged cache, else 0
    std::vector<std::size_t> prefix_first_block_;  // paged: (n_layers), each layer's first prefix table entry
    std::vector<std::size_t> row_first_block_;  // paged: (n_layers, n_batch), each row's first table entry
    std::vector<std::uint32_t> block_table_;    // paged: every ring's physical blocks, rows as row_first_block_
    std::size_t length_ = 0;
    PageAlignedVector<std::byte> keys_;    // per layer (n_batch, n_kv_heads, capacity) vectors of key_row_bytes_
    PageAlignedVector<std::byte> values_;  // the same of value_row_bytes_; empty when values live in the keys
    PageAlignedVector<float> key_scales_;    // int8 keys: per layer (n_batch, n_kv_heads, capacity); else empty
    PageAlignedVector<float> value_scales_;  // int8 values: the same shape; else empty, as with values in the keys
};

}  // namespace kvbench
