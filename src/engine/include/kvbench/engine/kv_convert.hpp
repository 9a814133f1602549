// Converting cached K/V vectors between f32 and the reduced types the engine stores
// (docs/model.md, "KV-cache element types"): one scalar definition of every rounding, which the
// kernels' vector decoders (src/engine/kernels/kv_decode.cpp) must reproduce bit for bit.
#pragma once

#include "kvbench/engine/kv_dtype.hpp"

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace kvbench {

// Bytes of one stored element (the per-vector scale of int8 is kept apart, in the cache's scales).
// Requires: not a block type (q8_0, q4_0), whose rows are measured by kv_row_bytes.
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

// The 8-bit floats of the OCP 8-bit floating point specification (the formats of NVIDIA's and
// AMD's fp8 units): e4m3 (bias 7, no infinities, S.1111.111 the only NaN, largest 448) and e5m2
// (bias 15, binary16's top byte: infinities and NaNs as f16's). Encoding rounds to nearest even;
// e4m3 saturates (anything beyond 448, infinities included, becomes ±448), e5m2 overflows to
// infinity as f16 does; NaN stays NaN.
std::uint8_t encode_e4m3(float x);
std::uint8_t encode_e5m2(float x);

// Every value of an 8-bit float with exponent_bits and mantissa_bits (1 + e + m = 8), from its
// definition: (-1)^s · 2^(e - bias) · 1.m, or 2^(1 - bias) · 0.m for e = 0.
constexpr std::array<float, 256> fp8_values(unsigned exponent_bits, bool ieee_specials) {
    const unsigned mantissa_bits = 7 - exponent_bits;
    const int bias = (1 << (exponent_bits - 1)) - 1;
    const unsigned top_exponent = (1u << exponent_bits) - 1;
    const unsigned top_mantissa = (1u << mantissa_bits) - 1;
    std::array<float, 256> values{};
    for (unsigned bits = 0; bits < 256; ++bits) {
        const unsigned exponent = (bits >> mantissa_bits) & top_exponent;
        const unsigned mantissa = bits & top_mantissa;
        float magnitude = 0;
        if (exponent == top_exponent && (ieee_specials || mantissa == top_mantissa)) {
            magnitude = ieee_specials && mantissa == 0 ? std::numeric_limits<float>::infinity()
                                                       : std::numeric_limits<float>::quiet_NaN();
        } else {
            // Powers of two and small integers: every product here is exact.
            const int power = (exponent == 0 ? 1 : static_cast<int>(exponent)) - bias - static_cast<int>(mantissa_bits);
            float unit = 1.0f;
            for (int i = 0; i < power; ++i) unit *= 2.0f;
            for (int i = 0; i > power; --i) unit *= 0.5f;
            const unsigned significand = exponent == 0 ? mantissa : mantissa | (1u << mantissa_bits);
            magnitude = static_cast<float>(significand) * unit;
        }
        values[bits] = (bits & 0x80u) != 0 ? -magnitude : magnitude;
    }
    return values;
}
// The decoders: one table lookup, the same table the vector decoders gather from.
inline constexpr std::array<float, 256> e4m3_values = fp8_values(4, false);
inline constexpr std::array<float, 256> e5m2_values = fp8_values(5, true);
inline float decode_e4m3(std::uint8_t b) { return e4m3_values[b]; }
inline float decode_e5m2(std::uint8_t b) { return e5m2_values[b]; }

// Symmetric int8 of one vector: scale = max|x| / 127 (0 for an all-zero vector), q = x / scale
// rounded to nearest even and held in [-127, 127]. Writes n values to q, returns the scale;
// element i decodes as q[i] · scale.
float quantize_int8(const float* x, std::size_t n, std::int8_t* q);

// q8_0 and q4_0, one block of up to 32 values (n; the rest of the block is zero), laid out as
// llama.cpp's block_q8_0 and block_q4_0: the f16 scale d, then the elements. q8_0: d = max|x| /
// 127, 32 int8 q = x / d rounded to nearest even; element i is q[i] · d. q4_0: d = -m / 8 for
// m the element of largest magnitude (with its sign), so m itself is exactly -8 · d; 16 bytes
// of codes c = x / d + 8 rounded to nearest even in [0, 15], element i in the low nibble of
// byte i and element i + 16 in its high nibble; element i is (c - 8) · d. Both divide by the
// stored (f16) d, the one the decoder multiplies by. A block with an infinite or NaN element
// gets a NaN scale, so every element of it decodes as NaN (as int8's vector does).
// Writes kv_row_bytes(dtype, 32) bytes.
void encode_kv_block(KvDtype dtype, const float* src, std::size_t n, std::byte* dst);
// Element i (< 32) of such a block.
inline float decode_q8_0(const std::byte* block, std::size_t i) {
    std::uint16_t scale;
    __builtin_memcpy(&scale, block, 2);
    return static_cast<float>(static_cast<std::int8_t>(block[2 + i])) * decode_f16(scale);
}
inline float decode_q4_0(const std::byte* block, std::size_t i) {
    std::uint16_t scale;
    __builtin_memcpy(&scale, block, 2);
    const auto byte = static_cast<unsigned>(block[2 + i % 16]);
    const unsigned code = i < 16 ? byte & 0xfu : byte >> 4;
    return static_cast<float>(static_cast<int>(code) - 8) * decode_f16(scale);
}

// One vector of n elements from f32 to `dtype` at dst (kv_row_bytes(dtype, n) bytes); int8
// writes its scale to *scale. Requires: dtype stored by the engine.
void encode_kv_vector(KvDtype dtype, const float* src, std::size_t n, void* dst, float* scale);
// Back to f32 (scale is read for int8 only); the first n elements of a row of at least n.
void decode_kv_vector(KvDtype dtype, const void* src, std::size_t n, float scale, float* dst);

// The bits an 8-bit float byte has all set where its vector conversion needs a fix-up: e4m3's
// S.1111.111 (its NaN), e5m2's S.11111.xx (its NaNs and infinities). Requires: e4m3 or e5m2.
constexpr std::uint8_t fp8_fix_bits(KvDtype dtype) { return dtype == KvDtype::e4m3 ? 0x7f : 0x7c; }
// Whether n stored elements of `dtype` hold such a byte; false for every other type. The
// encoders write them only from a NaN (e4m3), or a NaN, an infinity or an overflow (e5m2).
bool holds_fp8_fix_patterns(KvDtype dtype, const void* stored, std::size_t n);

// Unit roundoff of a stored element relative to its vector's largest: 2^-24 (f32), 2^-11 (f16),
// 2^-8 (bf16), 2^-4 (e4m3), 2^-3 (e5m2), half an int8 step of max|x| / 127 (1/254); for the
// block types relative to its block's largest, half a step plus the f16 rounding of the scale:
// 1/254 + 2^-11 (q8_0), 1/16 + 2^-11 (q4_0).
double kv_unit_roundoff(KvDtype dtype);

// The relative error (docs/model.md's measure, step_equivalence_error) within which a step over
// a cache of `dtype` must equal the same step in f32: 1e-4 for f32 (the equivalence), 3u for
// the floats (f16, bf16, e4m3, e5m2), and 3u·sqrt(2 ln(2 n)) for the scaled integers, whose u is
// relative to the largest of n elements (n = dh for int8, the block of min(32, dh) for q8_0 and
// q4_0; docs/model.md, "KV-cache element types", says why). Requires: head_dim >= 1.
double kv_equivalence_tolerance(KvDtype dtype, std::size_t head_dim);
// Keys and values of different types: the larger of the two types' tolerances.
double kv_equivalence_tolerance(KvDtype key_dtype, KvDtype value_dtype, std::size_t head_dim);

}  // namespace kvbench
