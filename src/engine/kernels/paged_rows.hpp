// A paged problem's keys and values as the kernel's blocks read them: the run of rows inside one
// block of the cache, or a kernel block that crosses cache blocks gathered into the workspace.
// Private to src/engine/kernels (attention_kernel.cpp).
#pragma once

#include "attention_types.hpp"

#include "kvbench/engine/kv_convert.hpp"

#include <algorithm>
#include <bit>
#include <cstddef>

namespace kvbench {

// Where key first_key of a paged problem lies: its row of the pool, and how many keys from it
// on, up to max_keys, share its cache block. Inline, and shifts for a power-of-two block: the
// prefetcher asks this for every run of the next few kernel blocks, and a division a run had
// the kernel's bookkeeping at a tenth of a paged step's time on one thread
// (bench/journal/2026-12-06-paged-bookkeeping-and-int8-scales.md). Requires: a paged
// problem (block_table not null), first_key < n_ctx.
struct PagedRun {
    std::size_t row;
    std::size_t n_keys;
};
inline PagedRun paged_run(const GroupAttention& problem, std::size_t first_key, std::size_t max_keys) {
    const std::size_t positions = problem.block_positions;
    const std::size_t slot = problem.first_slot + first_key;
    std::size_t block = 0;
    std::size_t in_block = 0;
    if (std::has_single_bit(positions)) {
        block = slot >> std::countr_zero(positions);
        in_block = slot & (positions - 1);
    } else {
        block = slot / positions;
        in_block = slot % positions;
    }
    const std::size_t n_keys = std::min({max_keys, problem.n_ctx - first_key, positions - in_block});
    return {std::size_t{problem.block_table[block]} * positions + in_block, n_keys};
}

// Where the rows of a run lie: keys, values and int8's scales (null for a side without), n_keys
// rows from each. The kernel takes a paged block's runs as these pointers, not as whole
// GroupAttention copies: a copy returned by value is written field by field and read back in
// 64-byte loads, which wait for those stores to reach the cache, and on Zen 5 those waits held
// a fifth of the paged block's own bookkeeping (bench/journal/2026-12-07-paged-runs-as-pointers.md).
struct RunRows {
    const std::byte* keys;
    const std::byte* values;
    const float* key_scales;
    const float* value_scales;
    std::size_t n_keys;
};
inline RunRows paged_run_rows(const GroupAttention& problem, std::size_t first_key, std::size_t max_keys) {
    const PagedRun run = paged_run(problem, first_key, max_keys);
    return {static_cast<const std::byte*>(problem.keys) + run.row * kv_row_bytes(problem.kv_dtype, problem.kv_stride),
            static_cast<const std::byte*>(problem.values) + run.row * kv_row_bytes(problem.value_dtype, problem.kv_stride),
            problem.key_scales != nullptr ? problem.key_scales + run.row : nullptr,
            problem.value_scales != nullptr ? problem.value_scales + run.row : nullptr, run.n_keys};
}

// Keys [first_key, first_key + n_keys) of a paged problem decoded to f32 into the workspace as
// decode_kv_blocks() writes them (keys in decoded_keys(), values in values(), padded_dim apart),
// run by run: each element is decoded alone, so the block's floats do not depend on where the
// cache's blocks cut it. Requires n_keys <= max_key_block.
void decode_paged_rows(const GroupAttention& problem, std::size_t first_key, std::size_t n_keys,
                       AttendWorkspace& workspace);

// Keys [first_key, first_key + n_keys) of a paged problem, whose cache blocks they cross, copied
// as stored (bytes and int8's scales) into workspace regions the fused tiles leave unused: keys
// in decoded_keys(), values in values(), scales as gather_paged_scales() writes them. Returns
// where the n_keys rows now lie. Requires: keys and values whose rows fit padded_dim floats,
// n_keys <= max_key_block.
RunRows gather_paged_rows(const GroupAttention& problem, std::size_t first_key, std::size_t n_keys,
                          AttendWorkspace& workspace);

// int8's key and value scales of keys [first_key, first_key + n_keys) of a paged problem, copied
// in order into keys_t() (the transposed tiles' buffer, which no fused block packs). Returns where
// each side's lie, null for a side without scales. Requires n_keys <= max_key_block.
struct GatheredScales {
    const float* keys = nullptr;
    const float* values = nullptr;
};
GatheredScales gather_paged_scales(const GroupAttention& problem, std::size_t first_key, std::size_t n_keys,
                                   AttendWorkspace& workspace);

}  // namespace kvbench
