// load_kv<dtype>(): one vector of cached elements, converted to f32 in registers as it is loaded,
// for the attention kernel's tiles. Private to src/engine/kernels; written against simd.hpp's back-end.
#pragma once

#include "kvbench/engine/kv_convert.hpp"
#include "simd.hpp"

#include <cstddef>
#include <cstdint>

namespace kvbench::simd {

// Elements [i, i + lanes) of a row of `dtype` elements at `row`, as f32. int8 comes back
// unscaled (its integer values): the kernel applies a vector's scale to its score or its
// probability instead of to every element. Gives decode_kv_vector's bits for f16 and bf16.
template <KvDtype dtype>
inline Vec load_kv(const std::byte* row, std::size_t i) {
    if constexpr (dtype == KvDtype::f32) {
        return Simd::load(reinterpret_cast<const float*>(row) + i);
    } else {
#if defined(__AVX512F__)
        if constexpr (dtype == KvDtype::f16) {
            return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * i)));
        } else if constexpr (dtype == KvDtype::bf16) {
            const __m512i wide = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * i)));
            return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
        } else {
            return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + i))));
        }
#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
        if constexpr (dtype == KvDtype::f16) {
            return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * i)));
        } else if constexpr (dtype == KvDtype::bf16) {
            const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * i)));
            return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
        } else {
            return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + i))));
        }
#else
        // One lane per vector on the portable back-end (and AVX2 without F16C decodes through
        // this scalar definition lane by lane).
        alignas(64) float lanes_out[lanes];
        for (std::size_t lane = 0; lane < lanes; ++lane) {
            if constexpr (dtype == KvDtype::f16) {
                std::uint16_t bits;
                __builtin_memcpy(&bits, row + 2 * (i + lane), 2);
                lanes_out[lane] = decode_f16(bits);
            } else if constexpr (dtype == KvDtype::bf16) {
                std::uint16_t bits;
                __builtin_memcpy(&bits, row + 2 * (i + lane), 2);
                lanes_out[lane] = decode_bf16(bits);
            } else {
                lanes_out[lane] = static_cast<float>(static_cast<std::int8_t>(row[i + lane]));
            }
        }
        return Simd::load(lanes_out);
#endif
    }
}

}  // namespace kvbench::simd
