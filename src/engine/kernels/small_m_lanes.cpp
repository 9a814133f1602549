// small_m_gemm_lanes() and small_m_gemm_typed_lanes(): rows of x in the lanes of zmm registers, each
// weight broadcast once.
//
// Why it exists: the small-m kernel (small_m_gemm.cpp) multiplies a weight vector by each row of
// x with an FMA a row, and its tiles reach about 105-115 GFLOP/s on two Emerald Rapids cores; from
// 9 rows linear() ran it once per group of 8 rows, so a batch of 16 took twice a batch of 8's
// time and 32 rows (OpenBLAS's sgemm) ran at 126 GFLOP/s
// (bench/journal/2026-12-08-sixteen-rows-of-x-on-emerald-rapids.md). Here x is transposed once,
// k-major, so that one zmm holds element k of 16 rows; a weight is broadcast from memory into
// the FMA that multiplies it by those 16 rows, and a tile of weight rows keeps one accumulator a
// row (for each 16 rows of x) in registers: W is read once for up to 64 rows, one load an FMA
// at 16 rows and fewer above (bench/journal/2026-12-08-rows-of-x-in-lanes.md).
#include "small_m_lanes.hpp"

#include "tuning.hpp"

#include "kvbench/engine/kv_convert.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace kvbench {

namespace {
constexpr std::size_t width = 16;  // floats per zmm: rows of x per vector
}  // namespace

#if defined(__AVX512F__)
namespace {
constexpr auto choices = tuning.small_m_lanes;

// Each output sums its products in blocks of k_block columns, one running sum a block, then the
// blocks' sums in order: a long row summed in one chain would round as K·ε, in blocks as
// (k_block + K / k_block)·ε.
constexpr std::size_t k_block = 256;

// The most weight rows a tile of any row count takes (tuning.hpp).
constexpr std::size_t max_tile_rows = std::max({choices.rows_16, choices.rows_32, choices.rows_48, choices.rows_64});

// n weights of a bf16, f16 or int8 matrix from element `first` on, as f32 at dst: bf16 by a
// shift, f16 by vcvtph2ps, int8's codes by a convert (WeightView::at's definitions, its scale
// left out); whole vectors, then the last few one at a time by the same definitions.
void convert_weights(WeightDtype dtype, const void* elements, std::size_t first, std::size_t n, float* dst) {
    // The masked forms, all lanes on: GCC 12 warns that the plain ones read an undefined
    // register once inlined (GCC bug 105593), as in small_m_amx.cpp.
    constexpr __mmask16 all = 0xffff;
    std::size_t i = 0;
    if (dtype == WeightDtype::int8) {
        const auto* codes = static_cast<const std::int8_t*>(elements) + first;
        for (; i + width <= n; i += width) {
            const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes + i));
            _mm512_storeu_ps(dst + i, _mm512_maskz_cvtepi32_ps(all, _mm512_maskz_cvtepi8_epi32(all, bytes)));
        }
        for (; i < n; ++i) dst[i] = static_cast<float>(codes[i]);
        return;
    }
    const auto* halves = static_cast<const std::uint16_t*>(elements) + first;
    for (; i + width <= n; i += width) {
        const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(halves + i));
        _mm512_storeu_ps(dst + i, dtype == WeightDtype::bf16
                                      ? _mm512_castsi512_ps(_mm512_maskz_slli_epi32(all, _mm512_maskz_cvtepu16_epi32(all, bits), 16))
                                      : _mm512_maskz_cvtph_ps(all, bits));
    }
    for (; i < n; ++i) {
        if (dtype == WeightDtype::bf16) {
            const std::uint32_t bits = std::uint32_t{halves[i]} << 16;
            std::memcpy(dst + i, &bits, sizeof bits);
        } else {
            dst[i] = decode_f16(halves[i]);
        }
    }
}

// f32 weights read in place: a block's weight (r, k) at w[r · in_dim + k].
struct F32Rows {
    const float* w;
    std::size_t in_dim;
    const float* block(std::size_t k0, std::size_t /*n_rows*/, std::size_t /*n_cols*/) const { return w + k0; }
    std::size_t block_stride() const { return in_dim; }
    float row_scale(std::size_t /*r*/) const { return 1.0f; }
};

// bf16, f16 or int8 weights: a block of the tile's rows converted to f32 into a buffer in L1,
// block_stride apart (int8's codes alone: its scale multiplies each output's total).
struct TypedRows {
    const void* elements;  // the tile's first row
    const float* scales;   // int8: the tile's first row's scale; else null
    WeightDtype dtype;
    std::size_t in_dim;
    float* buffer;  // (R, k_block) floats
    const float* block(std::size_t k0, std::size_t n_rows, std::size_t n_cols) const {
        for (std::size_t r = 0; r < n_rows; ++r) convert_weights(dtype, elements, r * in_dim + k0, n_cols, buffer + r * k_block);
        return buffer;
    }
    static std::size_t block_stride() { return k_block; }
    float row_scale(std::size_t r) const { return dtype == WeightDtype::int8 ? scales[r] : 1.0f; }
};

// y[m · ldy + r] (+)= scale_r · Σ_k xt[k][m] · w(r, k) for the R weight rows of `rows` and the
// NV · 16 rows of x transposed in xt (NV vectors a column), the first n_rows of them stored. Each
// step loads k_step columns of x (k_step · NV registers) and broadcasts each of the tile's
// k_step · R weights into NV FMAs, the R · NV accumulators in registers.
template <std::size_t NV, std::size_t R, std::size_t k_step, class Rows>
void lanes_tile(const float* xt, const Rows& rows, std::size_t in_dim, std::size_t n_rows, float beta, float* y,
                std::size_t ldy) {
    static_assert(k_block % k_step == 0);
    alignas(64) float totals[R * NV * width] = {};
    const std::size_t ldw = rows.block_stride();
    for (std::size_t k0 = 0; k0 < in_dim; k0 += k_block) {
        const std::size_t k_end = std::min(in_dim, k0 + k_block);
        const float* w = rows.block(k0, R, k_end - k0);  // weight (r, k) at w[r · ldw + k - k0]
        __m512 acc[R][NV];
        for (auto& row : acc) {
            for (auto& a : row) a = _mm512_setzero_ps();
        }
        std::size_t k = k0;
        for (; k + k_step <= k_end; k += k_step) {
            __m512 xv[k_step][NV];
#pragma GCC unroll 16
            for (std::size_t j = 0; j < k_step; ++j) {
#pragma GCC unroll 4
                for (std::size_t v = 0; v < NV; ++v) xv[j][v] = _mm512_load_ps(xt + ((k + j) * NV + v) * width);
            }
            // Column by column across the tile's rows: consecutive FMAs feed different
            // accumulators, so their latency overlaps.
#pragma GCC unroll 16
            for (std::size_t j = 0; j < k_step; ++j) {
#pragma GCC unroll 16
                for (std::size_t r = 0; r < R; ++r) {
                    const __m512 weight = _mm512_set1_ps(w[r * ldw + (k - k0) + j]);
#pragma GCC unroll 4
                    for (std::size_t v = 0; v < NV; ++v) acc[r][v] = _mm512_fmadd_ps(xv[j][v], weight, acc[r][v]);
                }
            }
        }
        for (; k < k_end; ++k) {
            for (std::size_t r = 0; r < R; ++r) {
                const __m512 weight = _mm512_set1_ps(w[r * ldw + (k - k0)]);
                for (std::size_t v = 0; v < NV; ++v) {
                    acc[r][v] = _mm512_fmadd_ps(_mm512_load_ps(xt + (k * NV + v) * width), weight, acc[r][v]);
                }
            }
        }
        for (std::size_t r = 0; r < R; ++r) {
            for (std::size_t v = 0; v < NV; ++v) {
                float* total = totals + (r * NV + v) * width;
                _mm512_store_ps(total, _mm512_add_ps(_mm512_load_ps(total), acc[r][v]));
            }
        }
    }
    for (std::size_t r = 0; r < R; ++r) {
        const float scale = rows.row_scale(r);
        for (std::size_t m = 0; m < n_rows; ++m) {
            const float sum = totals[(r * NV + m / width) * width + m % width] * scale;
            float* out = y + m * ldy + r;
            *out = beta == 0.0f ? sum : *out + sum;  // beta 0 must not read y
        }
    }
}

// x's rows transposed into xt, column k at xt + k · NV · 16, rows past n_rows zero.
template <std::size_t NV>
void transpose_rows(const float* x, std::size_t n_rows, std::size_t in_dim, float* xt) {
    for (std::size_t k = 0; k < in_dim; ++k) {
        float* column = xt + k * NV * width;
        for (std::size_t m = 0; m < NV * width; ++m) column[m] = m < n_rows ? x[m * in_dim + k] : 0.0f;
    }
}

// The transposed x, per calling thread, grown once to the widest a run asks for: OpenMP's
// workers read the caller's.
float* transposed_buffer(std::size_t floats) {
    static thread_local std::vector<float> storage;
    if (storage.size() < floats + width) storage.resize(floats + width);
    const auto misalignment = reinterpret_cast<std::uintptr_t>(storage.data()) % 64 / sizeof(float);
    return storage.data() + (misalignment == 0 ? 0 : width - misalignment);
}

// The tiles of R weight rows over the threads' slabs; rows_at(o) gives weight row o's Rows.
template <std::size_t NV, std::size_t R, std::size_t k_step, class RowsAt>
void run(const float* x, std::size_t n_rows, std::size_t in_dim, std::size_t out_dim, float beta, float* y,
         std::size_t min_parallel_weights, RowsAt rows_at) {
    float* xt = transposed_buffer(in_dim * NV * width);
    transpose_rows<NV>(x, n_rows, in_dim, xt);
    const std::size_t n_tiles = out_dim / R;
#pragma omp parallel if (out_dim * in_dim >= min_parallel_weights)
    {
        const auto n_threads = static_cast<std::size_t>(omp_get_num_threads());
        const auto thread = static_cast<std::size_t>(omp_get_thread_num());
        // Whole tiles as contiguous slabs; the last thread also takes the rows after them, one
        // at a time (each output sums in the same order in any tile, so the bits do not depend
        // on the thread count).
        const std::size_t first = n_tiles * thread / n_threads * R;
        const std::size_t last = thread + 1 == n_threads ? out_dim : n_tiles * (thread + 1) / n_threads * R;
        std::size_t o = first;
        for (; o + R <= last; o += R) lanes_tile<NV, R, k_step>(xt, rows_at(o), in_dim, n_rows, beta, y + o, out_dim);
        for (; o < last; ++o) lanes_tile<NV, 1, k_step>(xt, rows_at(o), in_dim, n_rows, beta, y + o, out_dim);
    }
}

// The tile for the row count, as the 32 registers allow (tuning.hpp).
template <class RowsAt>
void run_for_rows(const float* x, std::size_t n_rows, std::size_t in_dim, std::size_t out_dim, float beta, float* y,
                  std::size_t min_parallel_weights, RowsAt rows_at) {
    if (n_rows <= width) {
        run<1, choices.rows_16, choices.columns_16>(x, n_rows, in_dim, out_dim, beta, y, min_parallel_weights, rows_at);
    } else if (n_rows <= 2 * width) {
        run<2, choices.rows_32, choices.columns_32>(x, n_rows, in_dim, out_dim, beta, y, min_parallel_weights, rows_at);
    } else if (n_rows <= 3 * width) {
        run<3, choices.rows_48, choices.columns_48>(x, n_rows, in_dim, out_dim, beta, y, min_parallel_weights, rows_at);
    } else {
        run<4, choices.rows_64, choices.columns_64>(x, n_rows, in_dim, out_dim, beta, y, min_parallel_weights, rows_at);
    }
}

}  // namespace
#endif

bool small_m_lanes_compiled() {
#if defined(__AVX512F__)
    return true;
#else
    return false;
#endif
}

std::size_t small_m_lanes_min_rows(WeightDtype dtype) {
    if (!small_m_lanes_compiled()) return 0;
    return dtype == WeightDtype::f32 ? tuning.small_m_lanes.min_rows : tuning.small_m_lanes.typed_min_rows;
}

bool small_m_lanes_takes(std::size_t n_rows, WeightDtype dtype) {
    const std::size_t min_rows = small_m_lanes_min_rows(dtype);
    return min_rows != 0 && n_rows >= min_rows && n_rows <= small_m_lanes_max_rows;
}

std::size_t small_m_lanes_bytes(std::size_t n_rows, std::size_t in_dim, WeightDtype dtype) {
    const std::size_t rows = std::min(n_rows, small_m_lanes_max_rows);
    if (!small_m_lanes_takes(rows, dtype)) return 0;
    return ((rows + width - 1) / width * width * in_dim + width) * sizeof(float);
}

void small_m_gemm_lanes(const float* x, std::size_t n_rows, std::size_t in_dim, const float* w, std::size_t out_dim,
                        float beta, float* y) {
    assert(n_rows >= 1 && n_rows <= small_m_lanes_max_rows && in_dim >= 1 && small_m_lanes_compiled());
#if defined(__AVX512F__)
    run_for_rows(x, n_rows, in_dim, out_dim, beta, y, tuning.small_m.min_parallel_weights,
                 [&](std::size_t o) { return F32Rows{w + o * in_dim, in_dim}; });
#else
    (void)x, (void)n_rows, (void)in_dim, (void)w, (void)out_dim, (void)beta, (void)y;
#endif
}

void small_m_gemm_typed_lanes(const float* x, std::size_t n_rows, std::size_t in_dim, const void* elements,
                              const float* scales, WeightDtype dtype, std::size_t out_dim, float beta, float* y) {
    assert(n_rows >= 1 && n_rows <= small_m_lanes_max_rows && in_dim >= 1 && small_m_lanes_compiled() &&
           dtype != WeightDtype::f32);
#if defined(__AVX512F__)
    const std::size_t element_bytes = weight_dtype_info(dtype).bytes;
    run_for_rows(x, n_rows, in_dim, out_dim, beta, y, tuning.small_m_typed.min_parallel_weights,
                 [&](std::size_t o) {
                     // Each thread's block of converted weights: R rows of k_block floats, in L1.
                     alignas(64) static thread_local std::array<float, max_tile_rows * k_block> buffer;
                     return TypedRows{static_cast<const std::byte*>(elements) + o * in_dim * element_bytes,
                                      scales != nullptr ? scales + o : nullptr, dtype, in_dim, buffer.data()};
                 });
#else
    (void)x, (void)n_rows, (void)in_dim, (void)elements, (void)scales, (void)dtype, (void)out_dim, (void)beta, (void)y;
#endif
}

}  // namespace kvbench
