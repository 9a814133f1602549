// linear(): the projections of a step, y = x · W^T (+ y), on the fastest kernel for the shape.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kvbench {

// y (n_rows, out_dim) = x (n_rows, in_dim) · W^T + beta · y, with W (out_dim, in_dim) row-major.
// beta = 1 folds a residual add into the product. Returns the FLOPs executed (2·rows·out·in).
// Requires: beta is 0 or 1; x and y do not overlap.
std::uint64_t linear(const float* x, std::size_t n_rows, std::size_t in_dim, const float* w,
                     std::size_t out_dim, float beta, float* y);

// linear() on OpenBLAS's sgemm whatever the row count: --verify's uncached forward projects with
// it (step_kernels.hpp says why). Same contract as linear().
std::uint64_t linear_sgemm(const float* x, std::size_t n_rows, std::size_t in_dim, const float* w,
                           std::size_t out_dim, float beta, float* y);

// linear()'s naive twin (src/engine/reference.cpp): plain loops, double accumulators, one
// thread. Returns the FLOPs it executed, counted one multiply-add at a time.
std::uint64_t linear_naive(const float* x, std::size_t n_rows, std::size_t in_dim, const float* w,
                           std::size_t out_dim, float beta, float* y);

}  // namespace kvbench
