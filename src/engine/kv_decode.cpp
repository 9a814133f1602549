// The vector decoders of KV blocks: AVX-512, AVX2 (F16C for f16) and a portable loop that GCC
// vectorises; each row's tail, shorter than a vector, goes through the scalar definition.
#include "kv_decode.hpp"

#include "kvbench/engine/kv_convert.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__AVX512F__) || defined(__AVX2__)
// GCC 12's AVX-512 conversion intrinsics pass an unset vector as the unused merge source, which
// -Wmaybe-uninitialized reports once they are inlined (GCC bug 105593, fixed in GCC 13), as in
// simd.hpp; here the warning fires where they are inlined, so it is off for this file.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#endif

namespace kvbench {

namespace {

// One element by the scalar definition of kv_convert.hpp, for the tail of a row.
template <KvDtype dtype>
float decode_one(const void* src, std::size_t i, float scale) {
    if constexpr (dtype == KvDtype::f16) return decode_f16(static_cast<const std::uint16_t*>(src)[i]);
    if constexpr (dtype == KvDtype::bf16) return decode_bf16(static_cast<const std::uint16_t*>(src)[i]);
    if constexpr (dtype == KvDtype::int8) return static_cast<float>(static_cast<const std::int8_t*>(src)[i]) * scale;
    return static_cast<const float*>(src)[i];
}

#if defined(__AVX512F__)
constexpr std::size_t lanes = 16;
#elif defined(__AVX2__)
constexpr std::size_t lanes = 8;
#else
constexpr std::size_t lanes = 1;  // the portable loop below is one element at a time, for GCC to vectorise
#endif

// Elements [i, i + lanes) of a row, as one vector store.
template <KvDtype dtype>
inline void decode_vector(const void* src, std::size_t i, float scale, float* dst) {
#if defined(__AVX512F__)
    if constexpr (dtype == KvDtype::f16) {
        const auto* in = static_cast<const std::uint16_t*>(src) + i;
        _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in))));
    } else if constexpr (dtype == KvDtype::bf16) {
        const auto* in = static_cast<const std::uint16_t*>(src) + i;
        const __m512i wide = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in)));
        _mm512_storeu_ps(dst + i, _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16)));
    } else if constexpr (dtype == KvDtype::int8) {
        const auto* in = static_cast<const std::int8_t*>(src) + i;
        const __m512i wide = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in)));
        _mm512_storeu_ps(dst + i, _mm512_mul_ps(_mm512_cvtepi32_ps(wide), _mm512_set1_ps(scale)));
    }
#elif defined(__AVX2__)
    if constexpr (dtype == KvDtype::f16) {
#if defined(__F16C__)
        const auto* in = static_cast<const std::uint16_t*>(src) + i;
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in))));
#else
        for (std::size_t j = i; j < i + lanes; ++j) dst[j] = decode_one<dtype>(src, j, scale);
#endif
    } else if constexpr (dtype == KvDtype::bf16) {
        const auto* in = static_cast<const std::uint16_t*>(src) + i;
        const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in)));
        _mm256_storeu_ps(dst + i, _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16)));
    } else if constexpr (dtype == KvDtype::int8) {
        const auto* in = static_cast<const std::int8_t*>(src) + i;
        const __m256i wide = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(in)));
        _mm256_storeu_ps(dst + i, _mm256_mul_ps(_mm256_cvtepi32_ps(wide), _mm256_set1_ps(scale)));
    }
#else
    dst[i] = decode_one<dtype>(src, i, scale);
#endif
}

// The whole block for one type: the type is chosen once per block, and each row is whole
// vectors, then a scalar tail, then zeros.
template <KvDtype dtype>
void decode_block(const void* src, std::size_t src_stride, const float* scales, std::size_t n_rows,
                  std::size_t dim, float* dst, std::size_t dst_stride) {
    const std::size_t row_bytes = src_stride * kv_element_bytes(dtype);
    if (dtype != KvDtype::int8 && src_stride == dim && dst_stride == dim && (n_rows * dim) % lanes == 0) {
        // Rows back to back on both sides (the cache's layout, head_dim a multiple of 16): one run
        // of vectors, without a row loop's bookkeeping every few vectors.
        for (std::size_t i = 0; i < n_rows * dim; i += lanes) decode_vector<dtype>(src, i, 0.0f, dst);
        return;
    }
    const std::size_t whole = dim / lanes * lanes;
    for (std::size_t r = 0; r < n_rows; ++r) {
        const void* row = static_cast<const std::byte*>(src) + r * row_bytes;
        const float scale = dtype == KvDtype::int8 ? scales[r] : 0.0f;
        float* out = dst + r * dst_stride;
        for (std::size_t i = 0; i < whole; i += lanes) decode_vector<dtype>(row, i, scale, out);
        for (std::size_t i = whole; i < dim; ++i) out[i] = decode_one<dtype>(row, i, scale);
        for (std::size_t i = dim; i < dst_stride; ++i) out[i] = 0.0f;
    }
}

}  // namespace

void decode_kv_block(KvDtype dtype, const void* src, std::size_t src_stride, const float* scales,
                     std::size_t n_rows, std::size_t dim, float* dst, std::size_t dst_stride) {
    switch (dtype) {
    case KvDtype::f32: {
        for (std::size_t r = 0; r < n_rows; ++r) {
            std::memcpy(dst + r * dst_stride, static_cast<const float*>(src) + r * src_stride, dim * sizeof(float));
            std::fill(dst + r * dst_stride + dim, dst + (r + 1) * dst_stride, 0.0f);
        }
        return;
    }
    case KvDtype::f16: decode_block<KvDtype::f16>(src, src_stride, scales, n_rows, dim, dst, dst_stride); return;
    case KvDtype::bf16: decode_block<KvDtype::bf16>(src, src_stride, scales, n_rows, dim, dst, dst_stride); return;
    case KvDtype::int8: decode_block<KvDtype::int8>(src, src_stride, scales, n_rows, dim, dst, dst_stride); return;
    case KvDtype::fp8:
    case KvDtype::int4: break;
    }
}

}  // namespace kvbench
