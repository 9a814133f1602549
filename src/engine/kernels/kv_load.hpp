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
// probability instead of to every element. Gives decode_kv_vector's bits for f16, bf16 and the
// 8-bit floats (gathered from their 256-entry tables: exact by construction, NaN included).
// Requires: not a block type (load_block_codes reads those).
template <KvDtype dtype>
inline Vec load_kv(const std::byte* row, std::size_t i) {
    static_assert(kv_dtype_info(dtype).block_values == 0);
    if constexpr (dtype == KvDtype::f32) {
        return Simd::load(reinterpret_cast<const float*>(row) + i);
    } else if constexpr (dtype == KvDtype::e4m3 || dtype == KvDtype::e5m2) {
        const float* table = dtype == KvDtype::e4m3 ? e4m3_values.data() : e5m2_values.data();
#if defined(__AVX512F__)
        return _mm512_i32gather_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + i))),
                                   table, 4);
#elif defined(__AVX2__) && defined(__FMA__)
        return _mm256_i32gather_ps(table, _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + i))),
                                   4);
#else
        alignas(64) float lanes_out[lanes];
        for (std::size_t lane = 0; lane < lanes; ++lane) lanes_out[lane] = table[static_cast<std::uint8_t>(row[i + lane])];
        return Simd::load(lanes_out);
#endif
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

// Elements [i, i + lanes) of one q8_0 or q4_0 block (kv_convert.hpp's layout) at `block`,
// unscaled: the integers q, or c - 8, as f32; times the block's scale they are decode_kv_vector's
// bits. Requires: i a multiple of lanes, i + lanes <= 32.
template <KvDtype dtype>
inline Vec load_block_codes(const std::byte* block, std::size_t i) {
    static_assert(dtype == KvDtype::q8_0 || dtype == KvDtype::q4_0);
    const std::byte* codes = block + 2;  // past the f16 scale
#if defined(__AVX512F__)
    if constexpr (dtype == KvDtype::q8_0) {
        return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(codes + i))));
    } else {
        // 16 lanes: the low nibbles of the 16 bytes (elements 0-15) or their high ones (16-31).
        __m512i wide = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(codes)));
        if (i >= 16) wide = _mm512_srli_epi32(wide, 4);
        wide = _mm512_sub_epi32(_mm512_and_si512(wide, _mm512_set1_epi32(0xf)), _mm512_set1_epi32(8));
        return _mm512_cvtepi32_ps(wide);
    }
#elif defined(__AVX2__) && defined(__FMA__)
    if constexpr (dtype == KvDtype::q8_0) {
        return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(codes + i))));
    } else {
        // 8 lanes: bytes i % 16 on, low nibbles below element 16, high ones from it.
        __m256i wide = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(codes + i % 16)));
        if (i >= 16) wide = _mm256_srli_epi32(wide, 4);
        wide = _mm256_sub_epi32(_mm256_and_si256(wide, _mm256_set1_epi32(0xf)), _mm256_set1_epi32(8));
        return _mm256_cvtepi32_ps(wide);
    }
#else
    alignas(64) float lanes_out[lanes];
    for (std::size_t lane = 0; lane < lanes; ++lane) {
        const std::size_t element = i + lane;
        if constexpr (dtype == KvDtype::q8_0) {
            lanes_out[lane] = static_cast<float>(static_cast<std::int8_t>(codes[element]));
        } else {
            const auto byte = static_cast<unsigned>(codes[element % 16]);
            lanes_out[lane] = static_cast<float>(static_cast<int>(element < 16 ? byte & 0xfu : byte >> 4) - 8);
        }
    }
    return Simd::load(lanes_out);
#endif
}

}  // namespace kvbench::simd
