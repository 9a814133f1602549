// small_m_gemm_lanes(): y = x · W^T (+ y) for 9 to 64 rows of x, the rows in a vector's lanes,
// over f32 weights or (small_m_gemm_typed_lanes) bf16, f16 and int8 ones.
#pragma once

#include "tuning.hpp"

#include "kvbench/engine/weight_dtype.hpp"

#include <cstddef>

namespace kvbench {

inline constexpr std::size_t small_m_lanes_max_rows = 64;

// Whether this build has the kernels: AVX-512 builds only.
bool small_m_lanes_compiled();

// The fewest rows of x linear() gives these kernels over weights of `dtype` (tuning.hpp's
// small_m_lanes row); 0 where the build has none.
std::size_t small_m_lanes_min_rows(WeightDtype dtype);

// Whether linear() gives n_rows rows of x times weights of `dtype` to these kernels: a build that
// has them, from small_m_lanes_min_rows(dtype) to small_m_lanes_max_rows.
bool small_m_lanes_takes(std::size_t n_rows, WeightDtype dtype);

// The most bytes the kernels keep, per calling thread and for reuse, for x transposed, over calls
// of at most n_rows rows up to in_dim long times weights of `dtype`: the rows they take, rounded
// up to 16, times in_dim floats; 0 where they take none of them.
std::size_t small_m_lanes_bytes(std::size_t n_rows, std::size_t in_dim, WeightDtype dtype);

// y (n_rows, out_dim) = x (n_rows, in_dim) · W^T + beta · y, W (out_dim, in_dim) row-major,
// reading W once for all rows. y is not read when beta is 0. Each output sums its products over
// k in order within blocks of 256 columns, then the blocks' sums in order: the bits depend on
// the shape only, not on addresses or the thread count.
// Requires: 1 <= n_rows <= small_m_lanes_max_rows; in_dim >= 1; beta 0 or 1;
// small_m_lanes_compiled(); y overlaps neither x nor w.
void small_m_gemm_lanes(const float* x, std::size_t n_rows, std::size_t in_dim, const float* w, std::size_t out_dim,
                        float beta, float* y);
// The same over bf16, f16 or int8 weights: each tile converts a block of its rows' weights to f32
// (256 columns, in L1) before the same FMAs, int8's scale multiplying each output's total once.
// Requires: as above, and w.dtype not f32.
// elements: (out_dim, in_dim) of dtype; scales: int8's (out_dim) floats, else null.
void small_m_gemm_typed_lanes(const float* x, std::size_t n_rows, std::size_t in_dim, const void* elements,
                              const float* scales, WeightDtype dtype, std::size_t out_dim, float beta, float* y);

}  // namespace kvbench
