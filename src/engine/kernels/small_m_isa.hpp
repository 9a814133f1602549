// What the small-m kernels share: the instruction sets they are built for and their row limit.
#pragma once

#include "tuning.hpp"

#include <cstddef>

namespace kvbench {

// Most rows of x one call takes (tuning.hpp); linear() covers more rows with a call per group.
inline constexpr std::size_t small_m_max_rows = tuning.small_m.max_rows;

// Instruction sets a kernel can be built for, slowest first.
enum class SmallMIsa { scalar, avx2, avx512 };

// The widest of them this build compiled: what the default overloads run.
constexpr SmallMIsa widest_small_m_isa() {
#if defined(__AVX512F__)
    return SmallMIsa::avx512;
#elif defined(__AVX2__)
    return SmallMIsa::avx2;
#else
    return SmallMIsa::scalar;
#endif
}

}  // namespace kvbench
