// Converting cached K/V vectors between f32 and the reduced types the engine stores
// (docs/model.md, "KV-cache element types"): one scalar definition of every rounding, which the
// kernels' vector decoders (src/engine/kernels/kv_decode.cpp) must reproduce bit for bit.
#pragma once

#include "kvbench/engine/kv_dtype.hpp"

#include <bit>
#include <cstddef>
#include <cstdint>

namespace kvbench {

// Bytes of one stored element (the per-vector scale of int8 is kept apart, in the cache's scales).
constexpr std::size_t kv_element_bytes(KvDtype dtype) { return kv_dtype_info(dtype).bits / 8; }

// IEEE binary16, round to nearest even, overflow to infinity, NaN kept a (quiet) NaN: what
// F16C's vcvtps2ph does with the default rounding.
std::uint16_t encode_f16(float x);
// Exact: every binary16 value is a float; a NaN comes back quiet, with its payload.
inline float decode_f16(std::uint16_t h) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t magnitude = h & 0x7fffu;
    // The exponent and mantissa shifted into float's fields read as the value times 2^-112
    // (bias 15 against 127), subnormals included; the multiply by 2^112 is exact.
    float value = std::bit_cast<float>(magnitude << 13) * 0x1p112f;
    // Infinity, and NaN made quiet as F16C's vcvtph2ps makes it.
    if (magnitude >= 0x7c00u) value = std::bit_cast<float>((magnitude << 13) | 0x7f800000u | (magnitude > 0x7c00u ? 0x400000u : 0u));
    return std::bit_cast<float>(std::bit_cast<std::uint32_t>(value) | sign);
}

// bfloat16: the top half of a float, rounded to nearest even; NaN stays NaN.
std::uint16_t encode_bf16(float x);
inline float decode_bf16(std::uint16_t b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }

// Symmetric int8 of one vector: scale = max|x| / 127 (0 for an all-zero vector), q = x / scale
// rounded to nearest even and held in [-127, 127]. Writes n values to q, returns the scale;
// element i decodes as q[i] · scale.
float quantize_int8(const float* x, std::size_t n, std::int8_t* q);

// One vector of n elements from f32 to `dtype` at dst (n · kv_element_bytes bytes); int8
// writes its scale to *scale. Requires: dtype stored by the engine.
void encode_kv_vector(KvDtype dtype, const float* src, std::size_t n, void* dst, float* scale);
// Back to f32 (scale is read for int8 only).
void decode_kv_vector(KvDtype dtype, const void* src, std::size_t n, float scale, float* dst);

// Unit roundoff of a stored element relative to its vector's largest: 2^-24 (f32), 2^-11 (f16),
// 2^-8 (bf16), half an int8 step of max|x| / 127 (1/254).
double kv_unit_roundoff(KvDtype dtype);

// The relative error (docs/model.md's measure, step_equivalence_error) within which a step over
// a cache of `dtype` must equal the same step in f32: 1e-4 for f32 (the equivalence), 3u for
// f16 and bf16, and 3u·sqrt(2 ln(2 dh)) for int8, whose u is relative to a vector's largest
// element (docs/model.md, "KV-cache element types", says why). Requires: head_dim >= 1.
double kv_equivalence_tolerance(KvDtype dtype, std::size_t head_dim);

}  // namespace kvbench
