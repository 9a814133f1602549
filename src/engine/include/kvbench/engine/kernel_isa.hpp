// kernel_isa(): which instruction-set path of kvbench's own kernels this build runs.
#pragma once

namespace kvbench {

// The path of the cached step's kernels (small_m_gemm, attend_decode) that this build compiled
// in and runs: "avx512", "avx2+fma" or "portable". It follows the build's KVBENCH_ARCH (see
// cmake/KvbenchArch.cmake), not the CPU running it, and every result records it, so two results
// from different builds or CPUs are never mistaken for a change of the kernels themselves.
const char* kernel_isa();

// Matrix units beside that path that the kernels take on this CPU: "amx-int8" where int8
// weights at tuning.hpp's amx_int8_from_rows to 8 rows of x go through AMX's tiles
// (small_m_amx.hpp: an AVX-512 build on a CPU with them and an OS that grants them), else "".
// A property of the machine and build, as kernel_isa is, not of the points run: a run of f32
// weights says it too. Unlike kernel_isa it follows the CPU and the OS, so it is recorded
// beside it: the same build multiplies int8 weights differently on Zen and on Xeon.
const char* kernel_tiles();

}  // namespace kvbench
