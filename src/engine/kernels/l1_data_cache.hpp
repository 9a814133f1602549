// l1_data_cache_bytes(): the L1 data cache's size, for the kernels whose blocking or prefetching
// depends on it. Private to src/engine/kernels (small_m_gemm.cpp, prefetch_plan.hpp).
#pragma once

#include <unistd.h>

#include <cstddef>

namespace kvbench {

// The kernels' choices were measured with L1s of 32 KiB (Zen 2 to 4) and 48 KiB (Zen 5,
// Intel since Ice Lake); this is the smallest L1 the second kind of choice is made for.
inline constexpr std::size_t large_l1_bytes = 48 * 1024;

// As CPUID reports it through glibc; 0 where it cannot be read. Read once.
inline std::size_t l1_data_cache_bytes() {
    static const std::size_t bytes = [] {
        const long l1d = sysconf(_SC_LEVEL1_DCACHE_SIZE);
        return l1d > 0 ? static_cast<std::size_t>(l1d) : std::size_t{0};
    }();
    return bytes;
}

}  // namespace kvbench
