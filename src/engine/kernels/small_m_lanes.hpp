// small_m_gemm_lanes(): y = x · W^T (+ y) for 9 to 64 rows of x, the rows in a vector's lanes.
#pragma once

#include "tuning.hpp"

#include <cstddef>

namespace kvbench {

// The rows of x linear() gives this kernel where the build has it (tuning.hpp).
inline constexpr std::size_t small_m_lanes_min_rows = tuning.small_m_lanes.min_rows;
inline constexpr std::size_t small_m_lanes_max_rows = 64;

// Whether this build has the kernel: AVX-512 builds only.
bool small_m_lanes_compiled();

// Whether linear() gives n_rows rows of x to this kernel: a build that has it, from the tuning
// class's min_rows to small_m_lanes_max_rows.
bool small_m_lanes_takes(std::size_t n_rows);

// The most bytes the kernel keeps, per calling thread and for reuse, for x transposed, over calls
// of at most n_rows rows up to in_dim long: the rows it takes, rounded up to 16, times in_dim
// floats; 0 where it takes none of them.
std::size_t small_m_lanes_bytes(std::size_t n_rows, std::size_t in_dim);

// y (n_rows, out_dim) = x (n_rows, in_dim) · W^T + beta · y, W (out_dim, in_dim) row-major,
// reading W once for all rows. y is not read when beta is 0. Each output sums its products over
// k in order within blocks of 256 columns, then the blocks' sums in order: the bits depend on
// the shape only, not on addresses or the thread count.
// Requires: 1 <= n_rows <= small_m_lanes_max_rows; in_dim >= 1; beta 0 or 1;
// small_m_lanes_compiled(); y overlaps neither x nor w.
void small_m_gemm_lanes(const float* x, std::size_t n_rows, std::size_t in_dim, const float* w, std::size_t out_dim,
                        float beta, float* y);

}  // namespace kvbench
