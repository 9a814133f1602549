// The decode attention kernels' vocabulary: one group's problem, where its partial softmax goes, and
// the per-thread workspace. Shared by the kernels, their parts and the model that calls them.
#pragma once

#include "kvbench/engine/kv_dtype.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kvbench {

// Keys per block of the attention kernels at most (their key blocks are in tuning.hpp): the
// workspace holds a block's scores, a few vectors per query row, which stay in L1.
inline constexpr std::size_t max_key_block = 64;

// One attend_group problem: n_rows query rows against n_ctx keys and values of one KV head.
// Keys are elements of kv_dtype and values of value_dtype (the same type unless --kv-dtype sets
// them apart); a reduced type is converted to f32 inside the kernel, as the tiles load it or one
// block of keys at a time for all rows of the group (docs/model.md, "KV-cache element types").
struct GroupAttention {
    const float* q = nullptr;       // (n_rows, q_stride) floats: query r at q + r·q_stride, head_dim used
    std::size_t q_stride = 0;
    std::size_t n_rows = 0;
    // (n_ctx, kv_stride) elements: key t at byte t·kv_row_bytes(kv_dtype, kv_stride), head_dim used
    const void* keys = nullptr;
    const void* values = nullptr;   // (n_ctx, kv_stride) elements of value_dtype, as keys
    std::size_t kv_stride = 0;      // elements
    KvDtype kv_dtype = KvDtype::f32;     // the keys'
    KvDtype value_dtype = KvDtype::f32;  // the values'
    const float* key_scales = nullptr;    // int8 keys: (n_ctx) floats, key t is its elements times key_scales[t]
    const float* value_scales = nullptr;  // int8 values: (n_ctx) floats, as key_scales
    std::size_t n_ctx = 0;
    std::size_t head_dim = 0;
    float scale = 1.0f;             // applied to q·k before the softmax
    // No key or value holds an e4m3 or e5m2 pattern their conversion fixes up (the cache's
    // holds_fp8_fix_patterns() false): the fused tiles then read every block without scanning
    // it for one. False: each block is scanned.
    bool fp8_fix_free = false;
    // How the fused tiles read e4m3 keys and values: host, this CPU's choice (tuning.hpp); else
    // through binary16 (2^8 small), or as f32 bits placed by a shift and a mask (2^120 small) for
    // the keys alone or for both. The query (keys) and the probabilities (values) are that much
    // larger, so every product is the same number (docs/model.md, "KV-cache element types"): the
    // keys' f32 bits give binary16's bits; the values' differ only where binary16's product,
    // 2^8 small, fell below f32's normal range. f32 bits need an AVX-512 build, and for keys a
    // query below 2^7; elsewhere binary16 is read.
    enum class E4m3Read { host, binary16, f32_bit_keys, f32_bits };
    E4m3Read e4m3_read = E4m3Read::host;
    // A paged cache (docs/model.md, "Paged caches"): keys, values and their scales are a pool's
    // first vector, and key t is slot first_slot + t of the ring, the pool's vector
    // block_table[s / block_positions] · block_positions + s % block_positions (s = first_slot + t).
    // Null: contiguous rows, key t at row t.
    const std::uint32_t* block_table = nullptr;
    std::size_t block_positions = 0;
    std::size_t first_slot = 0;
};

// Where attend_group writes, left unnormalised so that the splits of one context can be
// merged (flash-decoding's split-K), with s_rt = scale · q_r · k_t:
//   row_max[r] = max_t s_rt,  row_sum[r] = Σ_t e^(s_rt - row_max[r]),
//   out_r = Σ_t e^(s_rt - row_max[r]) · v_t.
struct PartialSoftmax {
    float* out = nullptr;      // (n_rows, out_stride) floats, head_dim used per row
    std::size_t out_stride = 0;
    float* row_max = nullptr;  // (n_rows) floats
    float* row_sum = nullptr;  // (n_rows) floats
};

// Per-thread buffers of attend_group for up to max_rows queries of head_dim floats, sized once.
// head_dim is padded to padded_dim (a multiple of 16) so every row is whole vectors.
class AttendWorkspace {
public:
    // Requires: max_rows >= 1, head_dim >= 1.
    AttendWorkspace(std::size_t max_rows, std::size_t head_dim);
    std::size_t bytes() const { return storage_.size() * sizeof(float); }
    // bytes() of a workspace built with these arguments, without building it.
    static std::size_t bytes_for(std::size_t max_rows, std::size_t head_dim);

    std::size_t max_rows() const { return max_rows_; }
    std::size_t head_dim() const { return head_dim_; }
    std::size_t padded_dim() const { return layout_.padded_dim; }

    // (max_rows, padded_dim) floats: scale · q, as rows, or interleaved as the dot tiles read it
    float* queries() { return base() + layout_.queries; }
    float* outputs() { return base() + layout_.outputs; }      // (max_rows, padded_dim) floats: running Σ p·v
    float* probs() { return base() + layout_.probs; }          // (max_rows, max_key_block) floats: a block's scores, then p
    float* lane_sums() { return base() + layout_.lane_sums; }  // (max_rows, 16) floats: Σ p, one partial per lane
    float* row_max() { return base() + layout_.row_max; }      // (max_rows) floats: running max score
    float* rescale() { return base() + layout_.rescale; }      // (max_rows) floats: e^(old max - new max)
    float* keys_t() { return base() + layout_.keys_t; }        // (padded_dim, max_key_block) floats: K block transposed
    float* values() { return base() + layout_.values; }        // (max_key_block, padded_dim) floats: V block packed
    float* decoded_keys() { return base() + layout_.decoded_keys; }  // (max_key_block, padded_dim) floats: K block as f32

private:
    // Offsets in floats from base(), each region a whole number of 64-byte lines.
    struct Layout {
        std::size_t padded_dim, queries, outputs, probs, lane_sums, row_max, rescale, keys_t, values, decoded_keys,
            total;
    };
    static Layout layout(std::size_t max_rows, std::size_t head_dim);
    // The first 64-byte boundary inside storage_, recomputed so copies stay aligned. Inline:
    // every tile asks for its regions, and a call per tile slowed int8's one-row tiles
    // (bench/journal/2026-12-02-fused-tiles-from-cache.md).
    float* base() {
        const auto address = reinterpret_cast<std::uintptr_t>(storage_.data());
        const std::uintptr_t aligned = (address + 63) & ~std::uintptr_t{63};
        return storage_.data() + (aligned - address) / sizeof(float);
    }

    std::size_t max_rows_;
    std::size_t head_dim_;
    Layout layout_;
    std::vector<float> storage_;  // (layout_.total + 15) floats: the regions above plus alignment slack
};

}  // namespace kvbench
