// StepKernels: the kernels a decode path runs, as one table of function pointers (calm's
// dotprod_t), so a path can run the fast kernels, a reference, or a test's planted fault.
#pragma once

#include "kvbench/engine/attention.hpp"
#include "kvbench/engine/causal_attention.hpp"
#include "kvbench/engine/layer_ops.hpp"
#include "kvbench/engine/linear.hpp"

namespace kvbench {

struct StepKernels {
    using Linear = std::uint64_t (*)(const float* x, std::size_t n_rows, std::size_t in_dim, WeightView w,
                                     std::size_t out_dim, float beta, float* y);
    using AttendDecode = AttendDecodeKernel;
    using AttendCausal = FlopCount (*)(const ModelConfig& config, std::size_t layer, const float* qkv, float* out,
                                       CausalAttentionScratch& scratch, const std::atomic<bool>* stop,
                                       const float* sinks);
    using RmsNorm = void (*)(const float* x, std::size_t n_rows, std::size_t dim, const float* gains, float* y);
    using Rope = void (*)(const ModelConfig& config, float* qkv, std::size_t n_rows, std::size_t seq_len,
                          std::size_t first_pos);
    using SiluGate = void (*)(const float* gate_up, std::size_t n_rows, std::size_t width, float* out);

    Linear linear;              // the projections (linear.hpp's contract)
    AttendDecode attend_decode; // the cached step's attention
    AttendCausal attend_causal; // the uncached forward's attention
    // A full block's element-wise parts (layer_ops.hpp); the fast ones unless a table says otherwise.
    RmsNorm rmsnorm = &kvbench::rmsnorm;
    Rope rope = &kvbench::apply_rope;
    SiluGate silu_gate = &kvbench::silu_gate;
    // The cached step's attention for all its Q query tokens in one call (attend_decode_tokens's
    // contract, attention.hpp); null: attend_decode once per token (attend_each_token), so a table
    // that replaces attend_decode alone runs its own kernel for every token.
    AttendDecode attend_decode_tokens = nullptr;
};

// What both paths run unless told otherwise.
inline constexpr StepKernels fast_kernels{.linear = &linear,
                                         .attend_decode = &attend_decode,
                                         .attend_causal = &attend_causal,
                                         .attend_decode_tokens = &attend_decode_tokens};

// The plain-loop twins that --check holds the fast kernels to.
inline constexpr StepKernels naive_kernels{&linear_naive,  &attend_decode_naive, &attend_causal_naive,
                                           &rmsnorm_naive, &apply_rope_naive,    &silu_gate_naive,
                                           &attend_decode_tokens_naive};

// The kernels --verify's uncached forward runs: `timed`'s attention, which is attend_causal,
// another kernel than the cached step's, and sgemm projections, because with linear() both
// paths would project with the same small-m kernel when B·N <= 24 rows, and a fault there
// would show in both and pass (docs/model.md, "Equivalence"). A full block's element-wise parts
// are the naive twins: one code for both paths would hide a fault in it.
constexpr StepKernels verify_reference_kernels(const StepKernels& timed) {
    return {&linear_sgemm,     timed.attend_decode, timed.attend_causal,         &rmsnorm_naive,
            &apply_rope_naive, &silu_gate_naive,    timed.attend_decode_tokens};
}

}  // namespace kvbench
