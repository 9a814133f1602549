// The AVX2+FMA back-end of the attention kernel: 8-lane vector primitives, exp and transposes.
// Private to src/engine/kernels; included through simd.hpp only, which picks one back-end per build.
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>

namespace kvbench::simd {

// 8 lanes in 16 ymm registers; the tiles sized for them are tuning.hpp's avx2+fma row.
struct Avx2 {
    using Vec = __m256;
    using Mask = __m256i;
    static constexpr std::size_t width = 8;
    static constexpr std::size_t registers = 16;

    static Vec zero() { return _mm256_setzero_ps(); }
    static Vec set1(float x) { return _mm256_set1_ps(x); }
    static Vec load(const float* p) { return _mm256_loadu_ps(p); }
    static Vec load(const float* p, Mask m) { return _mm256_maskload_ps(p, m); }
    static void store(float* p, Vec v) { _mm256_storeu_ps(p, v); }
    static void store(float* p, Vec v, Mask m) { _mm256_maskstore_ps(p, m, v); }
    static Vec add(Vec a, Vec b) { return _mm256_add_ps(a, b); }
    static Vec sub(Vec a, Vec b) { return _mm256_sub_ps(a, b); }
    static Vec mul(Vec a, Vec b) { return _mm256_mul_ps(a, b); }
    static Vec max(Vec a, Vec b) { return _mm256_max_ps(a, b); }
    static Vec fma(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
    static Mask first(std::size_t n) {
        return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                                  _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    }
    static Vec select(Mask m, Vec a, Vec otherwise) {
        return _mm256_blendv_ps(otherwise, a, _mm256_castsi256_ps(m));
    }
    static float reduce_max(Vec v) {
        __m128 x = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        x = _mm_max_ps(x, _mm_movehl_ps(x, x));
        x = _mm_max_ss(x, _mm_movehdup_ps(x));
        return _mm_cvtss_f32(x);
    }
    static float reduce_add(Vec v) {
        __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        x = _mm_add_ps(x, _mm_movehl_ps(x, x));
        x = _mm_add_ss(x, _mm_movehdup_ps(x));
        return _mm_cvtss_f32(x);
    }
    static void store_lanes(float* dst, Vec v, std::size_t first, std::size_t count) {
        const __m256i index = _mm256_add_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                               _mm256_set1_epi32(static_cast<int>(first)));
        store(dst, _mm256_permutevar8x32_ps(v, index), Avx2::first(count));
    }
    [[gnu::always_inline]] static Vec reduce_lanes(Vec (&v)[width]) {
        Vec pairs[4], quads[2];
        for (std::size_t i = 0; i < 4; ++i) {
            pairs[i] = add(_mm256_unpacklo_ps(v[2 * i], v[2 * i + 1]), _mm256_unpackhi_ps(v[2 * i], v[2 * i + 1]));
        }
        for (std::size_t i = 0; i < 2; ++i) {
            quads[i] = add(_mm256_shuffle_ps(pairs[2 * i], pairs[2 * i + 1], 0x44),
                           _mm256_shuffle_ps(pairs[2 * i], pairs[2 * i + 1], 0xEE));
        }
        return add(_mm256_permute2f128_ps(quads[0], quads[1], 0x20),
                   _mm256_permute2f128_ps(quads[0], quads[1], 0x31));
    }

    // Quarter j of v[i] (lanes [2j, 2j + 2)) -> quarter i of v[j].
    static void transpose_quarters(Vec (&v)[4]) {
        const __m256d t0 = _mm256_unpacklo_pd(_mm256_castps_pd(v[0]), _mm256_castps_pd(v[1]));
        const __m256d t1 = _mm256_unpackhi_pd(_mm256_castps_pd(v[0]), _mm256_castps_pd(v[1]));
        const __m256d t2 = _mm256_unpacklo_pd(_mm256_castps_pd(v[2]), _mm256_castps_pd(v[3]));
        const __m256d t3 = _mm256_unpackhi_pd(_mm256_castps_pd(v[2]), _mm256_castps_pd(v[3]));
        v[0] = _mm256_castpd_ps(_mm256_permute2f128_pd(t0, t2, 0x20));
        v[1] = _mm256_castpd_ps(_mm256_permute2f128_pd(t1, t3, 0x20));
        v[2] = _mm256_castpd_ps(_mm256_permute2f128_pd(t0, t2, 0x31));
        v[3] = _mm256_castpd_ps(_mm256_permute2f128_pd(t1, t3, 0x31));
    }

    static Vec exp(Vec x) {
        const Vec clamped = _mm256_min_ps(set1(exp_highest), _mm256_max_ps(set1(exp_lowest), x));
        const Vec k = _mm256_round_ps(mul(clamped, set1(exp_log2e)),
                                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        Vec r = _mm256_fnmadd_ps(k, set1(exp_ln2_hi), clamped);
        r = _mm256_fnmadd_ps(k, set1(exp_ln2_lo), r);
        Vec p = fma(set1(exp_p0), r, set1(exp_p1));
        p = fma(p, r, set1(exp_p2));
        p = fma(p, r, set1(exp_p3));
        p = fma(p, r, set1(exp_p4));
        p = fma(p, r, set1(exp_p5));
        p = add(fma(p, mul(r, r), r), set1(1.0f));
        // k is in [-126, 127] after the clamp, so 2^k is a normal float built from its exponent bits.
        const __m256i biased = _mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127));
        const Vec scaled = mul(p, _mm256_castsi256_ps(_mm256_slli_epi32(biased, 23)));
        return _mm256_and_ps(scaled, _mm256_cmp_ps(x, set1(exp_lowest), _CMP_NLT_UQ));
    }

    static void transpose(Vec (&rows)[width]) {
        Vec t[width];
        for (std::size_t i = 0; i < width; i += 2) {
            t[i] = _mm256_unpacklo_ps(rows[i], rows[i + 1]);
            t[i + 1] = _mm256_unpackhi_ps(rows[i], rows[i + 1]);
        }
        for (std::size_t i = 0; i < width; i += 4) {
            rows[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
            rows[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
            rows[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
            rows[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
        }
        for (std::size_t j = 0; j < 4; ++j) {
            t[j] = _mm256_permute2f128_ps(rows[j], rows[j + 4], 0x20);
            t[j + 4] = _mm256_permute2f128_ps(rows[j], rows[j + 4], 0x31);
        }
        std::copy(std::begin(t), std::end(t), std::begin(rows));
    }
};

}  // namespace kvbench::simd
