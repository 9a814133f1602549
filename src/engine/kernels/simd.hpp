// Vector primitives for the kernels: the exp polynomial's constants, one back-end per instruction
// set (simd_avx512.hpp, simd_avx2.hpp, simd_scalar.hpp) and the helpers written on top. Private to
// src/engine/kernels. A kernel is written once against `Simd`; the build picks the back-end.
//
// The rule for vector code in src/engine/kernels. Three idioms, each in its own place:
// 1. `Simd`, this header: the default. A kernel written once for the build's widest vectors and
//    its masks (the tiled attention kernel, vector_math.cpp, the block decoder in kv_decode.cpp).
//    New kernel code starts here; a primitive it lacks is added to every back-end.
// 2. Raw intrinsics, only inside code compiled for one instruction set and named for it:
//    - the back-ends themselves, and kv_load.hpp's converting loads, which are back-end code
//      kept apart because only the attention tiles and the block decoder use them;
//    - a tile that needs an instruction Simd has no word for, beside its portable twin
//      (attention_kernel.cpp's int8_dot_score_tile: vpmaddwd on AVX2);
//    - the exception, small_m_gemm.cpp's ScalarIsa, Avx2Isa and Avx512Isa: one build compiles
//      several of them side by side (AVX-512 builds run the ymm tiles from 3 rows of x on, and
//      tests hold every compiled path to the reference), which one back-end per build cannot
//      express; and their register budgets were measured instruction by instruction, so they
//      are not rewritten onto Simd without measuring again.
// 3. GCC vector extensions (vector_size), for portable code that must be vector code where no
//    back-end here is (SSE-only x86, NEON) and whose width is the algorithm's, not the build's
//    widest: small_m_gemm.cpp's ScalarIsa and attention_grouped.cpp's lanes kernel (8 or 4
//    floats); scripts/test-arm64.sh checks their disassembly. An intrinsic may stand in for what
//    the extensions cannot say (the lanes kernel's one-rounding fma).
// Every idiom shares this header's constants (the exp polynomial); the sizes and distances they
// were tuned to are tuning.hpp's table, whichever idiom reads them.
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
// GCC 12's AVX-512 intrinsics pass an unset vector as the unused merge source, which
// -Wuninitialized reports once they are inlined (GCC bug 105593, fixed in GCC 13).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

namespace kvbench::simd {


// Cephes' expf: e^x = 2^k · e^r with k = round(x·log2 e), r = x - k·ln2 in [-ln2/2, ln2/2],
// e^r ≈ 1 + r + r²·P(r). ln2 is split in two so that k·ln2_hi is exact (ln2_hi has 9 bits).
inline constexpr float exp_log2e = 1.44269504088896341f;
inline constexpr float exp_ln2_hi = 0.693359375f;
inline constexpr float exp_ln2_lo = -2.12194440e-4f;
inline constexpr float exp_p0 = 1.9875691500e-4f;
inline constexpr float exp_p1 = 1.3981999507e-3f;
inline constexpr float exp_p2 = 8.3334519073e-3f;
inline constexpr float exp_p3 = 4.1665795894e-2f;
inline constexpr float exp_p4 = 1.6666665459e-1f;
inline constexpr float exp_p5 = 5.0000001201e-1f;
// Below this e^x is subnormal: flushed to 0, which also maps masked (-inf) scores to 0.
inline constexpr float exp_lowest = -87.33654475f;
// Above this e^x overflows float.
inline constexpr float exp_highest = 88.3762626647949f;

inline constexpr float minus_infinity = -std::numeric_limits<float>::infinity();

// Lanes of the widest vector the kernel uses; the workspace pads rows to it.
inline constexpr std::size_t max_lanes = 16;

}  // namespace kvbench::simd

#if defined(__AVX512F__)
#include "simd_avx512.hpp"
#elif defined(__AVX2__) && defined(__FMA__)
#include "simd_avx2.hpp"
#else
#include "simd_scalar.hpp"
#endif

namespace kvbench::simd {

#if defined(__AVX512F__)
using Simd = Avx512;
#elif defined(__AVX2__) && defined(__FMA__)
using Simd = Avx2;
#else
using Simd = Scalar;
#endif

using Vec = Simd::Vec;
inline constexpr std::size_t lanes = Simd::width;
static_assert(lanes <= max_lanes);

inline std::size_t round_up(std::size_t n, std::size_t multiple) {
    return (n + multiple - 1) / multiple * multiple;
}

// Lanes of vector `index` that hold one of the first n elements.
inline Simd::Mask lanes_below(std::size_t n, std::size_t index) {
    const std::size_t start = index * lanes;
    return Simd::first(n > start ? std::min(lanes, n - start) : 0);
}

}  // namespace kvbench::simd
