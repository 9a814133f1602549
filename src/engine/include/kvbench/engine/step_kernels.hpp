// StepKernels: the kernels a decode path runs, as one table of function pointers (calm's
// dotprod_t), so a path can run the fast kernels, a reference, or a test's planted fault.
#pragma once

#include "kvbench/engine/attention.hpp"
#include "kvbench/engine/causal_attention.hpp"
#include "kvbench/engine/linear.hpp"

namespace kvbench {

struct StepKernels {
    using Linear = std::uint64_t (*)(const float* x, std::size_t n_rows, std::size_t in_dim, const float* w,
                                     std::size_t out_dim, float beta, float* y);
    using AttendDecode = FlopCount (*)(const ModelConfig& config, const float* q, std::size_t q_stride,
                                       const KvCache& cache, std::size_t layer, std::size_t n_ctx, float* out,
                                       DecodeAttentionScratch& scratch, const float* sinks);
    using AttendCausal = FlopCount (*)(const ModelConfig& config, std::size_t layer, const float* qkv, float* out,
                                       CausalAttentionScratch& scratch, const std::atomic<bool>* stop,
                                       const float* sinks);

    Linear linear;              // the projections (linear.hpp's contract)
    AttendDecode attend_decode; // the cached step's attention
    AttendCausal attend_causal; // the uncached forward's attention
};

// What both paths run unless told otherwise.
inline constexpr StepKernels fast_kernels{&linear, &attend_decode, &attend_causal};

// The plain-loop twins that --check holds the fast kernels to.
inline constexpr StepKernels naive_kernels{&linear_naive, &attend_decode_naive, &attend_causal_naive};

// The kernels --verify's uncached forward runs: `timed`'s attention, which is attend_causal,
// another kernel than the cached step's, and sgemm projections, because with linear() both
// paths would project with the same small-m kernel when B·N <= 24 rows, and a fault there
// would show in both and pass (docs/model.md, "Equivalence").
constexpr StepKernels verify_reference_kernels(const StepKernels& timed) {
    return {&linear_sgemm, timed.attend_decode, timed.attend_causal};
}

}  // namespace kvbench
