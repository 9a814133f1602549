// The scalar roundings of kv_convert.hpp: the definition every vector decoder is tested against.
#include "kvbench/engine/kv_convert.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace kvbench {

namespace {

// Rounds `value >> shift` to nearest, ties to even (shift >= 1).
std::uint32_t shift_right_to_nearest_even(std::uint32_t value, std::uint32_t shift) {
    const std::uint32_t kept = value >> shift;
    const std::uint32_t rest = value & ((1u << shift) - 1);
    const std::uint32_t half = 1u << (shift - 1);
    return kept + ((rest > half || (rest == half && (kept & 1u) != 0)) ? 1u : 0u);
}

// An 8-bit float's magnitude bits (exponent and mantissa, 7 bits) for a finite magnitude, rounded
// to nearest even: the same steps as encode_f16 with the narrower fields. May return codes past
// the format's largest finite one; the callers saturate or overflow.
std::uint32_t fp8_magnitude(std::uint32_t magnitude, std::uint32_t mantissa_bits, std::uint32_t bias) {
    const std::uint32_t float_exponent = magnitude >> 23;  // biased by 127
    const std::uint32_t smallest_normal = 128 - bias;     // the float exponent of 2^(1 - bias)
    if (float_exponent >= smallest_normal) {
        // Normal: rebias and round the mantissa's low bits away; a carry into the exponent is right.
        return shift_right_to_nearest_even(magnitude - ((127 - bias) << 23), 23 - mantissa_bits);
    }
    // Subnormal (or zero): the value in units of 2^(1 - bias - mantissa_bits) is
    // significand · 2^(float_exponent - 150 + bias - 1 + mantissa_bits); a carry gives the smallest normal.
    if (float_exponent == 0) return 0;  // float subnormals are far below half the smallest step
    const std::uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u;
    const std::uint32_t shift = 150 - float_exponent - bias + 1 - mantissa_bits;
    return shift > 25 ? 0 : shift_right_to_nearest_even(significand, shift);
}

// f16 bits of the largest magnitude of n values divided by `divisor`, with that element (its sign
// kept) in *largest_signed; a NaN for a block that holds an infinity or NaN, or whose scale f16
// cannot hold.
std::uint16_t block_scale(const float* x, std::size_t n, float divisor, float* largest_signed) {
    float largest = 0.0f;
    *largest_signed = 0.0f;
    for (std::size_t i = 0; i < n; ++i) {
        if (!std::isfinite(x[i])) return 0x7e00;
        if (std::fabs(x[i]) > largest) {
            largest = std::fabs(x[i]);
            *largest_signed = x[i];
        }
    }
    const std::uint16_t scale = encode_f16(largest / divisor);
    return (scale & 0x7c00u) == 0x7c00u ? std::uint16_t{0x7e00} : scale;  // beyond f16: not representable
}

}  // namespace

std::uint8_t encode_e4m3(float x) {
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
    const auto sign = static_cast<std::uint8_t>((bits >> 24) & 0x80u);
    const std::uint32_t magnitude = bits & 0x7fffffffu;
    if (magnitude > 0x7f800000u) return static_cast<std::uint8_t>(sign | 0x7fu);  // NaN
    // Saturating: 448 (S.1111.110) for anything that rounds past it, infinity included.
    const std::uint32_t code = magnitude >= 0x7f800000u ? 0x7eu : std::min(fp8_magnitude(magnitude, 3, 7), 0x7eu);
    return static_cast<std::uint8_t>(sign | code);
}

std::uint8_t encode_e5m2(float x) {
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
    const auto sign = static_cast<std::uint8_t>((bits >> 24) & 0x80u);
    const std::uint32_t magnitude = bits & 0x7fffffffu;
    if (magnitude > 0x7f800000u) return static_cast<std::uint8_t>(sign | 0x7eu);  // NaN, quiet
    // Overflowing to infinity (S.11111.00), as f16 does.
    const std::uint32_t code = magnitude >= 0x7f800000u ? 0x7cu : std::min(fp8_magnitude(magnitude, 2, 15), 0x7cu);
    return static_cast<std::uint8_t>(sign | code);
}

void encode_kv_block(KvDtype dtype, const float* src, std::size_t n, std::byte* dst) {
    float largest = 0.0f;
    const bool q8 = dtype == KvDtype::q8_0;
    const std::uint16_t scale_bits = block_scale(src, n, q8 ? 127.0f : 8.0f, &largest);
    const std::uint16_t stored = q8 ? scale_bits : static_cast<std::uint16_t>(scale_bits ^ (largest > 0 ? 0x8000u : 0u));
    std::memcpy(dst, &stored, 2);
    const float scale = decode_f16(stored);
    const bool usable = std::isfinite(scale) && scale != 0.0f;
    if (q8) {
        for (std::size_t i = 0; i < kv_block_values; ++i) {
            const float q = usable && i < n ? std::clamp(std::nearbyint(src[i] / scale), -127.0f, 127.0f) : 0.0f;
            dst[2 + i] = static_cast<std::byte>(static_cast<std::int8_t>(q));
        }
        return;
    }
    // q4_0: d = -m / 8, so the sign of d is the opposite of the largest element's.
    std::uint8_t codes[kv_block_values];
    for (std::size_t i = 0; i < kv_block_values; ++i) {
        const float c = usable && i < n ? std::clamp(std::nearbyint(src[i] / scale) + 8.0f, 0.0f, 15.0f) : 8.0f;
        codes[i] = static_cast<std::uint8_t>(c);
    }
    for (std::size_t i = 0; i < kv_block_values / 2; ++i) {
        dst[2 + i] = static_cast<std::byte>(codes[i] | (codes[i + kv_block_values / 2] << 4));
    }
}

std::uint16_t encode_f16(float x) {
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
    const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
    const std::uint32_t magnitude = bits & 0x7fffffffu;
    std::uint32_t half = 0;
    if (magnitude > 0x7f800000u) {
        half = 0x7e00u | ((magnitude >> 13) & 0x3ffu);  // NaN, quietened, top payload bits kept
    } else if (magnitude >= 0x477ff000u) {
        half = 0x7c00u;  // 65520 and above round to infinity
    } else if (magnitude >= 0x38800000u) {
        // Normal: rebias the exponent (127 -> 15) and round the mantissa's low 13 bits away;
        // a carry into the exponent is the right result.
        half = shift_right_to_nearest_even(magnitude - (112u << 23), 13);
    } else if (magnitude >= 0x33000000u) {
        // Subnormal: the value in units of 2^-24 is mantissa · 2^(exponent - 126).
        const std::uint32_t exponent = magnitude >> 23;
        const std::uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
        half = shift_right_to_nearest_even(mantissa, 126 - exponent);
    }  // below 2^-25: zero
    return static_cast<std::uint16_t>(sign | half);
}

std::uint16_t encode_bf16(float x) {
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
    if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x40u);
    return static_cast<std::uint16_t>(shift_right_to_nearest_even(bits, 16));
}

float quantize_int8(const float* x, std::size_t n, std::int8_t* q) {
    float max_abs = 0.0f;
    for (std::size_t i = 0; i < n; ++i) max_abs = std::max(max_abs, std::fabs(x[i]));
    if (std::isnan(max_abs) || std::isinf(max_abs) || std::isnan(x[0])) {
        // Not representable: a NaN scale makes every decoded element NaN, so a check sees it.
        std::fill_n(q, n, std::int8_t{0});
        return std::numeric_limits<float>::quiet_NaN();
    }
    if (max_abs == 0.0f) {
        std::fill_n(q, n, std::int8_t{0});
        return 0.0f;
    }
    const float inverse = 127.0f / max_abs;
    for (std::size_t i = 0; i < n; ++i) {
        const float rounded = std::nearbyint(x[i] * inverse);
        q[i] = static_cast<std::int8_t>(std::clamp(rounded, -127.0f, 127.0f));
    }
    return max_abs / 127.0f;
}

double kv_unit_roundoff(KvDtype dtype) {
    switch (dtype) {
    case KvDtype::f32: return 0x1p-24;
    case KvDtype::f16: return 0x1p-11;
    case KvDtype::bf16: return 0x1p-8;
    case KvDtype::int8: return 1.0 / 254.0;
    case KvDtype::e4m3: return 0x1p-4;
    case KvDtype::e5m2: return 0x1p-3;
    case KvDtype::q8_0: return 1.0 / 254.0 + 0x1p-11;
    case KvDtype::q4_0: return 1.0 / 16.0 + 0x1p-11;
    case KvDtype::fp8:
    case KvDtype::int4: break;
    }
    throw std::invalid_argument("kv_unit_roundoff: the engine does not store this type");
}

double kv_equivalence_tolerance(KvDtype dtype, std::size_t head_dim) {
    if (dtype == KvDtype::f32) return 1e-4;
    double unit = kv_unit_roundoff(dtype);
    // A scaled integer's unit is relative to the largest of the n elements sharing its scale,
    // which is about sqrt(2 ln(2n)) times the typical one for values of a projection.
    std::size_t n_scaled = 0;
    if (dtype == KvDtype::int8) n_scaled = head_dim;
    if (kv_dtype_info(dtype).block_values != 0) n_scaled = std::min<std::size_t>(head_dim, kv_dtype_info(dtype).block_values);
    if (n_scaled != 0) unit *= std::sqrt(2.0 * std::log(2.0 * static_cast<double>(n_scaled)));
    return 3.0 * unit;
}

double kv_equivalence_tolerance(KvDtype key_dtype, KvDtype value_dtype, std::size_t head_dim) {
    return std::max(kv_equivalence_tolerance(key_dtype, head_dim), kv_equivalence_tolerance(value_dtype, head_dim));
}

void encode_kv_vector(KvDtype dtype, const float* src, std::size_t n, void* dst, float* scale) {
    switch (dtype) {
    case KvDtype::f32: std::memcpy(dst, src, n * sizeof(float)); return;
    case KvDtype::f16: {
        auto* out = static_cast<std::uint16_t*>(dst);
        for (std::size_t i = 0; i < n; ++i) out[i] = encode_f16(src[i]);
        return;
    }
    case KvDtype::bf16: {
        auto* out = static_cast<std::uint16_t*>(dst);
        for (std::size_t i = 0; i < n; ++i) out[i] = encode_bf16(src[i]);
        return;
    }
    case KvDtype::int8: *scale = quantize_int8(src, n, static_cast<std::int8_t*>(dst)); return;
    case KvDtype::e4m3: {
        auto* out = static_cast<std::uint8_t*>(dst);
        for (std::size_t i = 0; i < n; ++i) out[i] = encode_e4m3(src[i]);
        return;
    }
    case KvDtype::e5m2: {
        auto* out = static_cast<std::uint8_t*>(dst);
        for (std::size_t i = 0; i < n; ++i) out[i] = encode_e5m2(src[i]);
        return;
    }
    case KvDtype::q8_0:
    case KvDtype::q4_0: {
        const std::size_t block_bytes = kv_row_bytes(dtype, kv_block_values);
        auto* out = static_cast<std::byte*>(dst);
        for (std::size_t first = 0; first < n; first += kv_block_values, out += block_bytes) {
            encode_kv_block(dtype, src + first, std::min(kv_block_values, n - first), out);
        }
        return;
    }
    case KvDtype::fp8:
    case KvDtype::int4: break;
    }
    throw std::invalid_argument("encode_kv_vector: the engine does not store this type");
}

void decode_kv_vector(KvDtype dtype, const void* src, std::size_t n, float scale, float* dst) {
    switch (dtype) {
    case KvDtype::f32: std::memcpy(dst, src, n * sizeof(float)); return;
    case KvDtype::f16: {
        const auto* in = static_cast<const std::uint16_t*>(src);
        for (std::size_t i = 0; i < n; ++i) dst[i] = decode_f16(in[i]);
        return;
    }
    case KvDtype::bf16: {
        const auto* in = static_cast<const std::uint16_t*>(src);
        for (std::size_t i = 0; i < n; ++i) dst[i] = decode_bf16(in[i]);
        return;
    }
    case KvDtype::int8: {
        const auto* in = static_cast<const std::int8_t*>(src);
        for (std::size_t i = 0; i < n; ++i) dst[i] = static_cast<float>(in[i]) * scale;
        return;
    }
    case KvDtype::e4m3: {
        const auto* in = static_cast<const std::uint8_t*>(src);
        for (std::size_t i = 0; i < n; ++i) dst[i] = decode_e4m3(in[i]);
        return;
    }
    case KvDtype::e5m2: {
        const auto* in = static_cast<const std::uint8_t*>(src);
        for (std::size_t i = 0; i < n; ++i) dst[i] = decode_e5m2(in[i]);
        return;
    }
    case KvDtype::q8_0:
    case KvDtype::q4_0: {
        const std::size_t block_bytes = kv_row_bytes(dtype, kv_block_values);
        const auto* in = static_cast<const std::byte*>(src);
        for (std::size_t i = 0; i < n; ++i) {
            const std::byte* block = in + i / kv_block_values * block_bytes;
            dst[i] = dtype == KvDtype::q8_0 ? decode_q8_0(block, i % kv_block_values) : decode_q4_0(block, i % kv_block_values);
        }
        return;
    }
    case KvDtype::fp8:
    case KvDtype::int4: break;
    }
    throw std::invalid_argument("decode_kv_vector: the engine does not store this type");
}

bool holds_fp8_fix_patterns(KvDtype dtype, const void* stored, std::size_t n) {
    if (dtype != KvDtype::e4m3 && dtype != KvDtype::e5m2) return false;
    const std::uint8_t bits = fp8_fix_bits(dtype);
    const auto* bytes = static_cast<const std::uint8_t*>(stored);
    return std::any_of(bytes, bytes + n, [bits](std::uint8_t b) { return (b & bits) == bits; });
}

}  // namespace kvbench
