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

}  // namespace

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
    case KvDtype::fp8:
    case KvDtype::int4: break;
    }
    throw std::invalid_argument("kv_unit_roundoff: the engine does not store this type");
}

double kv_equivalence_tolerance(KvDtype dtype, std::size_t head_dim) {
    if (dtype == KvDtype::f32) return 1e-4;
    double unit = kv_unit_roundoff(dtype);
    // int8's unit is relative to its vector's largest element, which is about sqrt(2 ln(2 dh))
    // times the typical one for dh values of a projection.
    if (dtype == KvDtype::int8) unit *= std::sqrt(2.0 * std::log(2.0 * static_cast<double>(head_dim)));
    return 3.0 * unit;
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
    case KvDtype::fp8:
    case KvDtype::int4: break;
    }
    throw std::invalid_argument("decode_kv_vector: the engine does not store this type");
}

}  // namespace kvbench
