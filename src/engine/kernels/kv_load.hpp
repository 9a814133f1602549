// load_kv<dtype>(): one vector of cached elements, converted to f32 in registers as it is loaded,
// for the attention kernel's tiles, and fp8_needs_fix(), which tells the tiles whether a block
// of 8-bit floats may be converted without its NaN fix. Private to src/engine/kernels; written
// against simd.hpp's back-end.
#pragma once

#include "kvbench/engine/kv_convert.hpp"
#include "simd.hpp"

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace kvbench::simd {

// An 8-bit float read from bytes the caller has scanned and found free of the patterns its
// conversion fixes up (fp8_needs_fix): e4m3's S.1111.111, a NaN, and e5m2's S.11111.xx, its
// NaNs (and, more than needed, its infinities). Converted without the fix, which was a third of
// an e4m3 vector's instructions and of an e5m2 vector's
// (bench/journal/2026-12-05-e4m3-nan-fix-once-per-block.md). Tags for the tiles' dtype
// parameter only: no cache stores them, and as_stored() names the type they read.
inline constexpr KvDtype e4m3_finite = static_cast<KvDtype>(0x100);
inline constexpr KvDtype e5m2_finite = static_cast<KvDtype>(0x101);
constexpr KvDtype as_stored(KvDtype tag) {
    return tag == e4m3_finite ? KvDtype::e4m3 : tag == e5m2_finite ? KvDtype::e5m2 : tag;
}
// q8_0 and q4_0 (a tag's stored type): elements in blocks with a scale each (kv_dtype.hpp).
constexpr bool is_block_type(KvDtype tag) { return kv_dtype_info(as_stored(tag)).block_values != 0; }
constexpr KvDtype without_fix(KvDtype dtype) {
    return dtype == KvDtype::e4m3 ? e4m3_finite : dtype == KvDtype::e5m2 ? e5m2_finite : dtype;
}

// Whether n_rows rows of `width` bytes, row_bytes apart, hold a byte b with all of `bits` set:
// ~b & bits is 0 for it. The minimum of those is kept over whole n-byte vectors, two
// instructions a vector. Requires: width a multiple of n.
// (GCC ignores vector_size with a dependent size, hence one specialisation per width.)
template <std::size_t n>
struct ByteVector;
template <>
struct ByteVector<16> {
    typedef std::uint8_t Aligned __attribute__((vector_size(16)));
    typedef std::uint8_t Unaligned __attribute__((vector_size(16), aligned(1), may_alias));
};
template <>
struct ByteVector<32> {
    typedef std::uint8_t Aligned __attribute__((vector_size(32)));
    typedef std::uint8_t Unaligned __attribute__((vector_size(32), aligned(1), may_alias));
};
template <>
struct ByteVector<64> {
    typedef std::uint8_t Aligned __attribute__((vector_size(64)));
    typedef std::uint8_t Unaligned __attribute__((vector_size(64), aligned(1), may_alias));
};

template <std::size_t n, std::uint8_t bits>
inline bool holds_bits_by(const std::byte* rows, std::size_t n_rows, std::size_t row_bytes, std::size_t width) {
    using Bytes = typename ByteVector<n>::Aligned;
    using UnalignedBytes = typename ByteVector<n>::Unaligned;
    Bytes least = {};
    least |= bits;
    const auto fold = [&](const std::byte* p) {
        const Bytes missing = ~*reinterpret_cast<const UnalignedBytes*>(p) & bits;
        least = missing < least ? missing : least;
    };
    if (width == n) {
        for (std::size_t r = 0; r < n_rows; ++r) fold(rows + r * row_bytes);  // one vector a row: no inner loop
    } else {
        for (std::size_t r = 0; r < n_rows; ++r) {
            for (std::size_t i = 0; i < width; i += n) fold(rows + r * row_bytes + i);
        }
    }
    // A zero byte, tested eight at a time: byte by byte, the test took as long as the scan.
    std::uint64_t words[n / 8];
    __builtin_memcpy(words, &least, n);
    std::uint64_t zero_byte = 0;
    for (const std::uint64_t word : words) zero_byte |= (word - 0x0101010101010101u) & ~word & 0x8080808080808080u;
    return zero_byte != 0;
}

// The widest byte vector the build's registers hold: wider, GCC 12 keeps the vector in memory
// and stores and reloads it every step, which on the x86-64-v3 build made the scan cost more
// than the tiles (bench/journal/2026-12-05-fp8-scan-in-registers-on-avx2.md).
#if defined(__AVX512BW__)
inline constexpr std::size_t scan_vector_bytes = 64;
#elif defined(__AVX2__)
inline constexpr std::size_t scan_vector_bytes = 32;
#else
inline constexpr std::size_t scan_vector_bytes = 16;
#endif

// Any width: the portable tiles take rows of a multiple of 4 bytes (dh 20, say).
template <std::uint8_t bits>
inline bool holds_bits(const std::byte* rows, std::size_t n_rows, std::size_t row_bytes, std::size_t width) {
    if (width % scan_vector_bytes == 0) return holds_bits_by<scan_vector_bytes, bits>(rows, n_rows, row_bytes, width);
    if (width % 16 == 0) return holds_bits_by<16, bits>(rows, n_rows, row_bytes, width);
    for (std::size_t r = 0; r < n_rows; ++r) {
        for (std::size_t i = 0; i < width; ++i) {
            if ((static_cast<unsigned>(rows[r * row_bytes + i]) & bits) == bits) return true;
        }
    }
    return false;
}

// e4m3 through binary16 comes out 2^8 smaller (below). Tiles that multiply e4m3 keys by a query
// and e4m3 values by probabilities take it so and multiply the query and the output by this
// instead: powers of two, so the products and sums are the same numbers, one multiply fewer in
// each of a vector's five or six instructions.
inline constexpr float e4m3_unit = 256.0f;

// Whether rows of e4m3 or e5m2 bytes hold a pattern their conversion fixes up (above).
inline bool fp8_needs_fix(KvDtype dtype, const std::byte* rows, std::size_t n_rows, std::size_t row_bytes,
                          std::size_t width) {
    return dtype == KvDtype::e4m3 ? holds_bits<fp8_fix_bits(KvDtype::e4m3)>(rows, n_rows, row_bytes, width)
                                  : holds_bits<fp8_fix_bits(KvDtype::e5m2)>(rows, n_rows, row_bytes, width);
}

// fp8 as f32 through binary16 (F16C's vcvtph2ps), exact: e5m2 is binary16's top byte, so the
// byte shifted up is its binary16; e4m3's exponent and mantissa shifted into binary16's
// (bits 13-7, the sign to bit 15) make a binary16 2^8 smaller (the bias 15 against 7), its
// subnormals included, and one multiply by 2^8 rescales it. The NaNs then take the tables'
// bits (kv_convert.hpp: a quiet NaN with the byte's sign and no payload): e5m2's NaNs come out
// of the conversion with their payload, and e4m3's S.1111.111 is 480 before the fix. Replaces
// the tables' gathers, which set the pace
// (bench/journal/2026-12-04-format-tiles.md). e4m3_rescaled false leaves e4m3 2^8 smaller, for
// tiles that fold the 2^8 into the query and the output instead (e4m3_unit).
#if defined(__AVX512F__)
template <KvDtype dtype, bool e4m3_rescaled = true>
inline Vec load_fp8(const std::byte* bytes) {
    const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes));
    const __m512i sign_and_quiet_nan = _mm512_set1_epi32(static_cast<int>(0xffc00000u));
    if constexpr (as_stored(dtype) == KvDtype::e5m2) {
        // Each byte shuffled into the top of its 16 bits, zeros below: one instruction where a
        // widening and a shift were two. The 16 bytes are in both halves; the first half takes
        // bytes 0-7, the second 8-15.
        const __m256i both = _mm256_broadcastsi128_si256(packed);
        const __m256i to_top = _mm256_setr_epi8(-1, 0, -1, 1, -1, 2, -1, 3, -1, 4, -1, 5, -1, 6, -1, 7,  //
                                                -1, 8, -1, 9, -1, 10, -1, 11, -1, 12, -1, 13, -1, 14, -1, 15);
        const __m512 x = _mm512_cvtph_ps(_mm256_shuffle_epi8(both, to_top));
        if constexpr (dtype == e5m2_finite) return x;
        // A NaN keeps its sign, exponent and quiet bit and drops its payload.
        const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
        return _mm512_castsi512_ps(_mm512_mask_and_epi32(_mm512_castps_si512(x), nan, _mm512_castps_si512(x),
                                                          sign_and_quiet_nan));
    } else {
        // Sign-extended, the sign fills bits 15-7; shifted by 7 it is bits 15 and 14, and bit 14
        // (binary16's top exponent bit, always 0 here) is cleared.
        const __m256i half = _mm256_and_si256(_mm256_slli_epi16(_mm256_cvtepi8_epi16(packed), 7),
                                              _mm256_set1_epi16(static_cast<short>(0xbfff)));
        const __m512 x = e4m3_rescaled ? _mm512_mul_ps(_mm512_cvtph_ps(half), _mm512_set1_ps(e4m3_unit))
                                       : _mm512_cvtph_ps(half);
        if constexpr (dtype == e4m3_finite) return x;
        // ±480 is S.1111.111 (the largest finite e4m3 is 448): made the signed quiet NaN.
        const __mmask16 nan = _mm512_cmp_ps_mask(_mm512_abs_ps(x), _mm512_set1_ps(e4m3_rescaled ? 480.0f : 480.0f / e4m3_unit),
                                                 _CMP_EQ_OQ);
        return _mm512_castsi512_ps(_mm512_mask_ternarylogic_epi32(_mm512_castps_si512(x), nan, sign_and_quiet_nan,
                                                                  _mm512_set1_epi32(0x7fc00000), 0xea));
    }
}
#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
template <KvDtype dtype, bool e4m3_rescaled = true>
inline Vec load_fp8(const std::byte* bytes) {
    const __m128i packed = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(bytes));
    const __m256 sign_and_quiet_nan = _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(0xffc00000u)));
    if constexpr (as_stored(dtype) == KvDtype::e5m2) {
        // Each byte interleaved with a zero below it: its binary16, in one instruction.
        const __m256 x = _mm256_cvtph_ps(_mm_unpacklo_epi8(_mm_setzero_si128(), packed));
        if constexpr (dtype == e5m2_finite) return x;
        // A NaN keeps its sign, exponent and quiet bit and drops its payload; others all their bits.
        const __m256 keep = _mm256_or_ps(_mm256_cmp_ps(x, x, _CMP_ORD_Q), sign_and_quiet_nan);
        return _mm256_and_ps(x, keep);
    } else {
        const __m128i half = _mm_and_si128(_mm_slli_epi16(_mm_cvtepi8_epi16(packed), 7),
                                           _mm_set1_epi16(static_cast<short>(0xbfff)));
        const __m256 x = e4m3_rescaled ? _mm256_mul_ps(_mm256_cvtph_ps(half), _mm256_set1_ps(e4m3_unit))
                                       : _mm256_cvtph_ps(half);
        if constexpr (dtype == e4m3_finite) return x;
        const __m256 sign = _mm256_set1_ps(-0.0f);
        const __m256 nan = _mm256_cmp_ps(_mm256_andnot_ps(sign, x), _mm256_set1_ps(e4m3_rescaled ? 480.0f : 480.0f / e4m3_unit),
                                         _CMP_EQ_OQ);
        const __m256 signed_nan = _mm256_or_ps(_mm256_and_ps(x, sign), _mm256_andnot_ps(sign, sign_and_quiet_nan));
        return _mm256_blendv_ps(x, signed_nan, nan);
    }
}
#endif

// A q8_0 or q4_0 block's f16 scale in every lane.
inline Vec load_block_scale(const std::byte* block) {
    std::uint16_t bits;
    __builtin_memcpy(&bits, block, 2);
#if defined(__AVX512F__)
    return _mm512_cvtph_ps(_mm256_set1_epi16(static_cast<short>(bits)));
#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
    return _mm256_cvtph_ps(_mm_set1_epi16(static_cast<short>(bits)));
#else
    return Simd::set1(decode_f16(bits));
#endif
}

template <KvDtype dtype>
inline Vec load_block_codes(const std::byte* block, std::size_t i);

#if defined(__AVX512F__)
// c - 8 as f32 for the 4-bit code c in the low 4 bits of each lane (the bits above are
// ignored): one permute from a table of the 16 values, where masking, subtracting 8 and
// converting were three instructions, and with one query row the conversions set the block
// types' pace (bench/journal/2026-12-05-q4-0-codes-through-a-permute.md).
inline __m512 q4_0_code_values(__m512i nibbles) {
    const __m512 values = _mm512_setr_ps(-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7);
    return _mm512_permutexvar_ps(nibbles, values);
}
#endif

// Elements [i, i + lanes) of a row of `dtype` elements at `row`, as f32. int8 comes back
// unscaled (its integer values): the kernel applies a vector's scale to its score or its
// probability instead of to every element. Gives decode_kv_vector's bits for the other types:
// the conversions are exact, NaN included, and a q8_0 or q4_0 element is its code times its
// block's scale, one multiply as in the scalar definition; e4m3 1 / e4m3_unit of it where
// e4m3_rescaled is false. Requires: i a multiple of lanes (so a vector lies inside one block of
// a block type).
template <KvDtype dtype, bool e4m3_rescaled = true>
inline Vec load_kv(const std::byte* row, std::size_t i) {
    if constexpr (dtype == KvDtype::f32) {
        return Simd::load(reinterpret_cast<const float*>(row) + i);
    } else if constexpr (is_block_type(dtype)) {
        static_assert(kv_block_values % lanes == 0);
        const std::byte* block = row + i / kv_block_values * kv_row_bytes(dtype, kv_block_values);
        return Simd::mul(load_block_codes<dtype>(block, i % kv_block_values), load_block_scale(block));
    } else if constexpr (as_stored(dtype) == KvDtype::e4m3 || as_stored(dtype) == KvDtype::e5m2) {
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__) && defined(__F16C__))
        return load_fp8<dtype, e4m3_rescaled>(row + i);
#else
        const float* table = as_stored(dtype) == KvDtype::e5m2 ? e5m2_values.data() : e4m3_values.data();
        const float unit = as_stored(dtype) == KvDtype::e4m3 && !e4m3_rescaled ? 1.0f / e4m3_unit : 1.0f;
        alignas(64) float lanes_out[lanes];
        for (std::size_t lane = 0; lane < lanes; ++lane) lanes_out[lane] = table[static_cast<std::uint8_t>(row[i + lane])] * unit;
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

// Codes [i, i + n · lanes) of a row's q8_0 or q4_0 block as load_block_codes gives them one by
// one, unscaled, and the block's scale: n vectors share one read and conversion of the scale
// (with one query row its broadcast and conversion were as many instructions as the vector's
// codes; bench/journal/2026-12-05-block-scale-once-per-block.md), and a tile of one query row
// multiplies by it once per block, not once per vector. Requires: i a multiple of n · lanes,
// n · lanes dividing kv_block_values.
template <KvDtype dtype, std::size_t n>
inline Vec load_fused_codes(const std::byte* row, std::size_t i, Vec (&codes)[n]) {
    static_assert(is_block_type(dtype) && kv_block_values % (n * lanes) == 0);
    const std::byte* block = row + i / kv_block_values * kv_row_bytes(dtype, kv_block_values);
#if defined(__AVX512F__)
    if constexpr (dtype == KvDtype::q4_0 && n == 2) {
        // The whole block: its 16 bytes widened once, the low nibbles elements 0-15 and the
        // high ones 16-31 (load_block_codes widens them once for each half).
        const __m512i wide = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 2)));
        codes[0] = q4_0_code_values(wide);
        codes[1] = q4_0_code_values(_mm512_srli_epi32(wide, 4));
        return load_block_scale(block);
    }
#endif
    for (std::size_t v = 0; v < n; ++v) codes[v] = load_block_codes<dtype>(block, i % kv_block_values + v * lanes);
    return load_block_scale(block);
}

// e4m3 as f32 bits (GroupAttention::E4m3Read): the byte S.EEEE.MMM sign extended to 32 bits,
// shifted left by 20 and masked to the sign and bits 26-20 is the f32 with exponent field
// 0000EEEE and mantissa MMM, the byte's value times 2^-120 exactly, its subnormals f32
// subnormals: three instructions where binary16's conversion takes five. The query (keys) or
// the probabilities (values) are this much larger instead, so each product is the same number
// as binary16's with e4m3_unit: the scores the same bits, as long as the query times it stays
// finite (below 2^7 before it: e4m3_bits_query_limit); the outputs too, but where binary16's
// product, 2^8 smaller, was below f32's normal range. Subnormal operands slow some CPUs' FMAs
// (tuning.hpp's e4m3_as_f32_bits_off_intel).
inline constexpr float e4m3_bits_unit = 0x1p120f;
inline constexpr float e4m3_bits_query_limit = 0x1p7f;

#if defined(__AVX512F__)
inline constexpr bool e4m3_bits_compiled = true;

template <KvDtype dtype>
inline Vec load_e4m3_bits(const std::byte* bytes) {
    static_assert(as_stored(dtype) == KvDtype::e4m3);
    const __m512i wide = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes)));
    const __m512 x = _mm512_castsi512_ps(
        _mm512_and_si512(_mm512_slli_epi32(wide, 20), _mm512_set1_epi32(static_cast<int>(0x87f00000u))));
    if constexpr (dtype == e4m3_finite) return x;
    // S.1111.111 is ±480 · 2^-120 so placed: made the signed quiet NaN, as load_fp8 does.
    const __mmask16 nan = _mm512_cmp_ps_mask(_mm512_abs_ps(x), _mm512_set1_ps(480.0f / e4m3_bits_unit), _CMP_EQ_OQ);
    return _mm512_castsi512_ps(_mm512_mask_ternarylogic_epi32(_mm512_castps_si512(x), nan,
                                                              _mm512_set1_epi32(static_cast<int>(0xffc00000u)),
                                                              _mm512_set1_epi32(0x7fc00000), 0xea));
}
#else
inline constexpr bool e4m3_bits_compiled = false;
#endif

// A vector of keys or values as the fused tiles read it: load_kv<dtype, false>'s, or e4m3 as
// f32 bits where e4m3_bits is true (load_e4m3_bits; only set where it is compiled).
template <KvDtype dtype>
inline Vec load_fused_kv(const std::byte* row, std::size_t i, bool e4m3_bits) {
#if defined(__AVX512F__)
    if constexpr (as_stored(dtype) == KvDtype::e4m3) {
        if (e4m3_bits) return load_e4m3_bits<dtype>(row + i);
    }
#endif
    (void)e4m3_bits;
    return load_kv<dtype, false>(row, i);
}

// read(std::bool_constant<e4m3_bits>{}): a tile's loop over keys that reads e4m3 one way
// throughout, its load_fused_kv given a constant. Given the choice as a runtime bool, GCC kept a
// test and a branch at every key of the one-row output tile: Zen 5's warm e4m3 MHA attention
// ran 1.09x the time (bench/journal/2026-12-07-one-row-loops-on-zen-5.md). Other types, which
// never read as bits, compile their loop once.
template <KvDtype dtype, class Read>
[[gnu::always_inline]] inline void with_e4m3_read(bool e4m3_bits, Read&& read) {
    if constexpr (as_stored(dtype) == KvDtype::e4m3 && e4m3_bits_compiled) {
        if (e4m3_bits) {
            read(std::true_type{});
            return;
        }
    }
    read(std::false_type{});
}

// The fused tiles' n vectors [i, i + n · lanes) of a row, as load_fused_kv gives them one by
// one; a q8_0 or q4_0 block's through load_fused_codes, so its n vectors share one read of its
// scale. Requires: for q8_0 and q4_0, load_fused_codes's.
template <KvDtype dtype, std::size_t n>
inline void load_fused_vectors(const std::byte* row, std::size_t i, Vec (&out)[n], bool e4m3_bits) {
    if constexpr (is_block_type(dtype)) {
        const Vec scale = load_fused_codes<dtype>(row, i, out);
        for (std::size_t v = 0; v < n; ++v) out[v] = Simd::mul(out[v], scale);
    } else {
        for (std::size_t v = 0; v < n; ++v) out[v] = load_fused_kv<dtype>(row, i + v * lanes, e4m3_bits);
    }
}

// Elements [i, i + lanes) of one q8_0 or q4_0 block (kv_convert.hpp's layout) at `block`,
// unscaled: the integers q, or c - 8, as f32; times the block's scale they are decode_kv_vector's
// bits. Requires: i a multiple of lanes, i + lanes <= 32.
template <KvDtype dtype>
inline Vec load_block_codes(const std::byte* block, std::size_t i) {
    static_assert(is_block_type(dtype));
    const std::byte* codes = block + 2;  // past the f16 scale
#if defined(__AVX512F__)
    if constexpr (dtype == KvDtype::q8_0) {
        return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(codes + i))));
    } else {
        // 16 lanes: the low nibbles of the 16 bytes (elements 0-15) or their high ones (16-31).
        __m512i wide = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(codes)));
        if (i >= 16) wide = _mm512_srli_epi32(wide, 4);
        return q4_0_code_values(wide);
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
