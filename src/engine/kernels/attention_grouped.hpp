// attend_group_by_lanes(): the decode attention kernel with query rows as vector lanes, for large groups
// in 16 vector registers (AVX2, SSE, NEON).
#pragma once

#include "attention_types.hpp"

#include <cstddef>
#include <cstdint>

namespace kvbench {

// attend_group_tiled's contract (attention_kernel.hpp), computed with the query rows as vector
// lanes. Written for 16 registers; compiled on every build, so that its tests run everywhere,
// and chosen where tuning.hpp's `lanes` row says (src/engine/attend_group.cpp). Deterministic:
// the order of every sum depends on the shape only.
// Returns the FLOPs it executed, 4·n_rows·n_ctx·head_dim: no padding, as rows and head_dim are
// whole vectors and every key block is scored for its own keys only.
// Requires: n_rows and head_dim multiples of lanes_kernel_width(), the rest of
// attend_group_tiled's requirements.
std::uint64_t attend_group_by_lanes(const GroupAttention& problem, const PartialSoftmax& result,
                                    AttendWorkspace& workspace);

// Floats per vector of this build's lanes kernel: 8 with AVX2, 4 otherwise (SSE, NEON).
std::size_t lanes_kernel_width();

}  // namespace kvbench
