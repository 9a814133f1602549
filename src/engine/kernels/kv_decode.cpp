// The block decoder of KV caches: the tiles' vector conversions (kv_load.hpp) on AVX-512 and AVX2,
// a portable loop that GCC vectorises elsewhere; a row's tail, shorter than a vector, goes
// through the scalar definition.
#include "kv_decode.hpp"

#include "kvbench/engine/kv_convert.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

// GCC 12's AVX-512 conversion intrinsics pass an unset vector as the unused merge source, which
// -Wmaybe-uninitialized reports once they are inlined (GCC bug 105593, fixed in GCC 13), as in
// simd.hpp; here the warning fires where kv_load.hpp's conversions are inlined, so it is off
// for this file.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "kv_load.hpp"

namespace kvbench {

namespace {

// One element by the scalar definition of kv_convert.hpp, for the tail of a row.
template <KvDtype dtype>
float decode_one(const void* src, std::size_t i, float scale) {
    if constexpr (dtype == KvDtype::f16) return decode_f16(static_cast<const std::uint16_t*>(src)[i]);
    if constexpr (dtype == KvDtype::bf16) return decode_bf16(static_cast<const std::uint16_t*>(src)[i]);
    if constexpr (dtype == KvDtype::int8) return static_cast<float>(static_cast<const std::int8_t*>(src)[i]) * scale;
    if constexpr (dtype == KvDtype::e4m3) return decode_e4m3(static_cast<const std::uint8_t*>(src)[i]);
    if constexpr (dtype == KvDtype::e5m2) return decode_e5m2(static_cast<const std::uint8_t*>(src)[i]);
    return static_cast<const float*>(src)[i];
}

// Element i of a row of q8_0 or q4_0 blocks at src, by the scalar definition.
template <KvDtype dtype>
float decode_block_one(const std::byte* src, std::size_t i) {
    const std::byte* block = src + i / kv_block_values * kv_row_bytes(dtype, kv_block_values);
    if constexpr (dtype == KvDtype::q8_0) return decode_q8_0(block, i % kv_block_values);
    return decode_q4_0(block, i % kv_block_values);
}

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
// The tiles' own conversions (kv_load.hpp), a vector at a time, int8 times its scale.
constexpr std::size_t lanes = simd::lanes;

template <KvDtype dtype>
inline void decode_vector(const void* src, std::size_t i, float scale, float* dst) {
    simd::Vec v = simd::load_kv<dtype>(static_cast<const std::byte*>(src), i);
    if constexpr (dtype == KvDtype::int8) v = simd::Simd::mul(v, simd::Simd::set1(scale));
    simd::Simd::store(dst + i, v);
}
#else
// Portable: one element at a time by the scalar definition, in plain loops that GCC
// vectorises (docs/measuring.md, "Instruction set").
constexpr std::size_t lanes = 1;

template <KvDtype dtype>
inline void decode_vector(const void* src, std::size_t i, float scale, float* dst) {
    dst[i] = decode_one<dtype>(src, i, scale);
}
#endif

// Rows of q8_0 or q4_0 blocks: each whole block's codes a vector at a time, times its scale
// (one multiply, as the scalar definition rounds); a partial last block through the scalar
// definition; then zeros. src_stride is in elements, so a row is kv_row_bytes(dtype, src_stride).
template <KvDtype dtype>
void decode_quantised_rows(const void* src, std::size_t src_stride, std::size_t n_rows, std::size_t dim, float* dst,
                           std::size_t dst_stride) {
    const std::size_t row_bytes = kv_row_bytes(dtype, src_stride);
    const std::size_t block_bytes = kv_row_bytes(dtype, kv_block_values);
    const std::size_t whole_blocks = dim / kv_block_values;
    for (std::size_t r = 0; r < n_rows; ++r) {
        const std::byte* row = static_cast<const std::byte*>(src) + r * row_bytes;
        float* out = dst + r * dst_stride;
        for (std::size_t b = 0; b < whole_blocks; ++b) {
            const std::byte* block = row + b * block_bytes;
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
            std::uint16_t scale_bits;
            std::memcpy(&scale_bits, block, 2);
            const simd::Vec scale = simd::Simd::set1(decode_f16(scale_bits));
            for (std::size_t i = 0; i < kv_block_values; i += lanes) {
                simd::Simd::store(out + b * kv_block_values + i,
                                  simd::Simd::mul(simd::load_block_codes<dtype>(block, i), scale));
            }
#else
            for (std::size_t i = 0; i < kv_block_values; ++i) {
                out[b * kv_block_values + i] = dtype == KvDtype::q8_0 ? decode_q8_0(block, i) : decode_q4_0(block, i);
            }
#endif
        }
        for (std::size_t i = whole_blocks * kv_block_values; i < dim; ++i) out[i] = decode_block_one<dtype>(row, i);
        for (std::size_t i = dim; i < dst_stride; ++i) out[i] = 0.0f;
    }
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
    case KvDtype::e4m3: decode_block<KvDtype::e4m3>(src, src_stride, scales, n_rows, dim, dst, dst_stride); return;
    case KvDtype::e5m2: decode_block<KvDtype::e5m2>(src, src_stride, scales, n_rows, dim, dst, dst_stride); return;
    case KvDtype::q8_0: decode_quantised_rows<KvDtype::q8_0>(src, src_stride, n_rows, dim, dst, dst_stride); return;
    case KvDtype::q4_0: decode_quantised_rows<KvDtype::q4_0>(src, src_stride, n_rows, dim, dst, dst_stride); return;
    case KvDtype::fp8:
    case KvDtype::int4: break;
    }
}

void decode_kv_blocks(const GroupAttention& problem, std::size_t first_key, std::size_t n_keys, AttendWorkspace& ws) {
    const std::size_t key_offset = first_key * kv_row_bytes(problem.kv_dtype, problem.kv_stride);
    const std::size_t value_offset = first_key * kv_row_bytes(problem.value_dtype, problem.kv_stride);
    const float* key_scales = problem.key_scales != nullptr ? problem.key_scales + first_key : nullptr;
    const float* value_scales = problem.value_scales != nullptr ? problem.value_scales + first_key : nullptr;
    decode_kv_block(problem.kv_dtype, static_cast<const std::byte*>(problem.keys) + key_offset, problem.kv_stride,
                    key_scales, n_keys, problem.head_dim, ws.decoded_keys(), ws.padded_dim());
    decode_kv_block(problem.value_dtype, static_cast<const std::byte*>(problem.values) + value_offset,
                    problem.kv_stride, value_scales, n_keys, problem.head_dim, ws.values(), ws.padded_dim());
}

}  // namespace kvbench
