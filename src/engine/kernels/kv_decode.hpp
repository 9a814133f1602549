// decode_kv_block(): a block of cached vectors of a reduced type as f32 rows, with the widest
// conversion instructions the build has. Private to src/engine/kernels (the attention kernels).
#pragma once

#include "attention_types.hpp"

#include "kvbench/engine/kv_dtype.hpp"

#include <cstddef>

namespace kvbench {

// dst row r = src row r decoded (src row r at byte r·kv_row_bytes(dtype, src_stride); int8 rows
// times scales[r], q8_0 and q4_0 rows times their blocks' own scales),
// dim floats, then zeros up to dst_stride, so a row is whole vectors. Gives the bits of
// decode_kv_vector (kv_convert.hpp) on every path: the vector conversions are exact, and int8's
// one multiply rounds as the scalar one does.
// Requires: dtype stored by the engine, dst_stride >= dim.
void decode_kv_block(KvDtype dtype, const void* src, std::size_t src_stride, const float* scales,
                     std::size_t n_rows, std::size_t dim, float* dst, std::size_t dst_stride);

// The keys and values of problem's block [first_key, first_key + n_keys) decoded into the
// workspace: keys to ws.decoded_keys(), values to ws.values(), rows of ws.padded_dim() floats.
// Requires: the block inside the problem's context.
void decode_kv_blocks(const GroupAttention& problem, std::size_t first_key, std::size_t n_keys, AttendWorkspace& ws);

}  // namespace kvbench
