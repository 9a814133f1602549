// The portable back-end of the attention kernel: one lane, the same algorithm and polynomial.
// Private to src/engine/kernels; included through simd.hpp only, which picks one back-end per build.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace kvbench::simd {

// Built where neither AVX-512 nor AVX2+FMA is available: one lane, tiles sized for 16 registers
// (tuning.hpp's portable row).
struct Scalar {
    using Vec = float;
    using Mask = bool;
    static constexpr std::size_t width = 1;
    static constexpr std::size_t registers = 16;

    static Vec zero() { return 0.0f; }
    static Vec set1(float x) { return x; }
    static Vec load(const float* p) { return *p; }
    static Vec load(const float* p, Mask m) { return m ? *p : 0.0f; }
    static void store(float* p, Vec v) { *p = v; }
    static void store(float* p, Vec v, Mask m) {
        if (m) *p = v;
    }
    static Vec add(Vec a, Vec b) { return a + b; }
    static Vec sub(Vec a, Vec b) { return a - b; }
    static Vec mul(Vec a, Vec b) { return a * b; }
    static Vec max(Vec a, Vec b) { return a < b ? b : a; }
    static Vec fma(Vec a, Vec b, Vec c) { return a * b + c; }
    static Mask first(std::size_t n) { return n > 0; }
    static Vec select(Mask m, Vec a, Vec otherwise) { return m ? a : otherwise; }
    static float reduce_max(Vec v) { return v; }
    static float reduce_add(Vec v) { return v; }
    static void store_lanes(float* dst, Vec v, std::size_t, std::size_t count) {
        if (count > 0) *dst = v;
    }
    static Vec reduce_lanes(Vec (&v)[width]) { return v[0]; }

    static Vec exp(Vec x) {
        if (!(x >= exp_lowest)) return x != x ? x : 0.0f;
        const float clamped = std::min(x, exp_highest);
        const float k = std::nearbyint(clamped * exp_log2e);
        const float r = (clamped - k * exp_ln2_hi) - k * exp_ln2_lo;
        float p = exp_p0 * r + exp_p1;
        p = p * r + exp_p2;
        p = p * r + exp_p3;
        p = p * r + exp_p4;
        p = p * r + exp_p5;
        p = p * (r * r) + r + 1.0f;
        const auto biased = static_cast<std::uint32_t>(static_cast<std::int32_t>(k) + 127);
        return p * std::bit_cast<float>(biased << 23);
    }

    static void transpose(Vec (&)[width]) {}
};

}  // namespace kvbench::simd
