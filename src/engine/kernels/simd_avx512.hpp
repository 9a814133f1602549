// The AVX-512 back-end of the attention kernel: 16-lane vector primitives, exp and transposes.
// Private to src/engine/kernels; included through simd.hpp only, which picks one back-end per build.
#pragma once

#include <cstddef>

namespace kvbench::simd {

// 16 lanes in 32 zmm registers; the tiles sized for them are tuning.hpp's avx512 row.
struct Avx512 {
    using Vec = __m512;
    using Mask = __mmask16;
    static constexpr std::size_t width = 16;
    static constexpr std::size_t registers = 32;

    static Vec zero() { return _mm512_setzero_ps(); }
    static Vec set1(float x) { return _mm512_set1_ps(x); }
    static Vec load(const float* p) { return _mm512_loadu_ps(p); }
    static Vec load(const float* p, Mask m) { return _mm512_maskz_loadu_ps(m, p); }
    static void store(float* p, Vec v) { _mm512_storeu_ps(p, v); }
    static void store(float* p, Vec v, Mask m) { _mm512_mask_storeu_ps(p, m, v); }
    static Vec add(Vec a, Vec b) { return _mm512_add_ps(a, b); }
    static Vec sub(Vec a, Vec b) { return _mm512_sub_ps(a, b); }
    static Vec mul(Vec a, Vec b) { return _mm512_mul_ps(a, b); }
    static Vec max(Vec a, Vec b) { return _mm512_max_ps(a, b); }
    static Vec fma(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
    // Lanes [0, n), n <= width.
    static Mask first(std::size_t n) { return static_cast<Mask>((1u << n) - 1u); }
    static Vec select(Mask m, Vec a, Vec otherwise) { return _mm512_mask_mov_ps(otherwise, m, a); }
    static float reduce_max(Vec v) { return _mm512_reduce_max_ps(v); }
    static float reduce_add(Vec v) { return _mm512_reduce_add_ps(v); }
    // dst[0, count) = lanes [first, first + count) of v.
    static void store_lanes(float* dst, Vec v, std::size_t first, std::size_t count) {
        const __m512i index = _mm512_add_epi32(
            _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
            _mm512_set1_epi32(static_cast<int>(first)));
        store(dst, _mm512_permutexvar_ps(index, v), Avx512::first(count));
    }

    // Lane j of the result = Σ of the lanes of v[j]: pairs, then quads, then 128-bit lanes,
    // each stage adding two shuffles of a pair, 30 shuffles in all.
    [[gnu::always_inline]] static Vec reduce_lanes(Vec (&v)[width]) {
        Vec pairs[8], quads[4], halves[2];
        for (std::size_t i = 0; i < 8; ++i) {
            pairs[i] = add(_mm512_unpacklo_ps(v[2 * i], v[2 * i + 1]), _mm512_unpackhi_ps(v[2 * i], v[2 * i + 1]));
        }
        for (std::size_t i = 0; i < 4; ++i) {
            quads[i] = add(_mm512_shuffle_ps(pairs[2 * i], pairs[2 * i + 1], 0x44),
                           _mm512_shuffle_ps(pairs[2 * i], pairs[2 * i + 1], 0xEE));
        }
        for (std::size_t i = 0; i < 2; ++i) {
            halves[i] = add(_mm512_shuffle_f32x4(quads[2 * i], quads[2 * i + 1], 0x88),
                            _mm512_shuffle_f32x4(quads[2 * i], quads[2 * i + 1], 0xDD));
        }
        return add(_mm512_shuffle_f32x4(halves[0], halves[1], 0x88),
                   _mm512_shuffle_f32x4(halves[0], halves[1], 0xDD));
    }

    // Quarter j of v[i] (lanes [4j, 4j + 4)) -> quarter i of v[j].
    static void transpose_quarters(Vec (&v)[4]) {
        const Vec a = _mm512_shuffle_f32x4(v[0], v[1], 0x44);
        const Vec b = _mm512_shuffle_f32x4(v[0], v[1], 0xEE);
        const Vec c = _mm512_shuffle_f32x4(v[2], v[3], 0x44);
        const Vec d = _mm512_shuffle_f32x4(v[2], v[3], 0xEE);
        v[0] = _mm512_shuffle_f32x4(a, c, 0x88);
        v[1] = _mm512_shuffle_f32x4(a, c, 0xDD);
        v[2] = _mm512_shuffle_f32x4(b, d, 0x88);
        v[3] = _mm512_shuffle_f32x4(b, d, 0xDD);
    }

    static Vec exp(Vec x) {
        // max/min take x second so a NaN passes through.
        const Vec clamped = _mm512_min_ps(set1(exp_highest), _mm512_max_ps(set1(exp_lowest), x));
        const Vec k = _mm512_roundscale_ps(mul(clamped, set1(exp_log2e)),
                                           _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        Vec r = _mm512_fnmadd_ps(k, set1(exp_ln2_hi), clamped);
        r = _mm512_fnmadd_ps(k, set1(exp_ln2_lo), r);
        Vec p = fma(set1(exp_p0), r, set1(exp_p1));
        p = fma(p, r, set1(exp_p2));
        p = fma(p, r, set1(exp_p3));
        p = fma(p, r, set1(exp_p4));
        p = fma(p, r, set1(exp_p5));
        p = add(fma(p, mul(r, r), r), set1(1.0f));
        const Mask kept = _mm512_cmp_ps_mask(x, set1(exp_lowest), _CMP_NLT_UQ);
        return _mm512_maskz_mov_ps(kept, _mm512_scalef_ps(p, k));
    }

    // rows[i][j] -> rows[j][i]: unpack pairs, then 64-bit pairs, then 128-bit lanes twice.
    static void transpose(Vec (&rows)[width]) {
        Vec t[width];
        for (std::size_t i = 0; i < width; i += 2) {
            t[i] = _mm512_unpacklo_ps(rows[i], rows[i + 1]);
            t[i + 1] = _mm512_unpackhi_ps(rows[i], rows[i + 1]);
        }
        for (std::size_t i = 0; i < width; i += 4) {
            rows[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
            rows[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
            rows[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
            rows[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
        }
        for (std::size_t i = 0; i < width; i += 8) {
            for (std::size_t j = 0; j < 4; ++j) {
                t[i + j] = _mm512_shuffle_f32x4(rows[i + j], rows[i + j + 4], 0x88);
                t[i + j + 4] = _mm512_shuffle_f32x4(rows[i + j], rows[i + j + 4], 0xDD);
            }
        }
        for (std::size_t j = 0; j < 8; ++j) {
            rows[j] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0x88);
            rows[j + 8] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0xDD);
        }
    }
};

}  // namespace kvbench::simd
