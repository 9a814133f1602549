// attend_group_tiled(): the decode attention kernel with query rows as register-tile rows, for any group.
#pragma once

#include "attention_types.hpp"

#include <cstddef>
#include <cstdint>

namespace kvbench {

// Softmax attention of problem.n_rows queries over keys and values: one pass over blocks of
// keys with an online softmax (running max and sum per row), a block's scores never leaving
// L1; each key and value row is loaded from memory once for all rows. Written once against
// simd.hpp's back-end; its blocks and tiles are tuning.hpp's `tiled` row.
// Returns the FLOPs executed (2 per multiply-add, vector lanes that hold padding included),
// counted from the loop bounds used, with R = n_rows, dh = head_dim and the build's shape
// (attend_group_tiled_shape(): `lanes` per vector, `key_block` keys per block):
// - outputs: 2·R·n_ctx·round_up(dh, lanes), head_dim padded to whole vectors;
// - scores, R > dot_rows_max: 2·R·dh·key_block per block, a partial last block scored whole;
// - scores, R <= dot_rows_max: rows go in tiles of 4, then 2, then 1 (each at most `lanes`) as
//   many as fit; a tile of r rows scores a block's keys lanes/r at a time, the last group padded
//   by repeating a key, each over round_up(dh, lanes): 2·r·round_up(n_keys, lanes/r)·round_up(dh,
//   lanes) per tile and block of n_keys keys.
// Requires: 1 <= n_rows <= workspace.max_rows(), head_dim == workspace.head_dim(), n_ctx >= 1,
// q_stride, kv_stride >= head_dim, out_stride >= head_dim; int8 keys and values with their scales.
std::uint64_t attend_group_tiled(const GroupAttention& problem, const PartialSoftmax& result,
                                 AttendWorkspace& workspace);

// The shape of this build's tiled kernel, for the FLOP count above.
struct TiledKernelShape {
    std::size_t lanes;         // floats per vector
    std::size_t key_block;     // keys per block, <= max_key_block
    std::size_t dot_rows_max;  // most rows scored by dot-product tiles
};
TiledKernelShape attend_group_tiled_shape();

}  // namespace kvbench
