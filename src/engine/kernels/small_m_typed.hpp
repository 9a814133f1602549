// small_m_gemm_typed(): y = x · W^T (+ y) for a few rows of x and W stored as bf16, f16 or int8,
// each weight converted to f32 in registers as it is loaded, W streamed once for all rows.
#pragma once

#include "small_m_isa.hpp"

#include "kvbench/engine/weight_dtype.hpp"

#include <cstddef>

namespace kvbench {

// Where a call stages the chunk of x its tiles read (tuning.hpp's small_m_typed): in L1 where
// that leaves each weight row runs long enough, else in L2; or in L2 whatever the rows.
enum class XStaging { l1_where_runs_allow, l2 };

// This host's staging: l2 on an Intel CPU where the build's tuning class says so.
XStaging host_x_staging();

// A stored (out_dim, in_dim) matrix as the kernel reads it (the model's WeightView, spelled in
// this layer's types).
struct TypedWeights {
    const void* elements;  // (out_dim, in_dim) elements of dtype
    const float* scales;   // int8: (out_dim) floats, one per output; else null
    WeightDtype dtype;
};

// y (n_rows, out_dim) = x (n_rows, in_dim) · W^T + beta · y, W (out_dim, in_dim) of w.dtype.
// bf16 becomes f32 by a shift, f16 by F16C's vcvtph2ps (the portable path by decode_f16), int8
// by a convert, and an int8 output is multiplied by its scale once, after its dot product.
// Each OpenMP thread streams one contiguous slab of W's rows. y is not read when beta is 0.
// The order of the sums depends on the shape, the isa and the staging of x only.
// Requires: 1 <= n_rows <= small_m_max_rows; in_dim >= 1; beta is 0 or 1; w.dtype is not
// f32 (small_m_gemm reads those); y overlaps neither x nor w; isa is compiled (small_m_gemm.hpp's small_m_isas()).
void small_m_gemm_typed(const float* x, std::size_t n_rows, std::size_t in_dim, TypedWeights w,
                        std::size_t out_dim, float beta, float* y, SmallMIsa isa, XStaging staging);
// The same on the widest isa compiled, staged as this host's: what linear() runs.
void small_m_gemm_typed(const float* x, std::size_t n_rows, std::size_t in_dim, TypedWeights w,
                        std::size_t out_dim, float beta, float* y);

}  // namespace kvbench
