// on_intel_cpu(): the one vendor question the kernels' host choices ask (tuning.hpp's *_on_intel
// fields). Private to src/engine/kernels.
#pragma once

namespace kvbench {

// Whether this process runs on an Intel CPU; false off x86. Some choices were measured faster on
// an Intel Xeon and slower on an AMD Zen 5 with the same instruction set and L1, and no cache size
// or ISA the kernels can read told the two apart (bench/journal/2026-12-05-v3-passes-prefetch-by-vendor.md).
inline bool on_intel_cpu() {
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_cpu_is("intel");
#else
    return false;
#endif
}

}  // namespace kvbench
