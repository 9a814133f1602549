// kernel_isa(): which instruction-set path of kvbench's own kernels this build runs.
#pragma once

namespace kvbench {

// The path of the cached step's kernels (small_m_gemm, attend_decode) that this build compiled
// in and runs: "avx512", "avx2+fma" or "portable". It follows the build's KVBENCH_ARCH (see
// cmake/KvbenchArch.cmake), not the CPU running it, and every result records it, so two results
// from different builds or CPUs are never mistaken for a change of the kernels themselves.
const char* kernel_isa();

}  // namespace kvbench
