// Reduced-precision KV caches: the roundings, the vector decoders against the scalar definition,
// the cache that stores them, the attention kernels against their naive twin, and the step's error.
#include "kernels/kv_decode.hpp"
#include "kernels/kv_load.hpp"

#include "kvbench/engine/attention.hpp"
#include "kvbench/engine/cost_model.hpp"
#include "kvbench/engine/kernel_check.hpp"
#include "kvbench/engine/kernel_isa.hpp"
#include "kvbench/engine/kv_cache.hpp"
#include "kvbench/engine/kv_convert.hpp"
#include "kvbench/engine/reference.hpp"
#include "kvbench/engine/rng.hpp"
#include "kvbench/engine/weights.hpp"
#include "kvbench/measure/runner.hpp"
#include "kvbench/measure/sweep.hpp"
#include "kvbench/report/report.hpp"

#include "attention_flops.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>
#include <utility>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

using namespace kvbench;
using kvbench::test::expected_decode_executed;
using kvbench::test::make_config;
using kvbench::test::random_vector;

namespace {

constexpr KvDtype reduced_dtypes[] = {KvDtype::f16,  KvDtype::bf16, KvDtype::int8, KvDtype::e4m3,
                                      KvDtype::e5m2, KvDtype::q8_0, KvDtype::q4_0};
// Keys and values apart: a block type beside an int8 (its scales apart) and beside f32.
constexpr KvDtypePair mixed_pairs[] = {{KvDtype::q8_0, KvDtype::q4_0}, {KvDtype::int8, KvDtype::e5m2},
                                       {KvDtype::f32, KvDtype::q8_0}, {KvDtype::f16, KvDtype::f32}};

// One warm, single-repetition run of the point's paths, as the sweep runs them.
PointMeasurement run_point(const GridPoint& point, bool uncached, bool verify) {
    RunOptions options;
    options.n_reps = 1;
    options.n_warmup = 0;
    options.run_uncached = uncached;
    options.cold_cache = false;
    options.verify = verify;
    const std::atomic<bool> never_stop{false};
    PointRunner runner(nullptr);
    return runner.run(point, options, never_stop);
}

// The kernels against the naive twin: f32 arithmetic in another order, 1e-5. The integer key
// tiles (attention_kernel.cpp: int8's and q4_0's on AVX2 and AVX-512, q8_0's on AVX2) also
// round the scaled query to 16 bits: each score moves by up to 2^-16 of |q|max · Σ|k|
// (measured: 1.0e-5 for int8 at dh = 16 on AVX2, 9.8e-6 for q4_0 at dh = 256). The integer value
// tiles (q8_0's and q4_0's, one query row, AVX2 and AVX-512) round each key's weight to 16 bits
// against its block column's largest (measured: up to 3.3e-5 for q8_0 and 3.7e-5 for q4_0 over
// the shapes below, 3.5e-5 for either on AVX2). Those types are held to the tolerance the tool's
// own --check applies, 1e-4: a third of int8's own error against f32 (3.3e-4 at issue 11's
// shape), a fiftieth of q8_0's, a thousandth of q4_0's.
bool integer_key_tiles(KvDtype keys) {
    const std::string_view isa = kernel_isa();
    return ((keys == KvDtype::int8 || keys == KvDtype::q4_0) && (isa == "avx2+fma" || isa == "avx512")) ||
           (keys == KvDtype::q8_0 && isa == "avx2+fma");
}
bool integer_value_tiles(KvDtype values) {
    const std::string_view isa = kernel_isa();
    return (values == KvDtype::q8_0 || values == KvDtype::q4_0) && (isa == "avx2+fma" || isa == "avx512");
}
double twin_tolerance(KvDtype keys, KvDtype values) {
    return integer_key_tiles(keys) || integer_value_tiles(values) ? kernel_check_tolerance : 1e-5;
}
double twin_tolerance(KvDtype dtype) { return twin_tolerance(dtype, dtype); }

bool same_bits(float a, float b) { return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b); }

}  // namespace

TEST_CASE("every f16 pattern decodes to its value and encodes back to itself") {
    std::size_t n_wrong = 0;
    std::uint32_t first_wrong = 0;
    for (std::uint32_t bits = 0; bits <= 0xffff; ++bits) {
        const auto h = static_cast<std::uint16_t>(bits);
        const float value = decode_f16(h);
        const std::uint32_t exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
        bool right = true;
        if (exponent == 31 && mantissa != 0) {
            right = std::isnan(value);
        } else {
            // The value from its definition: (-1)^s · 2^(e-15) · 1.m, or 2^-14 · 0.m for e = 0.
            const double magnitude = exponent == 31 ? std::numeric_limits<double>::infinity()
                                     : exponent == 0 ? std::ldexp(static_cast<double>(mantissa), -24)
                                                     : std::ldexp(1.0 + mantissa / 1024.0, static_cast<int>(exponent) - 15);
            right = static_cast<double>(value) == ((bits & 0x8000) ? -magnitude : magnitude) && encode_f16(value) == h;
        }
        if (!right && n_wrong++ == 0) first_wrong = bits;
    }
    CAPTURE(first_wrong);
    CHECK(n_wrong == 0);
}

TEST_CASE("f16 encoding rounds to nearest even, overflows to infinity and keeps NaN") {
    CHECK(encode_f16(1.0f) == 0x3c00);
    CHECK(encode_f16(1.0f + 0x1p-11f) == 0x3c00);                // a tie: to the even 1.0
    CHECK(encode_f16(1.0f + 3 * 0x1p-11f) == 0x3c02);            // a tie: to the even 1 + 2^-9
    CHECK(encode_f16(1.0f + 0x1p-11f + 0x1p-20f) == 0x3c01);     // above the tie: up
    CHECK(encode_f16(65504.0f) == 0x7bff);
    CHECK(encode_f16(65519.0f) == 0x7bff);
    CHECK(encode_f16(65520.0f) == 0x7c00);
    CHECK(encode_f16(-1e30f) == 0xfc00);
    CHECK(encode_f16(0x1p-24f) == 0x0001);                        // the smallest subnormal
    CHECK(encode_f16(0x1p-25f) == 0x0000);                        // a tie with zero: to the even 0
    CHECK(encode_f16(0x1p-25f + 0x1p-35f) == 0x0001);
    CHECK(encode_f16(-0.0f) == 0x8000);
    CHECK(std::isnan(decode_f16(encode_f16(std::numeric_limits<float>::quiet_NaN()))));
}

#if defined(__x86_64__)
namespace {

// F16C's conversions, compiled for it whatever the tests' own -march, run only where the CPU has it.
__attribute__((target("f16c"))) std::uint16_t f16c_encode(float x) {
    return static_cast<std::uint16_t>(_cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT));
}
__attribute__((target("f16c"))) float f16c_decode(std::uint16_t h) { return _cvtsh_ss(h); }

}  // namespace

TEST_CASE("f16 encoding gives F16C's bits on every class of float") {
    if (!__builtin_cpu_supports("f16c")) return;  // nothing to compare against on this CPU
    Rng rng(7);
    std::size_t n_wrong = 0;
    std::uint32_t first_wrong = 0;
    for (int i = 0; i < 200000; ++i) {
        // The bits of a SplitMix64 draw: normals, subnormals, infinities and NaNs all occur.
        const float x = std::bit_cast<float>(static_cast<std::uint32_t>(rng.next_u64()));
        if (encode_f16(x) != f16c_encode(x) && n_wrong++ == 0) first_wrong = std::bit_cast<std::uint32_t>(x);
    }
    CAPTURE(first_wrong);
    CHECK(n_wrong == 0);
    for (std::uint32_t bits = 0; bits <= 0xffff; ++bits) {
        const auto h = static_cast<std::uint16_t>(bits);
        if (!same_bits(decode_f16(h), f16c_decode(h)) && n_wrong++ == 0) first_wrong = bits;
    }
    CAPTURE(first_wrong);
    CHECK(n_wrong == 0);
}
#endif

TEST_CASE("bf16 keeps the top half of a float, rounded to nearest even") {
    CHECK(encode_bf16(1.0f) == 0x3f80);
    CHECK(encode_bf16(1.0f + 0x1p-8f) == 0x3f80);          // a tie: to the even 1.0
    CHECK(encode_bf16(1.0f + 3 * 0x1p-8f) == 0x3f82);      // a tie: to the even
    CHECK(encode_bf16(1.0f + 0x1p-8f + 0x1p-20f) == 0x3f81);
    CHECK(encode_bf16(std::numeric_limits<float>::max()) == 0x7f80);  // rounds up to infinity
    CHECK(std::isnan(decode_bf16(encode_bf16(std::numeric_limits<float>::quiet_NaN()))));
    std::size_t n_wrong = 0;
    for (std::uint32_t bits = 0; bits <= 0xffff; ++bits) {
        const float value = decode_bf16(static_cast<std::uint16_t>(bits));
        const bool right = std::bit_cast<std::uint32_t>(value) == bits << 16 && (std::isnan(value) || encode_bf16(value) == bits);
        if (!right) ++n_wrong;
    }
    CHECK(n_wrong == 0);
}

TEST_CASE("every e4m3 and e5m2 pattern decodes to its value and encodes back to itself") {
    struct Format {
        KvDtype dtype;
        int exponent_bits, bias;
        bool ieee_specials;  // e5m2: infinities and NaNs as f16's; e4m3: only S.1111.111 is NaN
    };
    for (const Format format : {Format{KvDtype::e4m3, 4, 7, false}, Format{KvDtype::e5m2, 5, 15, true}}) {
        const int mantissa_bits = 7 - format.exponent_bits;
        std::size_t n_wrong = 0;
        std::uint32_t first_wrong = 0;
        for (std::uint32_t bits = 0; bits < 256; ++bits) {
            const auto b = static_cast<std::uint8_t>(bits);
            const float value = format.dtype == KvDtype::e4m3 ? decode_e4m3(b) : decode_e5m2(b);
            const std::uint8_t back = format.dtype == KvDtype::e4m3 ? encode_e4m3(value) : encode_e5m2(value);
            const int top = (1 << format.exponent_bits) - 1;
            const int exponent = static_cast<int>(bits >> mantissa_bits) & top;
            const int mantissa = static_cast<int>(bits) & ((1 << mantissa_bits) - 1);
            bool right = true;
            if (exponent == top && (format.ieee_specials ? mantissa != 0 : mantissa == (1 << mantissa_bits) - 1)) {
                right = std::isnan(value) && std::isnan(format.dtype == KvDtype::e4m3 ? decode_e4m3(back) : decode_e5m2(back));
            } else {
                const double magnitude =
                    format.ieee_specials && exponent == top ? std::numeric_limits<double>::infinity()
                    : exponent == 0 ? std::ldexp(mantissa, 1 - format.bias - mantissa_bits)
                                    : std::ldexp(1.0 + std::ldexp(mantissa, -mantissa_bits), exponent - format.bias);
                right = static_cast<double>(value) == ((bits & 0x80) ? -magnitude : magnitude) && back == b;
            }
            if (!right && n_wrong++ == 0) first_wrong = bits;
        }
        CAPTURE(kv_dtype_info(format.dtype).name);
        CAPTURE(first_wrong);
        CHECK(n_wrong == 0);
    }
}

TEST_CASE("fp8 encoding rounds to nearest even; e4m3 saturates at 448, e5m2 overflows to infinity") {
    CHECK(encode_e4m3(1.0f) == 0x38);
    CHECK(encode_e4m3(1.0f + 0x1p-4f) == 0x38);               // a tie: to the even 1.0
    CHECK(encode_e4m3(1.0f + 3 * 0x1p-4f) == 0x3a);           // a tie: to the even 1 + 2^-2
    CHECK(encode_e4m3(1.0f + 0x1p-4f + 0x1p-12f) == 0x39);    // above the tie: up
    CHECK(encode_e4m3(448.0f) == 0x7e);
    CHECK(encode_e4m3(500.0f) == 0x7e);                       // past 448: saturated, not NaN
    CHECK(encode_e4m3(-std::numeric_limits<float>::infinity()) == 0xfe);
    CHECK(encode_e4m3(0x1p-9f) == 0x01);                      // the smallest subnormal
    CHECK(encode_e4m3(0x1p-10f) == 0x00);                     // a tie with zero: to the even 0
    CHECK(encode_e4m3(0x1p-10f + 0x1p-20f) == 0x01);
    CHECK(encode_e4m3(0x1p-6f - 0x1p-12f) == 0x08);           // rounds up into the smallest normal
    CHECK(std::isnan(decode_e4m3(encode_e4m3(std::numeric_limits<float>::quiet_NaN()))));
    CHECK(encode_e5m2(1.0f) == 0x3c);
    CHECK(encode_e5m2(1.0f + 0x1p-3f) == 0x3c);               // a tie: to the even 1.0
    CHECK(encode_e5m2(57344.0f) == 0x7b);                     // the largest finite
    CHECK(encode_e5m2(61439.0f) == 0x7b);
    CHECK(encode_e5m2(61440.0f) == 0x7c);                     // a tie past the largest: infinity
    CHECK(encode_e5m2(0x1p-16f) == 0x01);
    CHECK(encode_e5m2(-0.0f) == 0x80);
    CHECK(std::isnan(decode_e5m2(encode_e5m2(std::numeric_limits<float>::quiet_NaN()))));
    // e5m2 is binary16's top byte: its encoding is f16's rounded once more, never twice wrong.
    Rng rng(17);
    std::size_t n_wrong = 0;
    for (int i = 0; i < 20000; ++i) {
        const float x = static_cast<float>(rng.next_u64() % 2000001) / 1000.0f - 1000.0f;
        const float decoded = decode_e5m2(encode_e5m2(x));
        const float spacing = std::ldexp(1.0f, std::ilogb(x) - 2);
        if (x != 0.0f && std::fabs(decoded - x) > 0.5f * spacing) ++n_wrong;
    }
    CHECK(n_wrong == 0);
}

TEST_CASE("q8_0 and q4_0 lay out a scale and 32 codes per block, rounding within half a step") {
    const auto x = random_vector(80, 41, 3.0f);  // two whole blocks and a partial one of 16
    for (const KvDtype dtype : {KvDtype::q8_0, KvDtype::q4_0}) {
        CAPTURE(kv_dtype_info(dtype).name);
        const std::size_t block_bytes = dtype == KvDtype::q8_0 ? 34 : 18;
        std::vector<std::byte> stored(kv_row_bytes(dtype, x.size()));
        REQUIRE(stored.size() == 3 * block_bytes);
        float unused = 0;
        encode_kv_vector(dtype, x.data(), x.size(), stored.data(), &unused);
        std::vector<float> back(x.size());
        decode_kv_vector(dtype, stored.data(), x.size(), 0.0f, back.data());
        for (std::size_t block = 0; block < 3; ++block) {
            const std::size_t first = block * 32, n = std::min<std::size_t>(32, x.size() - first);
            float largest = 0, largest_signed = 0;
            for (std::size_t i = first; i < first + n; ++i) {
                if (std::fabs(x[i]) > largest) largest_signed = x[i];
                largest = std::max(largest, std::fabs(x[i]));
            }
            std::uint16_t scale_bits;
            std::memcpy(&scale_bits, stored.data() + block * block_bytes, 2);
            const float scale = decode_f16(scale_bits);
            CHECK(scale == decode_f16(encode_f16(dtype == KvDtype::q8_0 ? largest / 127.0f : -largest_signed / 8.0f)));
            for (std::size_t i = first; i < first + n; ++i) {
                // Half a step, or for q4_0 the one value a whole step off: the opposite of the
                // largest, which maps to +8, clamped to 7.
                const float step = std::fabs(scale) * (dtype == KvDtype::q4_0 && x[i] / scale > 7.5f ? 2.0f : 1.0f);
                CHECK(std::fabs(back[i] - x[i]) <= 0.5f * step * 1.001f + largest * 0x1p-11f);
            }
            if (dtype == KvDtype::q8_0) {
                bool has_extreme = false;
                for (std::size_t i = 0; i < 32; ++i) {
                    has_extreme = has_extreme || std::abs(static_cast<int>(static_cast<std::int8_t>(stored[block * 34 + 2 + i]))) == 127;
                }
                CHECK(has_extreme);
            }
        }
        // The partial block's missing 16 values are stored as zeros.
        for (std::size_t i = 80; i < 96; ++i) {
            const std::byte* last = stored.data() + 2 * block_bytes;
            CHECK((dtype == KvDtype::q8_0 ? decode_q8_0(last, i - 64) : decode_q4_0(last, i - 64)) == 0.0f);
        }
    }
    // q4_0's nibbles: element i low in byte i, element i + 16 high.
    std::vector<float> ramp(32);
    for (std::size_t i = 0; i < 32; ++i) ramp[i] = static_cast<float>(static_cast<int>(i % 16) - 8);
    std::vector<std::byte> block(34);  // room for a q8_0 block too, below
    float unused = 0;
    encode_kv_vector(KvDtype::q4_0, ramp.data(), 32, block.data(), &unused);
    CHECK(decode_f16(static_cast<std::uint16_t>(static_cast<unsigned>(block[0]) | static_cast<unsigned>(block[1]) << 8)) == 1.0f);
    for (std::size_t i = 0; i < 16; ++i) CHECK(static_cast<unsigned>(block[2 + i]) == (i | i << 4));
    std::vector<float> bad(32, 1.0f);
    bad[5] = std::numeric_limits<float>::infinity();
    std::vector<float> decoded(32);
    for (const KvDtype dtype : {KvDtype::q8_0, KvDtype::q4_0}) {
        encode_kv_vector(dtype, bad.data(), 32, block.data(), &unused);
        decode_kv_vector(dtype, block.data(), 32, 0.0f, decoded.data());
        CHECK(std::isnan(decoded[0]));  // not silently finite
    }
}

TEST_CASE("int8 maps a vector's largest magnitude to 127 and rounds the rest within half a step") {
    const auto x = random_vector(64, 11, 3.0f);
    std::vector<std::int8_t> q(x.size());
    const float scale = quantize_int8(x.data(), x.size(), q.data());
    float max_abs = 0;
    for (float v : x) max_abs = std::max(max_abs, std::fabs(v));
    CHECK(scale == max_abs / 127.0f);
    bool has_extreme = false;
    for (std::size_t i = 0; i < x.size(); ++i) {
        CHECK(std::abs(q[i]) <= 127);
        has_extreme = has_extreme || std::abs(q[i]) == 127;
        CHECK(std::fabs(static_cast<float>(q[i]) * scale - x[i]) <= 0.5f * scale * 1.0001f);
    }
    CHECK(has_extreme);
    std::vector<float> zeros(8, 0.0f);
    CHECK(quantize_int8(zeros.data(), zeros.size(), q.data()) == 0.0f);
    zeros[3] = std::numeric_limits<float>::infinity();
    CHECK(std::isnan(quantize_int8(zeros.data(), zeros.size(), q.data())));  // not silently finite
}

TEST_CASE("the block decoder of this build gives the scalar definition's bits, tails and padding included") {
    for (KvDtype dtype : reduced_dtypes) {
        for (std::size_t dim : {1u, 7u, 8u, 15u, 16u, 17u, 33u, 64u, 100u}) {
            const std::size_t n_rows = 5, src_stride = dim + 3, dst_stride = (dim + 15) / 16 * 16;
            const std::size_t row_bytes = kv_row_bytes(dtype, src_stride);
            const auto values = random_vector(n_rows * src_stride, 21 + dim, 4.0f);
            std::vector<std::byte> stored(n_rows * row_bytes);
            std::vector<float> scales(n_rows);
            for (std::size_t r = 0; r < n_rows; ++r) {
                encode_kv_vector(dtype, values.data() + r * src_stride, src_stride, stored.data() + r * row_bytes,
                                 &scales[r]);
            }
            std::vector<float> decoded(n_rows * dst_stride, -1.0f);
            decode_kv_block(dtype, stored.data(), src_stride, dtype == KvDtype::int8 ? scales.data() : nullptr, n_rows,
                            dim, decoded.data(), dst_stride);
            std::vector<float> expected(dim);
            for (std::size_t r = 0; r < n_rows; ++r) {
                decode_kv_vector(dtype, stored.data() + r * row_bytes, dim, scales[r], expected.data());
                CAPTURE(kv_dtype_info(dtype).name);
                CAPTURE(dim);
                for (std::size_t i = 0; i < dim; ++i) CHECK(same_bits(decoded[r * dst_stride + i], expected[i]));
                for (std::size_t i = dim; i < dst_stride; ++i) CHECK(decoded[r * dst_stride + i] == 0.0f);
            }
        }
    }
}

TEST_CASE("the vector decoders give the tables' bits for every e4m3 and e5m2 pattern, NaNs included") {
    // Two rows of the 256 patterns, the second reversed, so every pattern meets every lane.
    std::vector<std::uint8_t> patterns(512);
    for (std::size_t i = 0; i < 256; ++i) {
        patterns[i] = static_cast<std::uint8_t>(i);
        patterns[256 + i] = static_cast<std::uint8_t>(255 - i);
    }
    for (KvDtype dtype : {KvDtype::e4m3, KvDtype::e5m2}) {
        std::vector<float> decoded(512, -1.0f);
        decode_kv_block(dtype, patterns.data(), 256, nullptr, 2, 256, decoded.data(), 256);
        const auto& table = dtype == KvDtype::e4m3 ? e4m3_values : e5m2_values;
        CAPTURE(kv_dtype_info(dtype).name);
        std::size_t n_wrong = 0;
        for (std::size_t i = 0; i < patterns.size(); ++i) n_wrong += !same_bits(decoded[i], table[patterns[i]]);
        CHECK(n_wrong == 0);
    }
}

TEST_CASE("a reduced cache allocates kv_bytes, its scales included, and reads back what it stored") {
    for (KvDtype dtype : {KvDtype::f32, KvDtype::f16, KvDtype::bf16, KvDtype::int8, KvDtype::e4m3, KvDtype::e5m2,
                          KvDtype::q8_0, KvDtype::q4_0}) {
        ModelConfig config = make_config(2, 9, 48, 4, 2, 2);  // dh = 12: one partial block of q8_0 and q4_0
        config.kv_dtype = dtype;
        KvCache cache(config, config.seq_len);
        CHECK(cache.bytes() == kv_cache_bytes(config));
        const std::uint64_t vector_bytes = dtype == KvDtype::q8_0   ? 34
                                           : dtype == KvDtype::q4_0 ? 18
                                                                    : 12 * kv_element_bytes(dtype) + (dtype == KvDtype::int8 ? 4 : 0);
        CHECK(kv_cache_bytes(config) == 2ull * 2 * 2 * 9 * 2 * vector_bytes);
        const auto k = random_vector(12, 31), v = random_vector(12, 32);
        cache.store(1, 1, 1, 8, k.data(), v.data());
        std::vector<float> k_back(12), v_back(12), k_expected(12), k_stored(32);
        cache.load_key(1, 1, 1, 8, k_back.data());
        cache.load_value(1, 1, 1, 8, v_back.data());
        float scale = 0;
        encode_kv_vector(dtype, k.data(), 12, k_stored.data(), &scale);
        decode_kv_vector(dtype, k_stored.data(), 12, scale, k_expected.data());
        for (std::size_t i = 0; i < 12; ++i) CHECK(same_bits(k_back[i], k_expected[i]));
        // The floats' unit is relative to each element, the scaled integers' to their largest,
        // both within the vector's largest element times twice the unit.
        CHECK(relative_error(v_back, v) < 2 * kv_unit_roundoff(dtype) + 1e-7);
        if (dtype != KvDtype::f32) CHECK_THROWS_AS(cache.keys(0, 0, 0), std::logic_error);
    }
}

TEST_CASE("a converted cache holds the same elements as one filled vector by vector") {
    ModelConfig config = make_config(2, 70, 64, 4, 2, 2);  // 70 positions: more than one fill draw
    ModelConfig f32_config = config;
    KvCache reference(f32_config, config.seq_len);
    fill_cache_seeded(f32_config, reference, config.seq_len, 5);
    for (KvDtype dtype : reduced_dtypes) {
        config.kv_dtype = dtype;
        KvCache converted(config, config.seq_len), seeded(config, config.seq_len);
        converted.assign_converted(reference);
        fill_cache_seeded(config, seeded, config.seq_len, 5);  // the same values, converted as drawn
        CHECK(converted.length() == config.seq_len);
        std::vector<float> a(16), b(16);
        for (std::size_t layer = 0; layer < 2; ++layer) {
            for (std::size_t t = 0; t < config.seq_len; ++t) {
                converted.load_value(layer, 1, 1, t, a.data());
                seeded.load_value(layer, 1, 1, t, b.data());
                for (std::size_t i = 0; i < 16; ++i) REQUIRE(same_bits(a[i], b[i]));
                converted.load_key(layer, 0, 0, t, a.data());
                seeded.load_key(layer, 0, 0, t, b.data());
                for (std::size_t i = 0; i < 16; ++i) REQUIRE(same_bits(a[i], b[i]));
            }
        }
    }
}

TEST_CASE("attend_decode over a reduced cache matches its naive twin on every kernel of the build") {
    // MHA and small groups (2, 3, 4 rows) take attend_group_tiled's tiles, fused where dh is whole
    // vectors; groups of 8 and 16 rows the lanes kernel (on builds without AVX-512) over decoded
    // blocks; dh 20 leaves partial vectors (decoded), 128 the usual width.
    struct Shape {
        std::size_t dim, heads, kv_heads, head_dim;
    };
    // dh 256 is the longest head the AVX2 int8 tiles take, 512 beyond it (the f32 tiles).
    for (const Shape shape : {Shape{64, 4, 4, 16}, Shape{80, 4, 2, 20}, Shape{128, 4, 2, 32}, Shape{192, 6, 2, 32},
                              Shape{256, 8, 2, 32}, Shape{512, 16, 2, 32}, Shape{512, 16, 1, 32}, Shape{1024, 8, 8, 128},
                              Shape{1024, 16, 1, 64}, Shape{512, 2, 2, 256}, Shape{1024, 2, 2, 512}}) {
        for (KvDtype dtype : reduced_dtypes) {
            for (std::size_t n_ctx : {1u, 37u, 100u}) {
                ModelConfig config = make_config(2, n_ctx, shape.dim, shape.heads, shape.kv_heads, 1);
                config.kv_dtype = dtype;
                KvCache cache(config, n_ctx);
                fill_cache_seeded(config, cache, n_ctx, 9);
                const std::size_t q_stride = config.q_dim() + 3;
                const auto q = random_vector(config.n_batch * q_stride, 300);
                std::vector<float> out(config.n_batch * config.q_dim()), expected(out.size());
                for (std::size_t n_threads : {1u, 2u}) {
                    DecodeAttentionScratch scratch(config, n_ctx, n_threads);
                    const FlopCount flops = attend_decode(config, q.data(), q_stride, cache, 0, n_ctx, out.data(), scratch);
                    const FlopCount naive =
                        attend_decode_naive(config, q.data(), q_stride, cache, 0, n_ctx, expected.data(), scratch);
                    CAPTURE(kv_dtype_info(dtype).name);
                    CAPTURE(describe(config));
                    CAPTURE(n_threads);
                    // Both read the same decoded elements: what is left is f32 arithmetic, and
                    // the integer key tiles' query rounded to 16 bits (twin_tolerance).
                    CHECK(relative_error(out, expected) < twin_tolerance(dtype));
                    CHECK(flops.executed == expected_decode_executed(config, naive.executed, n_ctx, n_threads));
                }
            }
        }
    }
}

TEST_CASE("the 8-bit float scan finds the patterns their conversions fix up at every place of every row, and no other") {
    // Rows of bytes without the patterns (every other pattern in turn), 3 rows 200 bytes apart;
    // each of the 256 patterns at each place of each row; widths of whole 64- and 16-byte
    // vectors and of neither (the portable tiles' dh 20). e4m3 fixes up S.1111.111 (its NaN),
    // e5m2 S.11111.xx (its NaNs; its infinities too, though they need no fix).
    for (const KvDtype dtype : {KvDtype::e4m3, KvDtype::e5m2}) {
        const unsigned bits = dtype == KvDtype::e4m3 ? 0x7f : 0x7c;
        for (const std::size_t width : {4u, 20u, 16u, 32u, 64u, 128u}) {
            const std::size_t row_bytes = 200, n_rows = 3;
            std::vector<std::byte> rows(n_rows * row_bytes);
            for (std::size_t i = 0; i < rows.size(); ++i) {
                const auto b = static_cast<std::uint8_t>(i * 37 % 256);
                rows[i] = static_cast<std::byte>((b & bits) == bits ? 0x3c : b);
            }
            CAPTURE(kv_dtype_info(dtype).name);
            CAPTURE(width);
            REQUIRE_FALSE(simd::fp8_needs_fix(dtype, rows.data(), n_rows, row_bytes, width));
            std::size_t n_wrong = 0;
            for (std::size_t r = 0; r < n_rows; ++r) {
                for (std::size_t i = 0; i < width; ++i) {
                    std::byte& place = rows[r * row_bytes + i];
                    const std::byte kept = place;
                    for (unsigned pattern = 0; pattern < 256; ++pattern) {
                        place = static_cast<std::byte>(pattern);
                        n_wrong += simd::fp8_needs_fix(dtype, rows.data(), n_rows, row_bytes, width) != ((pattern & bits) == bits);
                    }
                    place = kept;
                }
            }
            CHECK(n_wrong == 0);
            // Bytes past the width, and past the rows, are not the scan's.
            rows[width] = static_cast<std::byte>(0x7f);
            rows[(n_rows - 1) * row_bytes + row_bytes - 1] = static_cast<std::byte>(0xff);
            CHECK_FALSE(simd::fp8_needs_fix(dtype, rows.data(), n_rows, row_bytes, width));
        }
    }
}

// attend_decode's outputs and its naive twin's for one query a sequence (q_dim() floats each)
// over the cache's first n_ctx positions.
std::pair<std::vector<float>, std::vector<float>> kernel_and_twin(const ModelConfig& config, const std::vector<float>& q,
                                                                  const KvCache& cache, std::size_t n_ctx, std::size_t n_threads) {
    std::vector<float> out(q.size()), expected(q.size());
    DecodeAttentionScratch scratch(config, n_ctx, n_threads);
    attend_decode(config, q.data(), config.q_dim(), cache, 0, n_ctx, out.data(), scratch);
    attend_decode_naive(config, q.data(), config.q_dim(), cache, 0, n_ctx, expected.data(), scratch);
    return {out, expected};
}

// A NaN in one key or value of head 2 at nan_position (MHA, 4 heads, 100 positions): the
// kernels' output has the naive twin's NaNs in head 2, none in the others, and there the twin's
// values.
void check_nan_stays_in_its_head(KvDtype dtype, std::size_t head_dim, bool in_values, std::size_t nan_position) {
    const std::size_t n_ctx = 100, heads = 4;
    ModelConfig config = make_config(1, n_ctx, heads * head_dim, heads, heads, 1);  // MHA: fused tiles
    config.kv_dtype = dtype;
    KvCache cache(config, n_ctx);
    fill_cache_seeded(config, cache, n_ctx, 9);
    std::vector<float> k(head_dim), v(head_dim);
    cache.load_key(0, 0, 2, nan_position, k.data());
    cache.load_value(0, 0, 2, nan_position, v.data());
    (in_values ? v : k)[head_dim - 1] = std::numeric_limits<float>::quiet_NaN();
    cache.store(0, 0, 2, nan_position, k.data(), v.data());
    const auto [out, expected] = kernel_and_twin(config, random_vector(config.q_dim(), 302), cache, n_ctx, 2);
    CAPTURE(kv_dtype_info(dtype).name);
    CAPTURE(head_dim);
    CAPTURE(in_values);
    CAPTURE(nan_position);
    for (std::size_t h = 0; h < heads; ++h) {
        const std::vector<float> head(out.data() + h * head_dim, out.data() + (h + 1) * head_dim);
        const std::vector<float> twin(expected.data() + h * head_dim, expected.data() + (h + 1) * head_dim);
        CAPTURE(h);
        const auto n_nan = std::count_if(head.begin(), head.end(), [](float x) { return std::isnan(x); });
        CHECK(n_nan == std::count_if(twin.begin(), twin.end(), [](float x) { return std::isnan(x); }));
        if (h == 2) {
            CHECK(n_nan > 0);
        } else {
            CHECK(n_nan == 0);
            CHECK(relative_error(head, twin) < twin_tolerance(dtype));
        }
    }
}

TEST_CASE("an 8-bit float NaN in one key or value makes its head's output NaN, as in the naive twin, and no other's") {
    // The fused tiles read a block without the NaN fix when a scan finds no NaN pattern in it:
    // the NaN must still reach the output wherever it lies in a block (first key, a middle one,
    // the last of a partial block), in keys or in values, for heads of one vector (dh 16), of
    // whole cache lines (dh 64, 128) and, on the portable tiles, of neither (dh 20).
    for (const KvDtype dtype : {KvDtype::e4m3, KvDtype::e5m2}) {
        for (const std::size_t head_dim : {16u, 20u, 64u, 128u}) {
            for (const bool in_values : {false, true}) {
                for (const std::size_t nan_position : {0u, 37u, 99u}) check_nan_stays_in_its_head(dtype, head_dim, in_values, nan_position);
            }
        }
    }
}

TEST_CASE("a NaN in one q8_0 or q4_0 key or value makes its head's output NaN, as in the naive twin, and no other's") {
    // The integer tiles (one query row, AVX2 and AVX-512: q4_0's keys, q8_0's on AVX2, both
    // types' values) leave a block whose scales make a NaN to the float tiles or carry it
    // through their scale: the NaN must reach the output wherever it lies, for heads of one
    // block column (dh 32), of two (64) and of two tiles of columns (256).
    for (const KvDtype dtype : {KvDtype::q8_0, KvDtype::q4_0}) {
        for (const std::size_t head_dim : {32u, 64u, 256u}) {
            for (const bool in_values : {false, true}) {
                for (const std::size_t nan_position : {0u, 37u, 99u}) check_nan_stays_in_its_head(dtype, head_dim, in_values, nan_position);
            }
        }
    }
}

TEST_CASE("q8_0 and q4_0 values under one overwhelming key match the naive twin, blocks of vanishing weight included") {
    // One key's score stands `gap` above the rest. The other blocks' weights (probability times
    // scale) are then about 1e-15 at 30 (integers in a tiny unit), 4e-33 at 70 and 1e-39 at 85
    // (below the integer value tiles' 2^-100, so the float tiles take them: 32767 over the
    // latter is no float) and 0 at 200; within the overwhelming key's block the other weights
    // round to a few steps or none.
    for (const KvDtype dtype : {KvDtype::q8_0, KvDtype::q4_0}) {
        for (const float gap : {30.0f, 70.0f, 85.0f, 200.0f}) {
            for (const std::size_t position : {0u, 70u}) {
                const std::size_t n_ctx = 150, heads = 2, head_dim = 64;
                ModelConfig config = make_config(1, n_ctx, heads * head_dim, heads, heads, 1);
                config.kv_dtype = dtype;
                KvCache cache(config, n_ctx);
                fill_cache_seeded(config, cache, n_ctx, 9);
                const auto q = random_vector(config.q_dim(), 303);
                // Key `position` of head 1 along its query, scaled to the score gap: q·k / √dh.
                double q_norm2 = 0.0;
                for (std::size_t d = 0; d < head_dim; ++d) q_norm2 += double(q[head_dim + d]) * q[head_dim + d];
                const double along = gap * std::sqrt(double(head_dim)) / q_norm2;
                std::vector<float> k(head_dim), v(head_dim);
                cache.load_value(0, 0, 1, position, v.data());
                for (std::size_t d = 0; d < head_dim; ++d) k[d] = static_cast<float>(along * q[head_dim + d]);
                cache.store(0, 0, 1, position, k.data(), v.data());
                const auto [out, expected] = kernel_and_twin(config, q, cache, n_ctx, 1);
                CAPTURE(kv_dtype_info(dtype).name);
                CAPTURE(gap);
                CAPTURE(position);
                CHECK(relative_error(out, expected) < twin_tolerance(dtype));
            }
        }
    }
}

TEST_CASE("keys and values of different types: each billed at its own size, the kernels equal their naive twin") {
    struct Shape {
        std::size_t dim, heads, kv_heads;
    };
    // MHA and a small group (fused tiles, each side converted in its own type), a large group
    // (the lanes kernel on AVX2 builds, over decoded blocks), dh 64 and 20 (partial blocks and
    // vectors, decoded).
    for (const Shape shape : {Shape{256, 4, 4}, Shape{256, 4, 2}, Shape{512, 8, 1}, Shape{80, 4, 2}}) {
        for (const KvDtypePair pair : mixed_pairs) {
            const std::size_t n_ctx = 45;
            ModelConfig config = make_config(2, n_ctx, shape.dim, shape.heads, shape.kv_heads, 1);
            config.set_kv_dtypes(pair.key, pair.value);
            CAPTURE(describe(config));
            KvCache cache(config, n_ctx);
            const std::uint64_t dh = config.head_dim();
            CHECK(cache.bytes() == kv_cache_bytes(config));
            CHECK(kv_cache_bytes(config) ==
                  2ull * n_ctx * shape.kv_heads * (kv_vector_bytes(pair.key, dh) + kv_vector_bytes(pair.value, dh)));
            fill_cache_seeded(config, cache, n_ctx, 9);
            const auto q = random_vector(config.n_batch * config.q_dim(), 301);
            std::vector<float> out(q.size()), expected(q.size());
            DecodeAttentionScratch scratch(config, n_ctx, 2);
            attend_decode(config, q.data(), config.q_dim(), cache, 0, n_ctx, out.data(), scratch);
            attend_decode_naive(config, q.data(), config.q_dim(), cache, 0, n_ctx, expected.data(), scratch);
            CHECK(relative_error(out, expected) < twin_tolerance(pair.key, pair.value));
        }
    }
}

TEST_CASE("a cache of keys and values apart reads back each in its own type") {
    ModelConfig config = make_config(1, 4, 128, 2, 2, 1);  // dh = 64
    config.set_kv_dtypes(KvDtype::q4_0, KvDtype::int8);
    KvCache cache(config, 4);
    CHECK(cache.key_dtype() == KvDtype::q4_0);
    CHECK(cache.value_dtype() == KvDtype::int8);
    CHECK(cache.key_scales(0, 0, 0) == nullptr);  // q4_0's scales are in its blocks
    CHECK(cache.value_scales(0, 0, 0) != nullptr);
    const auto k = random_vector(64, 51), v = random_vector(64, 52);
    cache.store(0, 0, 1, 2, k.data(), v.data());
    std::vector<float> k_back(64), v_back(64), expected(64), stored(64);
    float scale = 0;
    cache.load_key(0, 0, 1, 2, k_back.data());
    encode_kv_vector(KvDtype::q4_0, k.data(), 64, stored.data(), &scale);
    decode_kv_vector(KvDtype::q4_0, stored.data(), 64, 0.0f, expected.data());
    for (std::size_t i = 0; i < 64; ++i) CHECK(same_bits(k_back[i], expected[i]));
    cache.load_value(0, 0, 1, 2, v_back.data());
    CHECK(relative_error(v_back, v) < 2 * kv_unit_roundoff(KvDtype::int8));
    CHECK(describe(config).find("kv=q4_0/int8") != std::string::npos);
    ModelConfig latent = make_config(1, 4, 128, 2, 2, 1);
    latent.mla.kv_lora_rank = 16;
    latent.mla.rope_dim = 8;
    latent.mla.nope_dim = 8;
    latent.mla.v_head_dim = 8;
    latent.set_kv_dtypes(KvDtype::q8_0, KvDtype::f16);
    CHECK_THROWS_WITH_AS(validate(latent), doctest::Contains("--kv-dtype q8_0/f16"), ConfigError);
}

TEST_CASE("int8 keys at full scale against a full-scale query over the longest integer head do not overflow") {
    // Every key element quantizes to +127 or -128 and every query element to ±32767: the 32-bit
    // sums of AVX2's int8 tiles reach 32767 · 128 · 256 = 1.07e9, below 2^31. Alternate signs
    // make the largest sums; a second head with all-equal signs checks the other extreme.
    const std::size_t head_dim = 256, n_ctx = 40;
    ModelConfig config = make_config(1, n_ctx, 2 * head_dim, 2, 2, 1);
    config.kv_dtype = KvDtype::int8;
    KvCache cache(config, n_ctx);
    std::vector<float> key(head_dim), value(head_dim);
    for (std::size_t t = 0; t < n_ctx; ++t) {
        for (std::size_t kv_head = 0; kv_head < 2; ++kv_head) {
            for (std::size_t d = 0; d < head_dim; ++d) {
                const float sign = kv_head == 0 && d % 2 == 1 ? -1.0f : 1.0f;
                key[d] = sign * (t % 2 == 0 ? 1.0f : -1.0f);
                value[d] = static_cast<float>(t) - static_cast<float>(d % 7);
            }
            cache.store(0, 0, kv_head, t, key.data(), value.data());
        }
    }
    cache.extend_to(n_ctx);
    std::vector<float> q(config.qkv_dim());
    for (std::size_t d = 0; d < 2 * head_dim; ++d) q[d] = d % 2 == 1 && d < head_dim ? -4.0f : 4.0f;
    std::vector<float> out(config.q_dim()), expected(out.size());
    DecodeAttentionScratch scratch(config, n_ctx, 1);
    attend_decode(config, q.data(), config.qkv_dim(), cache, 0, n_ctx, out.data(), scratch);
    attend_decode_naive(config, q.data(), config.qkv_dim(), cache, 0, n_ctx, expected.data(), scratch);
    CHECK(relative_error(out, expected) < twin_tolerance(KvDtype::int8));
}

TEST_CASE("a step over a reduced cache stays within its type's tolerance of the f32 step, and is not f32") {
    for (KvDtype dtype : reduced_dtypes) {
        GridPoint point{make_config(2, 300, 256, 8, 2, 2), 2, true};
        point.config.kv_dtype = dtype;
        const PointMeasurement measured = run_point(point, false, false);
        REQUIRE(measured.kv_rel_error);
        CAPTURE(kv_dtype_info(dtype).name);
        CAPTURE(*measured.kv_rel_error);
        // The error is the type's: far above f32's rounding, and of the order of one unit
        // roundoff of the type (docs/model.md), half the tolerance at most.
        CHECK(*measured.kv_rel_error > 100 * kv_unit_roundoff(KvDtype::f32));
        CHECK(*measured.kv_rel_error < kv_equivalence_tolerance(dtype, point.config.head_dim()) / 2);
    }
    for (const KvDtypePair pair : mixed_pairs) {
        GridPoint point{make_config(1, 100, 256, 8, 2, 1), 2, true};
        point.config.set_kv_dtypes(pair.key, pair.value);
        const PointMeasurement measured = run_point(point, false, false);
        REQUIRE(measured.kv_rel_error);
        CAPTURE(describe(point.config));
        CHECK(*measured.kv_rel_error < kv_equivalence_tolerance(pair.key, pair.value, point.config.head_dim()) / 2);
    }
}

TEST_CASE("--verify holds a reduced cache against the uncached forward within its tolerance") {
    GridPoint point{make_config(1, 64, 128, 4, 1, 3), 1, true};
    point.config.kv_dtype = KvDtype::f16;
    const PointMeasurement measured = run_point(point, true, true);
    REQUIRE(measured.verify_rel_error);
    CHECK(*measured.verify_rel_error > 1e-6);
    CHECK(*measured.verify_rel_error < kv_equivalence_tolerance(KvDtype::f16, 32));
    REQUIRE(measured.uncached);  // the first (only) type times the uncached path
    for (const KvDtypePair pair : {KvDtypePair{KvDtype::q4_0}, KvDtypePair{KvDtype::e4m3}, KvDtypePair{KvDtype::q8_0, KvDtype::e5m2}}) {
        GridPoint block_point{make_config(1, 40, 128, 4, 2, 2), 1, true};
        block_point.config.set_kv_dtypes(pair.key, pair.value);
        const PointMeasurement block_measured = run_point(block_point, true, true);
        REQUIRE(block_measured.verify_rel_error);
        CAPTURE(describe(block_point.config));
        CHECK(*block_measured.verify_rel_error > 100 * kv_unit_roundoff(KvDtype::f32));  // the cache is reduced
        CHECK(*block_measured.verify_rel_error < kv_equivalence_tolerance(pair.key, pair.value, 32));
    }
}

TEST_CASE("a cached step's bytes count the cache at its own element size, the uncached step's at f32") {
    ModelConfig config = make_config(4, 1000, 512, 8, 2, 3);  // dh = 64
    const std::uint64_t f32_cached = step_bytes(config, DecodePath::cached);
    const std::uint64_t f32_uncached = step_bytes(config, DecodePath::uncached);
    const std::uint64_t kv_elements = 2ull * 3 * 4 * 1000 * 2 * 64;  // 2·L·B·N·G·dh
    config.kv_dtype = KvDtype::f16;
    CHECK(step_bytes(config, DecodePath::cached) == f32_cached - kv_elements * 2);
    CHECK(step_bytes(config, DecodePath::uncached) == f32_uncached);
    config.kv_dtype = KvDtype::int8;
    CHECK(step_bytes(config, DecodePath::cached) == f32_cached - kv_elements * 3 + kv_elements / 64 * 4);
    CHECK(step_flops(config, DecodePath::cached) == step_flops(make_config(4, 1000, 512, 8, 2, 3), DecodePath::cached));
}

TEST_CASE("a grid over cache types times the uncached path once per configuration") {
    SweepSpec spec;
    spec.seq = {128, 256};
    spec.dim = {64};
    spec.heads = {4};
    spec.kv_heads = {4, 1};
    spec.kv_dtypes = {KvDtype::f16, KvDtype::f32, KvDtype::int8};
    const Grid grid = expand(spec);
    REQUIRE(grid.points.size() == 12);
    for (std::size_t i = 0; i < grid.points.size(); ++i) {
        CHECK(grid.points[i].config.kv_dtype == spec.kv_dtypes[i % 3]);
        CHECK(grid.points[i].times_uncached == (i % 3 == 0));
    }
    ModelConfig fp8 = make_config(1, 8, 64, 4, 4, 1);
    fp8.kv_dtype = KvDtype::fp8;
    CHECK_THROWS_WITH_AS(validate(fp8), doctest::Contains("--kv-dtype fp8"), ConfigError);
}

TEST_CASE("a reduced cache's speedup is taken against the uncached row of the same configuration") {
    ResultRow uncached, f16, other;
    uncached.path = DecodePath::uncached;
    uncached.config = make_config(1, 64, 64, 4, 4, 1);
    uncached.stats.median_ns = 1000;
    f16.config = uncached.config;
    f16.config.kv_dtype = KvDtype::f16;
    f16.kv_dtype = "f16";
    f16.stats.median_ns = 100;
    other = f16;
    other.config.seq_len = 128;  // no uncached row of its own shape
    std::vector<ResultRow> rows{f16, uncached, other};
    fill_speedups_across_kv_dtypes(rows);
    REQUIRE(rows[0].speedup);
    CHECK(*rows[0].speedup == doctest::Approx(10.0));
    CHECK_FALSE(rows[2].speedup);
}
