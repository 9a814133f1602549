// keep_in_register(): holds a loaded vector in a register across the FMAs that use it.
// Private to src/engine/kernels (small_m_gemm.cpp, attention_kernel.cpp).
#pragma once

namespace kvbench {

// Claims to change v, so the compiler must hold it in a register. Without it GCC folds the load
// of a vector into each FMA that uses it, and those repeated loads, not the FMAs, bound a tile
// (bench/journal/2026-11-30-small-m-projection-choices.md). Builds without AVX2 have no vector
// register to name here; the scalar back-end has nothing to hold.
template <class Vector>
[[gnu::always_inline]] inline void keep_in_register([[maybe_unused]] Vector& v) {
#if defined(__AVX2__) || defined(__AVX512F__)
    asm("" : "+v"(v));
#endif
}

}  // namespace kvbench
