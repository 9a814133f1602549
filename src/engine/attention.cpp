// The cached step's attention: a register-blocked online-softmax kernel (attend_chunk) run
// as per (batch, KV head, context slice) tasks on the OpenMP pool, slices merged in fixed order.
#include "kvbench/engine/attention.hpp"

#include "attention_grouped.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
// GCC 12's AVX-512 intrinsics pass an unset vector as the unused merge source, which
// -Wuninitialized reports once they are inlined (GCC bug 105593, fixed in GCC 13).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

namespace kvbench {
namespace {

// Cephes' expf: e^x = 2^k · e^r with k = round(x·log2 e), r = x - k·ln2 in [-ln2/2, ln2/2],
// e^r ≈ 1 + r + r²·P(r). ln2 is split in two so that k·ln2_hi is exact (ln2_hi has 9 bits).
constexpr float exp_log2e = 1.44269504088896341f;
constexpr float exp_ln2_hi = 0.693359375f;
constexpr float exp_ln2_lo = -2.12194440e-4f;
constexpr float exp_p0 = 1.9875691500e-4f;
constexpr float exp_p1 = 1.3981999507e-3f;
constexpr float exp_p2 = 8.3334519073e-3f;
constexpr float exp_p3 = 4.1665795894e-2f;
constexpr float exp_p4 = 1.6666665459e-1f;
constexpr float exp_p5 = 5.0000001201e-1f;
// Below this e^x is subnormal: flushed to 0, which also maps masked (-inf) scores to 0.
constexpr float exp_lowest = -87.33654475f;
// Above this e^x overflows float.
constexpr float exp_highest = 88.3762626647949f;

constexpr float minus_infinity = -std::numeric_limits<float>::infinity();

// Lanes of the widest vector the kernel uses; the workspace pads rows to it.
constexpr std::size_t max_lanes = 16;

// Vector primitives of one instruction set; the kernel below is written once against them.
// Register tiles: score rows × key vectors and output rows × output vectors stay within the
// register file (32 zmm, 16 ymm) with room for the operands being broadcast and loaded.
#if defined(__AVX512F__)
struct Simd {
    using Vec = __m512;
    using Mask = __mmask16;
    static constexpr std::size_t width = 16;
    static constexpr std::size_t registers = 32;
    static constexpr std::size_t key_block = 32;   // keys per block: 2 vectors per score row
    static constexpr std::size_t score_rows = 12;  // 12 × 2 score accumulators
    static constexpr std::size_t dot_rows_max = 8; // up to here, dot tiles beat transposing K
    static constexpr std::size_t out_rows = 12;    // output tiles: up to 12 rows (all of a block's
    static constexpr std::size_t out_vecs = 8;     // values read once) and 8 vectors, as registers allow

    static Vec zero() { return _mm512_setzero_ps(); }
    static Vec set1(float x) { return _mm512_set1_ps(x); }
    static Vec load(const float* p) { return _mm512_loadu_ps(p); }
    static Vec load(const float* p, Mask m) { return _mm512_maskz_loadu_ps(m, p); }
    static void store(float* p, Vec v) { _mm512_storeu_ps(p, v); }
    static void store(float* p, Vec v, Mask m) { _mm512_mask_storeu_ps(p, m, v); }
    static Vec add(Vec a, Vec b) { return _mm512_add_ps(a, b); }
    static Vec sub(Vec a, Vec b) { return _mm512_sub_ps(a, b); }
    static Vec mul(Vec a, Vec b) { return _mm512_mul_ps(a, b); }
    static Vec max(Vec a, Vec b) { return _mm512_max_ps(a, b); }
    static Vec fma(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
    // Lanes [0, n), n <= width.
    static Mask first(std::size_t n) { return static_cast<Mask>((1u << n) - 1u); }
    static Vec select(Mask m, Vec a, Vec otherwise) { return _mm512_mask_mov_ps(otherwise, m, a); }
    static float reduce_max(Vec v) { return _mm512_reduce_max_ps(v); }
    static float reduce_add(Vec v) { return _mm512_reduce_add_ps(v); }
    // dst[0, count) = lanes [first, first + count) of v.
    static void store_lanes(float* dst, Vec v, std::size_t first, std::size_t count) {
        const __m512i index = _mm512_add_epi32(
            _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
            _mm512_set1_epi32(static_cast<int>(first)));
        store(dst, _mm512_permutexvar_ps(index, v), Simd::first(count));
    }

    // Lane j of the result = Σ of the lanes of v[j]: pairs, then quads, then 128-bit lanes,
    // each stage adding two shuffles of a pair, 30 shuffles in all.
    static Vec reduce_lanes(Vec (&v)[width]) {
        Vec pairs[8], quads[4], halves[2];
        for (std::size_t i = 0; i < 8; ++i) {
            pairs[i] = add(_mm512_unpacklo_ps(v[2 * i], v[2 * i + 1]), _mm512_unpackhi_ps(v[2 * i], v[2 * i + 1]));
        }
        for (std::size_t i = 0; i < 4; ++i) {
            quads[i] = add(_mm512_shuffle_ps(pairs[2 * i], pairs[2 * i + 1], 0x44),
                           _mm512_shuffle_ps(pairs[2 * i], pairs[2 * i + 1], 0xEE));
        }
        for (std::size_t i = 0; i < 2; ++i) {
            halves[i] = add(_mm512_shuffle_f32x4(quads[2 * i], quads[2 * i + 1], 0x88),
                            _mm512_shuffle_f32x4(quads[2 * i], quads[2 * i + 1], 0xDD));
        }
        return add(_mm512_shuffle_f32x4(halves[0], halves[1], 0x88),
                   _mm512_shuffle_f32x4(halves[0], halves[1], 0xDD));
    }

    static Vec exp(Vec x) {
        // max/min take x second so a NaN passes through.
        const Vec clamped = _mm512_min_ps(set1(exp_highest), _mm512_max_ps(set1(exp_lowest), x));
        const Vec k = _mm512_roundscale_ps(mul(clamped, set1(exp_log2e)),
                                           _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        Vec r = _mm512_fnmadd_ps(k, set1(exp_ln2_hi), clamped);
        r = _mm512_fnmadd_ps(k, set1(exp_ln2_lo), r);
        Vec p = fma(set1(exp_p0), r, set1(exp_p1));
        p = fma(p, r, set1(exp_p2));
        p = fma(p, r, set1(exp_p3));
        p = fma(p, r, set1(exp_p4));
        p = fma(p, r, set1(exp_p5));
        p = add(fma(p, mul(r, r), r), set1(1.0f));
        const Mask kept = _mm512_cmp_ps_mask(x, set1(exp_lowest), _CMP_NLT_UQ);
        return _mm512_maskz_mov_ps(kept, _mm512_scalef_ps(p, k));
    }

    // rows[i][j] -> rows[j][i]: unpack pairs, then 64-bit pairs, then 128-bit lanes twice.
    static void transpose(Vec (&rows)[width]) {
        Vec t[width];
        for (std::size_t i = 0; i < width; i += 2) {
            t[i] = _mm512_unpacklo_ps(rows[i], rows[i + 1]);
            t[i + 1] = _mm512_unpackhi_ps(rows[i], rows[i + 1]);
        }
        for (std::size_t i = 0; i < width; i += 4) {
            rows[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
            rows[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
            rows[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
            rows[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
        }
        for (std::size_t i = 0; i < width; i += 8) {
            for (std::size_t j = 0; j < 4; ++j) {
                t[i + j] = _mm512_shuffle_f32x4(rows[i + j], rows[i + j + 4], 0x88);
                t[i + j + 4] = _mm512_shuffle_f32x4(rows[i + j], rows[i + j + 4], 0xDD);
            }
        }
        for (std::size_t j = 0; j < 8; ++j) {
            rows[j] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0x88);
            rows[j + 8] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0xDD);
        }
    }
};
#elif defined(__AVX2__) && defined(__FMA__)
struct Simd {
    using Vec = __m256;
    using Mask = __m256i;
    static constexpr std::size_t width = 8;
    static constexpr std::size_t registers = 16;
    static constexpr std::size_t key_block = 16;
    static constexpr std::size_t score_rows = 5;  // 5 × 2 score accumulators
    static constexpr std::size_t dot_rows_max = 8;
    static constexpr std::size_t out_rows = 6;
    static constexpr std::size_t out_vecs = 8;

    static Vec zero() { return _mm256_setzero_ps(); }
    static Vec set1(float x) { return _mm256_set1_ps(x); }
    static Vec load(const float* p) { return _mm256_loadu_ps(p); }
    static Vec load(const float* p, Mask m) { return _mm256_maskload_ps(p, m); }
    static void store(float* p, Vec v) { _mm256_storeu_ps(p, v); }
    static void store(float* p, Vec v, Mask m) { _mm256_maskstore_ps(p, m, v); }
    static Vec add(Vec a, Vec b) { return _mm256_add_ps(a, b); }
    static Vec sub(Vec a, Vec b) { return _mm256_sub_ps(a, b); }
    static Vec mul(Vec a, Vec b) { return _mm256_mul_ps(a, b); }
    static Vec max(Vec a, Vec b) { return _mm256_max_ps(a, b); }
    static Vec fma(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
    static Mask first(std::size_t n) {
        return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                                  _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    }
    static Vec select(Mask m, Vec a, Vec otherwise) {
        return _mm256_blendv_ps(otherwise, a, _mm256_castsi256_ps(m));
    }
    static float reduce_max(Vec v) {
        __m128 x = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        x = _mm_max_ps(x, _mm_movehl_ps(x, x));
        x = _mm_max_ss(x, _mm_movehdup_ps(x));
        return _mm_cvtss_f32(x);
    }
    static float reduce_add(Vec v) {
        __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        x = _mm_add_ps(x, _mm_movehl_ps(x, x));
        x = _mm_add_ss(x, _mm_movehdup_ps(x));
        return _mm_cvtss_f32(x);
    }
    static void store_lanes(float* dst, Vec v, std::size_t first, std::size_t count) {
        const __m256i index = _mm256_add_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                               _mm256_set1_epi32(static_cast<int>(first)));
        store(dst, _mm256_permutevar8x32_ps(v, index), Simd::first(count));
    }
    static Vec reduce_lanes(Vec (&v)[width]) {
        Vec pairs[4], quads[2];
        for (std::size_t i = 0; i < 4; ++i) {
            pairs[i] = add(_mm256_unpacklo_ps(v[2 * i], v[2 * i + 1]), _mm256_unpackhi_ps(v[2 * i], v[2 * i + 1]));
        }
        for (std::size_t i = 0; i < 2; ++i) {
            quads[i] = add(_mm256_shuffle_ps(pairs[2 * i], pairs[2 * i + 1], 0x44),
                           _mm256_shuffle_ps(pairs[2 * i], pairs[2 * i + 1], 0xEE));
        }
        return add(_mm256_permute2f128_ps(quads[0], quads[1], 0x20),
                   _mm256_permute2f128_ps(quads[0], quads[1], 0x31));
    }

    static Vec exp(Vec x) {
        const Vec clamped = _mm256_min_ps(set1(exp_highest), _mm256_max_ps(set1(exp_lowest), x));
        const Vec k = _mm256_round_ps(mul(clamped, set1(exp_log2e)),
                                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        Vec r = _mm256_fnmadd_ps(k, set1(exp_ln2_hi), clamped);
        r = _mm256_fnmadd_ps(k, set1(exp_ln2_lo), r);
        Vec p = fma(set1(exp_p0), r, set1(exp_p1));
        p = fma(p, r, set1(exp_p2));
        p = fma(p, r, set1(exp_p3));
        p = fma(p, r, set1(exp_p4));
        p = fma(p, r, set1(exp_p5));
        p = add(fma(p, mul(r, r), r), set1(1.0f));
        // k is in [-126, 127] after the clamp, so 2^k is a normal float built from its exponent bits.
        const __m256i biased = _mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127));
        const Vec scaled = mul(p, _mm256_castsi256_ps(_mm256_slli_epi32(biased, 23)));
        return _mm256_and_ps(scaled, _mm256_cmp_ps(x, set1(exp_lowest), _CMP_NLT_UQ));
    }

    static void transpose(Vec (&rows)[width]) {
        Vec t[width];
        for (std::size_t i = 0; i < width; i += 2) {
            t[i] = _mm256_unpacklo_ps(rows[i], rows[i + 1]);
            t[i + 1] = _mm256_unpackhi_ps(rows[i], rows[i + 1]);
        }
        for (std::size_t i = 0; i < width; i += 4) {
            rows[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
            rows[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
            rows[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
            rows[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
        }
        for (std::size_t j = 0; j < 4; ++j) {
            t[j] = _mm256_permute2f128_ps(rows[j], rows[j + 4], 0x20);
            t[j + 4] = _mm256_permute2f128_ps(rows[j], rows[j + 4], 0x31);
        }
        std::copy(std::begin(t), std::end(t), std::begin(rows));
    }
};
#else
// Portable fallback: one lane, the same algorithm and polynomial.
struct Simd {
    using Vec = float;
    using Mask = bool;
    static constexpr std::size_t width = 1;
    static constexpr std::size_t registers = 16;
    static constexpr std::size_t key_block = 8;
    static constexpr std::size_t score_rows = 4;
    static constexpr std::size_t dot_rows_max = 8;
    static constexpr std::size_t out_rows = 4;
    static constexpr std::size_t out_vecs = 4;

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
#endif

using Vec = Simd::Vec;
constexpr std::size_t lanes = Simd::width;
constexpr std::size_t key_block = Simd::key_block;
constexpr std::size_t block_vecs = key_block / lanes;  // vectors per score row of a block
static_assert(key_block % lanes == 0 && key_block <= chunk_key_block && lanes <= max_lanes);

std::size_t round_up(std::size_t n, std::size_t multiple) {
    return (n + multiple - 1) / multiple * multiple;
}

// Lanes of vector `index` that hold one of the first n elements.
Simd::Mask lanes_below(std::size_t n, std::size_t index) {
    const std::size_t start = index * lanes;
    return Simd::first(n > start ? std::min(lanes, n - start) : 0);
}

// Keys and values of a later block, requested a few cache lines at a time between the
// current block's loads. The kernel reads a block in bursts separated by arithmetic, so the
// hardware prefetcher, which follows demand, falls behind; and a burst of software
// prefetches overflows the miss buffers and is mostly dropped (measured on the Zen 5 host:
// reading 32 KiB from DRAM took 4000 cycles, 2300 after a burst of prefetches, 670 after the
// same prefetches issued 16 lines at a time). Prefetching into L2 only (t1) measured no better.
class BlockPrefetcher {
public:
    // Blocks ahead of the one being computed.
    static constexpr std::size_t distance = 1;

    // Spreads the lines of the block at first_key (none past the context) over `calls` calls.
    void start(const ChunkProblem& problem, std::size_t first_key, std::size_t calls) {
        calls_ = 0;
        n_segments_ = 0;
        if (first_key >= problem.n_ctx) return;
        const std::size_t n_keys = std::min(key_block, problem.n_ctx - first_key);
        key_ = reinterpret_cast<const char*>(problem.keys + first_key * problem.kv_stride);
        value_ = reinterpret_cast<const char*>(problem.values + first_key * problem.kv_stride);
        // Contiguous rows (the KV cache) make one segment; strided rows one segment each.
        const bool contiguous = problem.kv_stride == problem.head_dim;
        n_segments_ = contiguous ? 1 : n_keys;
        segment_bytes_ = (contiguous ? n_keys : 1) * problem.head_dim * sizeof(float);
        stride_bytes_ = problem.kv_stride * sizeof(float);
        offset_ = 0;
        const std::size_t n_lines = n_segments_ * ((segment_bytes_ + line_bytes - 1) / line_bytes);
        per_call_ = (n_lines + calls - 1) / std::max<std::size_t>(1, calls);
    }

    void issue() {
        ++calls_;
        for (std::size_t i = 0; i < per_call_ && n_segments_ > 0; ++i) {
            // The same line of the keys and of the values.
            __builtin_prefetch(key_ + offset_, 0, 3);
            __builtin_prefetch(value_ + offset_, 0, 3);
            offset_ += line_bytes;
            if (offset_ >= segment_bytes_) {
                offset_ = 0;
                key_ += stride_bytes_;
                value_ += stride_bytes_;
                --n_segments_;
            }
        }
    }

    // Calls since start(): how many the next block will make, as blocks are alike.
    std::size_t calls() const { return calls_; }

private:
    static constexpr std::size_t line_bytes = 64;
    const char* key_ = nullptr;    // current segment of the keys
    const char* value_ = nullptr;  // current segment of the values
    std::size_t n_segments_ = 0;   // segments left, the current one included
    std::size_t segment_bytes_ = 0;
    std::size_t stride_bytes_ = 0;
    std::size_t offset_ = 0;       // bytes into the current segment
    std::size_t per_call_ = 0;     // lines of K (and as many of V) per call
    std::size_t calls_ = 0;
};

// Everything the tiles of one key block need.
struct BlockState {
    const ChunkProblem& problem;
    ChunkWorkspace& ws;
    BlockPrefetcher& prefetcher;
    std::size_t first_key;    // index of the block's first key in the chunk
    std::size_t n_keys;       // keys in this block, <= key_block
    const float* keys;        // (n_keys, problem.kv_stride): the block's keys in place
    const float* values;      // (n_keys, value_stride): the block's values, packed or in place
    std::size_t value_stride;
};

// Keys [0, n_keys) of the block, transposed to keys_t (head_dim, chunk_key_block) so that
// a score row is computed as whole vectors along the keys. Key vectors past n_keys are not
// written: their scores are masked.
void pack_key_block(BlockState& st) {
    const std::size_t dim = st.problem.head_dim;
    const std::size_t stride = st.problem.kv_stride;
    float* keys_t = st.ws.keys_t();
    Vec rows[lanes];
    for (std::size_t t0 = 0; t0 < st.n_keys; t0 += lanes) {
        for (std::size_t d0 = 0; d0 < dim; d0 += lanes) {
            const std::size_t n_dims = std::min(lanes, dim - d0);
            const Simd::Mask dims = Simd::first(n_dims);
            for (std::size_t i = 0; i < lanes; ++i) {
                rows[i] = t0 + i < st.n_keys ? Simd::load(st.keys + (t0 + i) * stride + d0, dims) : Simd::zero();
            }
            st.prefetcher.issue();
            Simd::transpose(rows);
            for (std::size_t j = 0; j < n_dims; ++j) Simd::store(keys_t + (d0 + j) * chunk_key_block + t0, rows[j]);
        }
    }
}

// Values [0, n_keys) of the block as (n_keys, padded_dim) rows, zero past head_dim, so the
// output tiles read whole vectors from one small contiguous buffer.
void pack_value_block(BlockState& st) {
    const std::size_t padded_dim = st.ws.padded_dim();
    float* packed = st.ws.values();
    for (std::size_t t = 0; t < st.n_keys; ++t) {
        for (std::size_t v = 0; v * lanes < padded_dim; ++v) {
            Simd::store(packed + t * padded_dim + v * lanes,
                        Simd::load(st.values + t * st.value_stride + v * lanes, lanes_below(st.problem.head_dim, v)));
        }
    }
    st.values = packed;
    st.value_stride = padded_dim;
}

// Scores of n_rows rows × (lanes / n_rows) keys from dot products along head_dim: one
// accumulator per (row, key), reduced to one vector of scores at the end. For a few rows
// this is cheaper than transposing the keys (a 16×16 transpose is 64 shuffles, 1 per cycle).
template <std::size_t n_rows>
void dot_score_tile(BlockState& st, std::size_t first_row, std::size_t first_key) {
    static_assert(lanes % n_rows == 0);
    constexpr std::size_t n_cols = lanes / n_rows;
    const std::size_t dim = st.problem.head_dim;
    const std::size_t padded_dim = st.ws.padded_dim();
    const float* queries = st.ws.queries() + first_row * padded_dim;
    // Keys past the block repeat its last key; their scores are masked later.
    const float* keys[n_cols];
    for (std::size_t j = 0; j < n_cols; ++j) {
        keys[j] = st.keys + std::min(first_key + j, st.n_keys - 1) * st.problem.kv_stride;
    }
    Vec acc[lanes];  // acc[i · n_cols + j]: row i, key j
    for (Vec& a : acc) a = Simd::zero();
    for (std::size_t d0 = 0; d0 < dim; d0 += lanes) {
        const Simd::Mask dims = Simd::first(std::min(lanes, dim - d0));
        Vec q[n_rows];
        for (std::size_t i = 0; i < n_rows; ++i) q[i] = Simd::load(queries + i * padded_dim + d0);
        for (std::size_t j = 0; j < n_cols; ++j) {
            const Vec k = Simd::load(keys[j] + d0, dims);
            for (std::size_t i = 0; i < n_rows; ++i) acc[i * n_cols + j] = Simd::fma(q[i], k, acc[i * n_cols + j]);
        }
        st.prefetcher.issue();
    }
    const Vec scores = Simd::reduce_lanes(acc);
    const std::size_t n_valid = std::min(n_cols, key_block - first_key);
    for (std::size_t i = 0; i < n_rows; ++i) {
        Simd::store_lanes(st.ws.probs() + (first_row + i) * chunk_key_block + first_key, scores, i * n_cols, n_valid);
    }
}

// Scores of rows [first_row, first_row + n_rows) against the whole block from the transposed
// keys: an (n_rows × key_block) register tile, one broadcast query element × one key vector
// per FMA.
template <std::size_t n_rows>
void transposed_score_tile(BlockState& st, std::size_t first_row) {
    const std::size_t padded_dim = st.ws.padded_dim();
    Vec acc[n_rows][block_vecs];
    for (auto& row : acc) {
        for (Vec& a : row) a = Simd::zero();
    }
    const float* queries = st.ws.queries() + first_row * padded_dim;
    const float* keys_t = st.ws.keys_t();
    for (std::size_t d = 0; d < st.problem.head_dim; ++d) {
        Vec k[block_vecs];
        for (std::size_t v = 0; v < block_vecs; ++v) k[v] = Simd::load(keys_t + d * chunk_key_block + v * lanes);
        for (std::size_t i = 0; i < n_rows; ++i) {
            const Vec q = Simd::set1(queries[i * padded_dim + d]);
            for (std::size_t v = 0; v < block_vecs; ++v) acc[i][v] = Simd::fma(q, k[v], acc[i][v]);
        }
        st.prefetcher.issue();
    }
    for (std::size_t i = 0; i < n_rows; ++i) {
        float* scores = st.ws.probs() + (first_row + i) * chunk_key_block;
        for (std::size_t v = 0; v < block_vecs; ++v) Simd::store(scores + v * lanes, acc[i][v]);
    }
}

// Online softmax of one row's block scores (in probs): the running max moves to m_new, the
// row's earlier sum and outputs are rescaled by e^(m_old - m_new) (the outputs in the output
// tiles), and the scores become this block's probabilities e^(s - m_new).
void update_softmax_row(BlockState& st, std::size_t row) {
    ChunkWorkspace& ws = st.ws;
    float* probs = ws.probs() + row * chunk_key_block;
    Vec scores[block_vecs];
    Vec block_max = Simd::set1(minus_infinity);
    for (std::size_t v = 0; v < block_vecs; ++v) {
        // Lanes past the block's last key hold stale scores: mask them out.
        scores[v] = Simd::select(lanes_below(st.n_keys, v), Simd::load(probs + v * lanes), Simd::set1(minus_infinity));
        block_max = Simd::max(block_max, scores[v]);
    }
    const float old_max = ws.row_max()[row];
    const float new_max = std::max(old_max, Simd::reduce_max(block_max));
    const float rescale = std::exp(old_max - new_max);  // 0 on the first block: old_max = -inf
    const Vec shift = Simd::set1(new_max);
    Vec sums = Simd::mul(Simd::load(ws.lane_sums() + row * max_lanes), Simd::set1(rescale));
    for (std::size_t v = 0; v < block_vecs; ++v) {
        const Vec p = Simd::exp(Simd::sub(scores[v], shift));
        Simd::store(probs + v * lanes, p);
        sums = Simd::add(sums, p);
    }
    Simd::store(ws.lane_sums() + row * max_lanes, sums);
    ws.row_max()[row] = new_max;
    ws.rescale()[row] = rescale;
}

// outputs[r][v-range] = rescale[r] · outputs[r][v-range] + Σ_t probs[r][t] · values[t][v-range]
// for n_rows rows × n_vecs vectors of the output, held in registers across the block's keys.
template <std::size_t n_rows, std::size_t n_vecs>
void output_tile(BlockState& st, std::size_t first_row, std::size_t first_vec) {
    const std::size_t padded_dim = st.ws.padded_dim();
    Vec acc[n_rows][n_vecs];
    float* outputs = st.ws.outputs() + first_row * padded_dim + first_vec * lanes;
    const float* probs = st.ws.probs() + first_row * chunk_key_block;
    for (std::size_t i = 0; i < n_rows; ++i) {
        const Vec rescale = Simd::set1(st.ws.rescale()[first_row + i]);
        for (std::size_t c = 0; c < n_vecs; ++c) {
            acc[i][c] = Simd::mul(Simd::load(outputs + i * padded_dim + c * lanes), rescale);
        }
    }
    const float* values = st.values + first_vec * lanes;
    for (std::size_t t = 0; t < st.n_keys; ++t) {
        Vec v[n_vecs];
        for (std::size_t c = 0; c < n_vecs; ++c) v[c] = Simd::load(values + t * st.value_stride + c * lanes);
        for (std::size_t i = 0; i < n_rows; ++i) {
            const Vec p = Simd::set1(probs[i * chunk_key_block + t]);
            for (std::size_t c = 0; c < n_vecs; ++c) acc[i][c] = Simd::fma(p, v[c], acc[i][c]);
        }
        st.prefetcher.issue();
    }
    for (std::size_t i = 0; i < n_rows; ++i) {
        for (std::size_t c = 0; c < n_vecs; ++c) Simd::store(outputs + i * padded_dim + c * lanes, acc[i][c]);
    }
}

// Widest output tile for n_rows rows: accumulators, one row of values and a broadcast
// fit in the register file.
constexpr std::size_t output_vecs_for(std::size_t n_rows) {
    return std::min(Simd::out_vecs, (Simd::registers - 1) / (n_rows + 1));
}

// Tables of the tile functions by size, so a runtime tile shape picks a compiled one.
using TransposedTileFn = void (*)(BlockState&, std::size_t);
using OutputTileFn = void (*)(BlockState&, std::size_t, std::size_t);

template <std::size_t... i>
constexpr std::array<TransposedTileFn, sizeof...(i)> make_transposed_tiles(std::index_sequence<i...>) {
    return {&transposed_score_tile<i + 1>...};
}
constexpr auto transposed_tiles = make_transposed_tiles(std::make_index_sequence<Simd::score_rows>{});

// Shapes that would spill are left out (null): output_vecs_for never picks them.
template <std::size_t n_rows, std::size_t n_vecs>
constexpr OutputTileFn output_tile_if_it_fits() {
    if constexpr (n_vecs <= output_vecs_for(n_rows)) {
        return &output_tile<n_rows, n_vecs>;
    } else {
        return nullptr;
    }
}
template <std::size_t n_rows, std::size_t... c>
constexpr std::array<OutputTileFn, sizeof...(c)> make_output_tile_row(std::index_sequence<c...>) {
    return {output_tile_if_it_fits<n_rows, c + 1>()...};
}
template <std::size_t... r>
constexpr std::array<std::array<OutputTileFn, Simd::out_vecs>, sizeof...(r)> make_output_tiles(
    std::index_sequence<r...>) {
    return {make_output_tile_row<r + 1>(std::make_index_sequence<Simd::out_vecs>{})...};
}
constexpr auto output_tiles = make_output_tiles(std::make_index_sequence<Simd::out_rows>{});

// Splits n items into the fewest pieces of at most max_piece, as even as possible;
// calls visit(first, size) for each, in order.
template <class Visit>
void for_each_piece(std::size_t n, std::size_t max_piece, Visit visit) {
    const std::size_t n_pieces = (n + max_piece - 1) / max_piece;
    std::size_t first = 0;
    for (std::size_t p = 0; p < n_pieces; ++p) {
        const std::size_t size = n / n_pieces + (p < n % n_pieces ? 1 : 0);
        visit(first, size);
        first += size;
    }
}

// Dot tiles of tile_rows rows from first_row on, while whole tiles fit in n_rows; returns
// the first row left over.
template <std::size_t tile_rows>
std::size_t dot_score_rows(BlockState& st, std::size_t first_row, std::size_t n_rows) {
    for (; first_row + tile_rows <= n_rows; first_row += tile_rows) {
        for (std::size_t t = 0; t < st.n_keys; t += lanes / tile_rows) dot_score_tile<tile_rows>(st, first_row, t);
    }
    return first_row;
}

// Raw scores of every row against the block into probs (n_rows, chunk_key_block).
void score_block(BlockState& st, std::size_t n_rows) {
    if (n_rows > Simd::dot_rows_max) {
        pack_key_block(st);
        for_each_piece(n_rows, Simd::score_rows,
                       [&](std::size_t first, std::size_t size) { transposed_tiles[size - 1](st, first); });
        return;
    }
    // Dot tiles of 4, 2, then 1 rows (fewer with fewer lanes), as many as fit.
    std::size_t first_row = dot_score_rows<std::min<std::size_t>(4, lanes)>(st, 0, n_rows);
    first_row = dot_score_rows<std::min<std::size_t>(2, lanes)>(st, first_row, n_rows);
    dot_score_rows<1>(st, first_row, n_rows);
}

// row[t] = e^(row[t] - shift) for t < n; returns Σ_t row[t], summed lane-wise in a fixed order.
float exp_shifted_sum(float* row, std::size_t n, float shift) {
    const Vec s = Simd::set1(shift);
    Vec sums = Simd::zero();
    std::size_t i = 0;
    for (; i + lanes <= n; i += lanes) {
        const Vec p = Simd::exp(Simd::sub(Simd::load(row + i), s));
        Simd::store(row + i, p);
        sums = Simd::add(sums, p);
    }
    if (i < n) {
        const Simd::Mask rest = Simd::first(n - i);
        // Lanes past n load 0 and would add e^-shift: select them back to 0.
        const Vec p = Simd::select(rest, Simd::exp(Simd::sub(Simd::load(row + i, rest), s)), Simd::zero());
        Simd::store(row + i, p, rest);
        sums = Simd::add(sums, p);
    }
    return Simd::reduce_add(sums);
}

}  // namespace

void exp_polynomial(const float* x, std::size_t n, float* y) {
    std::size_t i = 0;
    for (; i + lanes <= n; i += lanes) Simd::store(y + i, Simd::exp(Simd::load(x + i)));
    if (i < n) {
        const Simd::Mask rest = Simd::first(n - i);
        Simd::store(y + i, Simd::exp(Simd::load(x + i, rest)), rest);
    }
}

void softmax_row(float* row, std::size_t n) {
    Vec maxima = Simd::set1(minus_infinity);
    std::size_t i = 0;
    for (; i + lanes <= n; i += lanes) maxima = Simd::max(maxima, Simd::load(row + i));
    if (i < n) {
        const Simd::Mask rest = Simd::first(n - i);
        maxima = Simd::max(maxima, Simd::select(rest, Simd::load(row + i, rest), Simd::set1(minus_infinity)));
    }
    const float inv_sum = 1.0f / exp_shifted_sum(row, n, Simd::reduce_max(maxima));
    const Vec factor = Simd::set1(inv_sum);
    for (i = 0; i + lanes <= n; i += lanes) Simd::store(row + i, Simd::mul(Simd::load(row + i), factor));
    if (i < n) {
        const Simd::Mask rest = Simd::first(n - i);
        Simd::store(row + i, Simd::mul(Simd::load(row + i, rest), factor), rest);
    }
}

ChunkWorkspace::Layout ChunkWorkspace::layout(std::size_t max_rows, std::size_t head_dim) {
    Layout l{};
    l.padded_dim = round_up(head_dim, max_lanes);
    std::size_t at = 0;
    auto take = [&at](std::size_t n_floats) {
        const std::size_t start = at;
        at += round_up(n_floats, max_lanes);
        return start;
    };
    l.queries = take(max_rows * l.padded_dim);
    l.outputs = take(max_rows * l.padded_dim);
    l.probs = take(max_rows * chunk_key_block);
    l.lane_sums = take(max_rows * max_lanes);
    l.row_max = take(max_rows);
    l.rescale = take(max_rows);
    l.keys_t = take(l.padded_dim * chunk_key_block);
    l.values = take(chunk_key_block * l.padded_dim);
    l.total = at;
    return l;
}

ChunkWorkspace::ChunkWorkspace(std::size_t max_rows, std::size_t head_dim)
    : max_rows_(max_rows),
      head_dim_(head_dim),
      layout_(layout(max_rows, head_dim)),
      storage_(layout_.total + max_lanes - 1, 0.0f) {}

std::size_t ChunkWorkspace::bytes_for(std::size_t max_rows, std::size_t head_dim) {
    return (layout(max_rows, head_dim).total + max_lanes - 1) * sizeof(float);
}

float* ChunkWorkspace::base() {
    const auto address = reinterpret_cast<std::uintptr_t>(storage_.data());
    const std::uintptr_t aligned = (address + 63) & ~std::uintptr_t{63};
    return storage_.data() + (aligned - address) / sizeof(float);
}

void attend_chunk(const ChunkProblem& problem, const ChunkResult& result, ChunkWorkspace& ws) {
    assert(problem.n_rows <= ws.max_rows() && problem.head_dim == ws.head_dim() && problem.n_ctx >= 1);
    // Large groups on builds without AVX-512 take the kernel written for 16 registers.
    if (attend_chunk_grouped(problem, result, ws)) return;
    const std::size_t n_rows = problem.n_rows;
    const std::size_t dim = problem.head_dim;
    const std::size_t padded_dim = ws.padded_dim();
    const std::size_t n_vecs = round_up(dim, lanes) / lanes;  // vectors per output row

    // Queries are scaled once here, so block scores come out of the FMAs final.
    for (std::size_t r = 0; r < n_rows; ++r) {
        const float* src = problem.q + r * problem.q_stride;
        float* dst = ws.queries() + r * padded_dim;
        for (std::size_t d = 0; d < dim; ++d) dst[d] = src[d] * problem.scale;
        std::fill(dst + dim, dst + padded_dim, 0.0f);  // dot tiles read whole vectors
    }
    std::fill_n(ws.outputs(), n_rows * padded_dim, 0.0f);
    std::fill_n(ws.lane_sums(), n_rows * max_lanes, 0.0f);
    std::fill_n(ws.row_max(), n_rows, minus_infinity);

    // Values are read in place when their rows are whole vectors and contiguous (the KV
    // cache); otherwise packed, as a partial last vector would need masks in the output
    // tiles and widely strided rows would share L1 sets.
    const bool values_in_place = dim % lanes == 0 && problem.kv_stride == dim;
    BlockPrefetcher prefetcher;
    std::size_t calls_per_block = 64;  // a guess for the first block; later ones count
    for (std::size_t t0 = 0; t0 < problem.n_ctx; t0 += key_block) {
        prefetcher.start(problem, t0 + BlockPrefetcher::distance * key_block, calls_per_block);
        const std::size_t n_keys = std::min(key_block, problem.n_ctx - t0);
        BlockState st{problem, ws, prefetcher, t0, n_keys, problem.keys + t0 * problem.kv_stride,
                      problem.values + t0 * problem.kv_stride, problem.kv_stride};
        if (!values_in_place) pack_value_block(st);
        score_block(st, n_rows);
        for (std::size_t r = 0; r < n_rows; ++r) update_softmax_row(st, r);
        for_each_piece(n_rows, Simd::out_rows, [&](std::size_t first_row, std::size_t rows) {
            for_each_piece(n_vecs, output_vecs_for(rows), [&](std::size_t first_vec, std::size_t vecs) {
                output_tiles[rows - 1][vecs - 1](st, first_row, first_vec);
            });
        });
        calls_per_block = std::max<std::size_t>(1, prefetcher.calls());
    }

    for (std::size_t r = 0; r < n_rows; ++r) {
        const float sum = Simd::reduce_add(Simd::load(ws.lane_sums() + r * max_lanes));
        std::copy_n(ws.outputs() + r * padded_dim, dim, result.out + r * result.out_stride);
        result.row_max[r] = ws.row_max()[r];
        result.row_sum[r] = sum;
    }
}

DecodeAttentionScratch::DecodeAttentionScratch(const ModelConfig& config, std::size_t max_seq_len_,
                                               std::size_t n_threads_)
    : n_threads(n_threads_),
      max_seq_len(max_seq_len_),
      max_splits(std::max<std::size_t>(1, 2 * n_threads_)),
      partial_out(max_splits * config.n_batch * config.model_dim),
      partial_max(max_splits * config.n_batch * config.n_heads),
      partial_sum(partial_max.size()) {
    workspaces.reserve(n_threads);
    for (std::size_t i = 0; i < n_threads; ++i) workspaces.emplace_back(config.group_size(), config.head_dim());
}

std::size_t DecodeAttentionScratch::bytes() const {
    std::size_t total = (partial_out.size() + partial_max.size() + partial_sum.size()) * sizeof(float);
    for (const ChunkWorkspace& ws : workspaces) total += ws.bytes();
    return total;
}

std::size_t DecodeAttentionScratch::bytes_for(const ModelConfig& config, std::size_t n_threads) {
    const std::size_t max_splits = std::max<std::size_t>(1, 2 * n_threads);
    const std::size_t partial_floats = max_splits * config.n_batch * (config.model_dim + 2 * config.n_heads);
    return partial_floats * sizeof(float) +
           n_threads * ChunkWorkspace::bytes_for(config.group_size(), config.head_dim());
}

std::size_t decode_split_count(std::size_t n_tasks, std::size_t n_ctx, std::size_t n_threads,
                               std::size_t max_splits) {
    constexpr std::size_t min_slice = 64;
    if (n_tasks >= n_threads) return 1;
    const std::size_t wanted = (n_threads + n_tasks - 1) / n_tasks;
    const std::size_t affordable = std::max<std::size_t>(1, n_ctx / min_slice);
    return std::min({wanted, affordable, max_splits});
}

std::uint64_t attend_decode(const ModelConfig& config, const float* q, std::size_t q_stride,
                            const KvCache& cache, std::size_t layer, std::size_t n_ctx, float* out,
                            DecodeAttentionScratch& scratch) {
    const std::size_t n_batch = config.n_batch;
    const std::size_t n_heads = config.n_heads;
    const std::size_t n_kv_heads = config.n_kv_heads;
    const std::size_t head_dim = config.head_dim();
    const std::size_t group_size = config.group_size();
    const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
    const std::size_t n_splits =
        decode_split_count(n_batch * n_kv_heads, n_ctx, scratch.n_threads, scratch.max_splits);
    const std::size_t n_tasks = n_batch * n_kv_heads * n_splits;
    const auto n_tasks_signed = static_cast<std::ptrdiff_t>(n_tasks);

#pragma omp parallel for schedule(static) num_threads(static_cast<int>(scratch.n_threads))
    for (std::ptrdiff_t task = 0; task < n_tasks_signed; ++task) {
        const auto index = static_cast<std::size_t>(task);
        const std::size_t split = index % n_splits;
        const std::size_t kv_head = (index / n_splits) % n_kv_heads;
        const std::size_t b = index / (n_splits * n_kv_heads);
        const std::size_t t_begin = split * n_ctx / n_splits;
        const std::size_t t_end = (split + 1) * n_ctx / n_splits;
        const std::size_t first_head = kv_head * group_size;  // h / group_size == kv_head
        const std::size_t partial_row = (split * n_batch + b) * n_heads + first_head;
        ChunkProblem problem;
        problem.q = q + b * q_stride + first_head * head_dim;
        problem.q_stride = head_dim;
        problem.n_rows = group_size;
        problem.keys = cache.keys(layer, b, kv_head) + t_begin * head_dim;
        problem.values = cache.values(layer, b, kv_head) + t_begin * head_dim;
        problem.kv_stride = head_dim;
        problem.n_ctx = t_end - t_begin;
        problem.head_dim = head_dim;
        problem.scale = scale;
        ChunkResult result;
        result.out = scratch.partial_out.data() + partial_row * head_dim;
        result.out_stride = head_dim;
        result.row_max = scratch.partial_max.data() + partial_row;
        result.row_sum = scratch.partial_sum.data() + partial_row;
        attend_chunk(problem, result, scratch.workspaces[static_cast<std::size_t>(omp_get_thread_num())]);
    }

    // Merge the slices of each head in a fixed order, so results do not depend on thread timing.
    for (std::size_t b = 0; b < n_batch; ++b) {
        for (std::size_t h = 0; h < n_heads; ++h) {
            float global_max = minus_infinity;
            for (std::size_t s = 0; s < n_splits; ++s) {
                global_max = std::max(global_max, scratch.partial_max[(s * n_batch + b) * n_heads + h]);
            }
            float* dst = out + b * config.model_dim + h * head_dim;
            std::fill(dst, dst + head_dim, 0.0f);
            float total = 0.0f;
            for (std::size_t s = 0; s < n_splits; ++s) {
                const std::size_t row = (s * n_batch + b) * n_heads + h;
                const float weight = std::exp(scratch.partial_max[row] - global_max);
                total += weight * scratch.partial_sum[row];
                const float* partial = scratch.partial_out.data() + row * head_dim;
                for (std::size_t d = 0; d < head_dim; ++d) dst[d] += weight * partial[d];
            }
            const float inv_total = 1.0f / total;
            for (std::size_t d = 0; d < head_dim; ++d) dst[d] *= inv_total;
        }
    }
    return 4ull * n_batch * n_heads * head_dim * n_ctx;
}

}  // namespace kvbench
