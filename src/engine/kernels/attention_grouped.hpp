// attend_group_by_lanes(): attend_group for large query groups with 16 vector registers (AVX2, SSE, NEON).
#pragma once

#include "attention_kernel.hpp"

#include <cstdint>
#include <optional>

namespace kvbench {

// attend_group's contract (attention_kernel.hpp), computed with the query rows as
// vector lanes, when this build has the kernel and the problem suits it: returns false, having
// touched nothing, otherwise. Taken on builds without AVX-512 (whose own kernel is tuned for
// 32 registers) for n_rows a multiple of 8 (AVX2) or 4 (other builds), at least 8, and
// head_dim a whole number of vectors. Deterministic: the order of every sum depends on the
// shape only.
// Returns the FLOPs it executed (no padding: rows and head_dim are whole vectors and every key
// block is scored for its own keys only), or nothing when it did not take the problem.
std::optional<std::uint64_t> attend_group_by_lanes(const GroupAttention& problem, const PartialSoftmax& result,
                                                   AttendWorkspace& workspace);
// The smallest group (and the multiple of rows) this build's lanes kernel takes; 0: none compiled.
std::size_t lanes_kernel_rows();

}  // namespace kvbench
