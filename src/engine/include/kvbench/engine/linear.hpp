// linear(): the projections of a step, y = x · W^T (+ y), on the fastest kernel for the shape
// and the weights' element type.
#pragma once

#include "kvbench/engine/weight_matrix.hpp"

#include <cstddef>
#include <cstdint>

namespace kvbench {

// y (n_rows, out_dim) = x (n_rows, in_dim) · W^T + beta · y, with W (out_dim, in_dim) row-major
// in w.dtype (a float pointer is an f32 W). beta = 1 folds a residual add into the product.
// Returns the FLOPs executed (2·rows·out·in). Up to a few groups of 8 rows the small-M kernels
// read W once per group in its own type; more rows run OpenBLAS's sgemm, a reduced type converted
// to f32 a block of W at a time first (docs/model.md, "Weight element types").
// Requires: beta is 0 or 1; x and y do not overlap.
std::uint64_t linear(const float* x, std::size_t n_rows, std::size_t in_dim, WeightView w,
                     std::size_t out_dim, float beta, float* y);

// linear() on OpenBLAS's sgemm whatever the row count: --verify's uncached forward projects with
// it (step_kernels.hpp says why). Same contract as linear().
std::uint64_t linear_sgemm(const float* x, std::size_t n_rows, std::size_t in_dim, WeightView w,
                           std::size_t out_dim, float beta, float* y);

// The most bytes linear() keeps, per calling thread and for reuse, to convert reduced-type
// weights for sgemm over n_rows rows of x whose rows are at most max_in_dim long (an upper bound,
// linear_sgemm's included): counted in the scratch's memory budget.
std::size_t linear_conversion_bytes(std::size_t n_rows, std::size_t max_in_dim);
// The most bytes linear() keeps, per calling thread and for reuse, to multiply weights of `dtype`
// by at most n_rows rows of x up to max_in_dim long with the rows in vector lanes (x transposed);
// 0 where it does not.
std::size_t linear_lanes_bytes(std::size_t n_rows, std::size_t max_in_dim, WeightDtype dtype);
// The most bytes linear() keeps, per calling thread and for reuse, to multiply int8 weights on
// AMX's tiles (x's packed parts, for rows up to max_in_dim long); 0 where the tiles are not used.
std::size_t linear_int8_tile_bytes(std::size_t max_in_dim);

// linear()'s naive twin (src/engine/reference.cpp): plain loops, double accumulators, one
// thread, each weight read by the scalar definition (WeightView::at). Returns the FLOPs it
// executed, counted one multiply-add at a time.
std::uint64_t linear_naive(const float* x, std::size_t n_rows, std::size_t in_dim, WeightView w,
                           std::size_t out_dim, float beta, float* y);

}  // namespace kvbench
