// kernel_isa(): the instruction set the kernels were compiled for, from the compiler's macros.
#include "kvbench/engine/kernel_isa.hpp"

namespace kvbench {

// The same tests as the kernels' own #if chains (small_m_gemm.cpp, simd.hpp,
// attention_grouped.cpp): this file is compiled with the same kvbench_arch flags as they are.
const char* kernel_isa() {
#if defined(__AVX512F__)
    return "avx512";
#elif defined(__AVX2__) && defined(__FMA__)
    return "avx2+fma";
#else
    return "portable";
#endif
}

}  // namespace kvbench
