// The vector words of the integer block tiles (attention_kernel.cpp's block_values_as_integers
// and q4_0_dot_score_tile): q8_0 and q4_0 codes as 16-bit pairs in 32-bit lanes (two keys' codes
// of a value column; two codes of one key in a lane of keys), their products with a pair of
// 16-bit weights or query elements added into 32-bit sums, the blocks' f16 scales gathered over
// keys, and the keys' weights rounded to 16 bits. Back-end code, one set per instruction set,
// as kv_load.hpp's loads are: AVX-512 with its byte and word instructions (BW; vpdpwssd with
// VNNI) and AVX2; KVBENCH_BLOCK_CODE_PAIRS says the build has one. Private to
// src/engine/kernels.
#pragma once

#include "simd.hpp"

#include "kvbench/engine/kv_dtype.hpp"

#include <cstddef>
#include <cstdint>
#include <limits>

#if (defined(__AVX2__) && defined(__FMA__) && !defined(__AVX512F__)) || defined(__AVX512BW__)
#define KVBENCH_BLOCK_CODE_PAIRS 1
#endif

#if defined(KVBENCH_BLOCK_CODE_PAIRS)
namespace kvbench::simd {

// A block column's 32 values of two keys take pair_vecs vectors of pairs, and their sums as
// many vectors of 32-bit lanes.
inline constexpr std::size_t pair_vecs = kv_block_values / lanes;

#if defined(__AVX512F__)
using PairVec = __m512i;

// The byte offsets of 16 rows row_bytes apart, one a lane: the indices of a gather over keys.
[[gnu::always_inline]] inline __m512i lane_row_offsets(std::size_t row_bytes) {
    return _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                              _mm512_set1_epi32(static_cast<int>(row_bytes)));
}

// The f16 scales of the q8_0 or q4_0 blocks at `block` and in the 15 rows after it (row_offsets
// apart), as f32, in the lanes `keys` keeps (0 in the others): each scale lies in the low half of
// a gathered 32-bit word.
[[gnu::always_inline]] inline __m512 gather_block_scales(const std::byte* block, __m512i row_offsets, __mmask16 keys = 0xffff) {
    return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_mask_i32gather_epi32(_mm512_setzero_si512(), keys, row_offsets, block, 1)));
}

[[gnu::always_inline]] inline PairVec broadcast_pair(std::int32_t pair) { return _mm512_set1_epi32(pair); }

// sums + the products of each lane's two 16-bit codes and two 16-bit weights.
[[gnu::always_inline]] inline PairVec add_pair_products(PairVec sums, PairVec codes, PairVec weights) {
#if defined(__AVX512VNNI__)
    return _mm512_dpwssd_epi32(sums, codes, weights);
#else
    return _mm512_add_epi32(sums, _mm512_madd_epi16(codes, weights));
#endif
}

// Two keys' codes in a block column as 16-bit pairs in each 32-bit lane: for q8_0 columns 0-7
// and 16-23 in paired[0], 8-15 and 24-31 in paired[1] (unpacking works within 128-bit lanes);
// for q4_0 0-15, then 16-31.
template <KvDtype dtype>
[[gnu::always_inline]] inline void pair_codes(const std::byte* codes0, const std::byte* codes1, PairVec (&paired)[pair_vecs]) {
    if constexpr (dtype == KvDtype::q8_0) {
        const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes0));
        const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes1));
        paired[0] = _mm512_cvtepi8_epi16(_mm256_unpacklo_epi8(a, c));
        paired[1] = _mm512_cvtepi8_epi16(_mm256_unpackhi_epi8(a, c));
    } else {
        // Code byte j holds element j in its low nibble and j + 16 in its high one.
        const __m256i low_nibbles = _mm256_set1_epi8(0x0f);
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes0));
        const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes1));
        const __m256i bytes = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_unpacklo_epi8(a, c)), _mm_unpackhi_epi8(a, c), 1);
        paired[0] = _mm512_cvtepu8_epi16(_mm256_and_si256(bytes, low_nibbles));
        paired[1] = _mm512_cvtepu8_epi16(_mm256_and_si256(_mm256_srli_epi16(bytes, 4), low_nibbles));
    }
}

// A block column's sums (pair_codes' order) plus `offset` each, as floats in column order.
template <KvDtype dtype>
[[gnu::always_inline]] inline void column_sums_in_order(const PairVec (&sums)[pair_vecs], std::int32_t offset, Vec (&out)[pair_vecs]) {
    if constexpr (dtype == KvDtype::q8_0) {
        const Vec lows = _mm512_cvtepi32_ps(sums[0]);
        const Vec highs = _mm512_cvtepi32_ps(sums[1]);
        out[0] = _mm512_permutex2var_ps(lows, _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23), highs);
        out[1] = _mm512_permutex2var_ps(lows, _mm512_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31), highs);
    } else {
        for (std::size_t h = 0; h < pair_vecs; ++h) out[h] = _mm512_cvtepi32_ps(_mm512_add_epi32(sums[h], _mm512_set1_epi32(offset)));
    }
}

// Lanes whose |weight| is above the largest finite float or unordered with it (NaN).
[[gnu::always_inline]] inline bool any_not_finite(Vec sizes) {
    return _mm512_cmp_ps_mask(sizes, Simd::set1(std::numeric_limits<float>::max()), _CMP_NLE_UQ) != 0;
}
[[gnu::always_inline]] inline Vec magnitudes(Vec v) { return _mm512_abs_ps(v); }

// Weights already in steps (|w| ≤ 32767), rounded to integers and stored as 16 bits at `to`
// (aligned to 32 bytes); returned as 32-bit lanes for their sum.
[[gnu::always_inline]] inline PairVec store_steps(Vec weights, std::int16_t* to) {
    const __m512i steps = _mm512_cvtps_epi32(weights);
    _mm256_store_si256(reinterpret_cast<__m256i*>(to), _mm512_cvtepi32_epi16(steps));
    return steps;
}
[[gnu::always_inline]] inline PairVec zero_pairs() { return _mm512_setzero_si512(); }
[[gnu::always_inline]] inline PairVec add_lanes(PairVec a, PairVec b) { return _mm512_add_epi32(a, b); }
[[gnu::always_inline]] inline std::int32_t sum_lanes(PairVec v) { return _mm512_reduce_add_epi32(v); }

// load_q4_0_codes's pieces: key i + 4j's 16 code bytes in 128-bit lane j of piece i.
[[gnu::always_inline]] inline void load_q4_0_pieces(const std::byte* codes, std::size_t row_bytes, PairVec (&piece)[4]) {
    for (std::size_t i = 0; i < 4; ++i) {
        const auto at = [&](std::size_t j) {
            return _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes + (i + 4 * j) * row_bytes));
        };
        piece[i] = _mm512_inserti32x4(_mm512_castsi128_si512(at(0)), at(1), 1);
        piece[i] = _mm512_inserti32x4(piece[i], at(2), 2);
        piece[i] = _mm512_inserti32x4(piece[i], at(3), 3);
    }
}

// Within each 128-bit lane: the 32-bit words (`half` 0: low, 1: high) of a and b interleaved,
// and the 64-bit ones.
template <int half>
[[gnu::always_inline]] inline PairVec interleave_words(PairVec a, PairVec b) {
    return half == 0 ? _mm512_unpacklo_epi32(a, b) : _mm512_unpackhi_epi32(a, b);
}
template <int half>
[[gnu::always_inline]] inline PairVec interleave_pairs_of_words(PairVec a, PairVec b) {
    return half == 0 ? _mm512_unpacklo_epi64(a, b) : _mm512_unpackhi_epi64(a, b);
}

// The nibbles at bit `shift` of both 16-bit halves of each lane, as 16-bit integers.
template <int shift>
[[gnu::always_inline]] inline PairVec nibble_words(PairVec codes) {
    if constexpr (shift != 0) codes = _mm512_srli_epi16(codes, shift);
    if constexpr (shift == 12) return codes;  // the top nibble: nothing above it
    else return _mm512_and_si512(codes, _mm512_set1_epi32(0x000f000f));
}

[[gnu::always_inline]] inline Vec pair_sums_to_floats(PairVec sums) { return _mm512_cvtepi32_ps(sums); }

#if defined(__AVX512VNNI__)
// sums + the 4 products of each lane's unsigned bytes of a and signed bytes of b.
[[gnu::always_inline]] inline PairVec add_byte_products(PairVec sums, PairVec a, PairVec b) {
    return _mm512_dpbusd_epi32(sums, a, b);
}
#endif

// The nibbles at bit `shift` (0 or 4) of every byte, as bytes.
template <int shift>
[[gnu::always_inline]] inline PairVec nibble_bytes(PairVec codes) {
    if constexpr (shift != 0) codes = _mm512_srli_epi16(codes, shift);
    return _mm512_and_si512(codes, _mm512_set1_epi8(0x0f));
}

[[gnu::always_inline]] inline PairVec times_256(PairVec v) { return _mm512_slli_epi32(v, 8); }

#else  // AVX2
using PairVec = __m256i;

// The byte offsets of 8 rows row_bytes apart, one a lane: the indices of a gather over keys.
[[gnu::always_inline]] inline __m256i lane_row_offsets(std::size_t row_bytes) {
    return _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(static_cast<int>(row_bytes)));
}

// The f16 scales of the blocks at `block` and in the 7 rows after it, as f32, in the lanes `keys`
// keeps (0 in the others): each lies in the low half of a gathered 32-bit word.
[[gnu::always_inline]] inline __m256 gather_block_scales(const std::byte* block, __m256i row_offsets, __m256i keys = _mm256_set1_epi32(-1)) {
    const __m256i words = _mm256_mask_i32gather_epi32(_mm256_setzero_si256(), reinterpret_cast<const int*>(block), row_offsets, keys, 1);
    const __m256i halves = _mm256_and_si256(words, _mm256_set1_epi32(0xffff));
    return _mm256_cvtph_ps(_mm_packus_epi32(_mm256_castsi256_si128(halves), _mm256_extracti128_si256(halves, 1)));
}

[[gnu::always_inline]] inline PairVec broadcast_pair(std::int32_t pair) { return _mm256_set1_epi32(pair); }

[[gnu::always_inline]] inline PairVec add_pair_products(PairVec sums, PairVec codes, PairVec weights) {
    return _mm256_add_epi32(sums, _mm256_madd_epi16(codes, weights));
}

// Two keys' codes in a block column as 16-bit pairs in each 32-bit lane, 8 columns a vector in
// order. The bytes are interleaved within 128 bits and widened across them.
template <KvDtype dtype>
[[gnu::always_inline]] inline void pair_codes(const std::byte* codes0, const std::byte* codes1, PairVec (&paired)[pair_vecs]) {
    if constexpr (dtype == KvDtype::q8_0) {
        for (std::size_t h = 0; h < 2; ++h) {
            const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes0 + 16 * h));
            const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes1 + 16 * h));
            paired[2 * h] = _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(a, c));
            paired[2 * h + 1] = _mm256_cvtepi8_epi16(_mm_unpackhi_epi8(a, c));
        }
    } else {
        // Code byte j holds element j in its low nibble and j + 16 in its high one; widened to
        // 16 bits, the high nibble is the word shifted right by 4.
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes0));
        const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes1));
        const __m256i first = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(a, c));
        const __m256i second = _mm256_cvtepu8_epi16(_mm_unpackhi_epi8(a, c));
        const __m256i low_nibbles = _mm256_set1_epi16(0x0f);
        paired[0] = _mm256_and_si256(first, low_nibbles);
        paired[1] = _mm256_and_si256(second, low_nibbles);
        paired[2] = _mm256_srli_epi16(first, 4);
        paired[3] = _mm256_srli_epi16(second, 4);
    }
}

template <KvDtype>
[[gnu::always_inline]] inline void column_sums_in_order(const PairVec (&sums)[pair_vecs], std::int32_t offset, Vec (&out)[pair_vecs]) {
    for (std::size_t h = 0; h < pair_vecs; ++h) out[h] = _mm256_cvtepi32_ps(_mm256_add_epi32(sums[h], _mm256_set1_epi32(offset)));
}

[[gnu::always_inline]] inline bool any_not_finite(Vec sizes) {
    return _mm256_movemask_ps(_mm256_cmp_ps(sizes, Simd::set1(std::numeric_limits<float>::max()), _CMP_NLE_UQ)) != 0;
}
[[gnu::always_inline]] inline Vec magnitudes(Vec v) { return _mm256_andnot_ps(Simd::set1(-0.0f), v); }

// (Aligned to 16 bytes.) |w| ≤ 32767, so the packing saturates nothing.
[[gnu::always_inline]] inline PairVec store_steps(Vec weights, std::int16_t* to) {
    const __m256i steps = _mm256_cvtps_epi32(weights);
    _mm_store_si128(reinterpret_cast<__m128i*>(to), _mm_packs_epi32(_mm256_castsi256_si128(steps), _mm256_extracti128_si256(steps, 1)));
    return steps;
}
[[gnu::always_inline]] inline PairVec zero_pairs() { return _mm256_setzero_si256(); }
[[gnu::always_inline]] inline PairVec add_lanes(PairVec a, PairVec b) { return _mm256_add_epi32(a, b); }
[[gnu::always_inline]] inline std::int32_t sum_lanes(PairVec v) {
    __m128i x = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    x = _mm_add_epi32(x, _mm_shuffle_epi32(x, 0x4e));
    x = _mm_add_epi32(x, _mm_shuffle_epi32(x, 0xb1));
    return _mm_cvtsi128_si32(x);
}

// load_q4_0_codes's pieces for 8 keys: keys i and i + 4 in the two 128-bit halves of piece i.
[[gnu::always_inline]] inline void load_q4_0_pieces(const std::byte* codes, std::size_t row_bytes, PairVec (&piece)[4]) {
    for (std::size_t i = 0; i < 4; ++i) {
        const auto at = [&](std::size_t j) {
            return _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes + (i + 4 * j) * row_bytes));
        };
        piece[i] = _mm256_inserti128_si256(_mm256_castsi128_si256(at(0)), at(1), 1);
    }
}

template <int half>
[[gnu::always_inline]] inline PairVec interleave_words(PairVec a, PairVec b) {
    return half == 0 ? _mm256_unpacklo_epi32(a, b) : _mm256_unpackhi_epi32(a, b);
}
template <int half>
[[gnu::always_inline]] inline PairVec interleave_pairs_of_words(PairVec a, PairVec b) {
    return half == 0 ? _mm256_unpacklo_epi64(a, b) : _mm256_unpackhi_epi64(a, b);
}

template <int shift>
[[gnu::always_inline]] inline PairVec nibble_words(PairVec codes) {
    if constexpr (shift != 0) codes = _mm256_srli_epi16(codes, shift);
    if constexpr (shift == 12) return codes;  // the top nibble: nothing above it
    else return _mm256_and_si256(codes, _mm256_set1_epi32(0x000f000f));
}

[[gnu::always_inline]] inline Vec pair_sums_to_floats(PairVec sums) { return _mm256_cvtepi32_ps(sums); }
#endif

// A block's 16 code bytes of a vector's keys (row_bytes apart, from `codes`), as 4-byte gathers
// at codes + 4g would bring them: lane k of out[g] holds key k's bytes 4g to 4g+3. Loaded as
// 16-byte pieces, key i + 4j in 128-bit lane j of piece i, and transposed as 4x4 words within
// each 128-bit lane, so out[g]'s lane 4j + i is key 4j + i's. On Zen 5 a 16-lane vpgatherdd
// costs 3.6 ns, and this 2.7 ns for all four
// (bench/journal/2026-12-06-q4-0-codes-without-gathers.md).
[[gnu::always_inline]] inline void load_q4_0_codes(const std::byte* codes, std::size_t row_bytes, PairVec (&out)[4]) {
    PairVec piece[4];
    load_q4_0_pieces(codes, row_bytes, piece);
    const PairVec low01 = interleave_words<0>(piece[0], piece[1]);
    const PairVec high01 = interleave_words<1>(piece[0], piece[1]);
    const PairVec low23 = interleave_words<0>(piece[2], piece[3]);
    const PairVec high23 = interleave_words<1>(piece[2], piece[3]);
    out[0] = interleave_pairs_of_words<0>(low01, low23);
    out[1] = interleave_pairs_of_words<1>(low01, low23);
    out[2] = interleave_pairs_of_words<0>(high01, high23);
    out[3] = interleave_pairs_of_words<1>(high01, high23);
}

}  // namespace kvbench::simd
#endif
