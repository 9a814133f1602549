// kernel_isa(): the instruction set the kernels were compiled for: the name of tuning.hpp's class.
#include "kvbench/engine/kernel_isa.hpp"

#include "kernels/small_m_amx.hpp"
#include "kernels/tuning.hpp"

namespace kvbench {

// tuning.hpp picks its table with the same tests of the compiler's macros as the kernels'
// code paths (simd.hpp, small_m_gemm.cpp), and this file is compiled with the same kvbench_arch
// flags as they are.
const char* kernel_isa() { return tuning.name; }

const char* kernel_tiles() {
    return tuning.small_m_typed.amx_int8_from_rows != 0 && amx_int8_usable() ? "amx-int8" : "";
}

}  // namespace kvbench
