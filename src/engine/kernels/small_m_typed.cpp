// Small-M matrix product over weights of a reduced type (docs/model.md, "Weight element types").
//
// A reduced type halves (bf16, f16) or quarters (int8) the bytes of W, so the same rows of x
// cost two or four times the arithmetic per byte read, and the conversion adds to it. Each
// thread therefore walks its slab of W in tiles of R adjacent weight rows, every weight vector
// converted once in registers and multiplied into all M rows of x (M · R accumulators), x read
// from L1 or L2 whole (8 rows of a 4096-wide x are 128 KiB); R is the most the register file
// holds beside one x vector (tuning.hpp's `small_m_typed` row). Like small_m_gemm's ISA
// structs, the paths are raw intrinsics compiled side by side, so that an AVX-512 build's tests
// hold its AVX2 path to the reference too (the exception of simd.hpp's rule).
#include "small_m_typed.hpp"

#include "keep_in_register.hpp"
#include "tuning.hpp"

#include "kvbench/engine/kv_convert.hpp"

#include <omp.h>

#include <array>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <utility>

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

namespace kvbench {
namespace {

constexpr KernelTuning::SmallMTyped choices = tuning.small_m_typed;

// Beta is 0 or 1 (the Requires); 0 must not read y, which may be garbage.
inline void store(float sum, float beta, float* dst) { *dst = beta == 0.0f ? sum : sum + *dst; }

// The operands of one tile: R adjacent weight rows times the M rows of x, all in_dim columns.
struct Tile {
    const float* x;         // (n_rows, in_dim) floats
    const std::byte* w;     // (R, in_dim) elements: the tile's first weight row
    const float* scales;    // int8: the tile's first row's scale; else null
    std::size_t in_dim;
    float beta;
    float* y;               // (n_rows, out_dim) floats, at the tile's first output
    std::size_t ldy;        // out_dim
};

constexpr std::size_t elem_bytes(WeightDtype d) { return weight_dtype_info(d).bytes; }

// Rows of W per tile for m rows of x: m · R accumulators, R weight vectors and one x vector
// within `registers` (one register spare), at most max_tile_rows.
constexpr std::size_t tile_rows_for(std::size_t m, std::size_t registers) {
    const std::size_t r = (registers - 2) / (m + 1);
    return r < 1 ? 1 : (r > choices.max_tile_rows ? choices.max_tile_rows : r);
}

// The scalar definition (weight_matrix.hpp's WeightView::at) of element i of a row, before an
// int8 row's scale.
template <WeightDtype D>
inline float element(const std::byte* row, std::size_t i) {
    if constexpr (D == WeightDtype::bf16) {
        std::uint16_t b;
        std::memcpy(&b, row + 2 * i, 2);
        return decode_bf16(b);
    } else if constexpr (D == WeightDtype::f16) {
        std::uint16_t h;
        std::memcpy(&h, row + 2 * i, 2);
        return decode_f16(h);
    } else {
        return static_cast<float>(static_cast<std::int8_t>(row[i]));
    }
}

// Output o's sum, times its scale for int8.
template <WeightDtype D>
inline float scaled(float sum, const Tile& t, std::size_t r) {
    if constexpr (D == WeightDtype::int8) return sum * t.scales[r];
    return sum;
}

// Portable path: eight partial sums per output as two GCC vectors of four floats (the lanes of
// small_m_gemm's ScalarIsa), the weights decoded element by element.
struct ScalarIsa {
    static constexpr std::size_t registers = 16;
    static constexpr std::size_t quad = 4;
    static constexpr std::size_t lanes = 2 * quad;
    typedef float Quad __attribute__((vector_size(quad * sizeof(float))));
    typedef float UnalignedQuad __attribute__((vector_size(quad * sizeof(float)), aligned(alignof(float)), may_alias));

    template <WeightDtype D, std::size_t M, std::size_t R>
    static void tile(const Tile& t) {
        Quad acc[M][R][2] = {};
        const std::size_t row_bytes = t.in_dim * elem_bytes(D);
        std::size_t i = 0;
        for (; i + lanes <= t.in_dim; i += lanes) {
            // Built whole, not lane by lane: a lane store into a declared vector trips GCC 12's
            // -Wmaybe-uninitialized.
            Quad wv[R][2];
            for (std::size_t r = 0; r < R; ++r) {
                const std::byte* row = t.w + r * row_bytes;
                for (std::size_t h = 0; h < 2; ++h) {
                    const std::size_t c = i + h * quad;
                    wv[r][h] = Quad{element<D>(row, c), element<D>(row, c + 1), element<D>(row, c + 2), element<D>(row, c + 3)};
                }
            }
            for (std::size_t m = 0; m < M; ++m) {
                const Quad x0 = *reinterpret_cast<const UnalignedQuad*>(t.x + m * t.in_dim + i);
                const Quad x1 = *reinterpret_cast<const UnalignedQuad*>(t.x + m * t.in_dim + i + quad);
                for (std::size_t r = 0; r < R; ++r) {
                    acc[m][r][0] += x0 * wv[r][0];
                    acc[m][r][1] += x1 * wv[r][1];
                }
            }
        }
        for (; i < t.in_dim; ++i) {
            for (std::size_t r = 0; r < R; ++r) {
                const float wi = element<D>(t.w + r * row_bytes, i);
                for (std::size_t m = 0; m < M; ++m) acc[m][r][0][0] += t.x[m * t.in_dim + i] * wi;
            }
        }
        for (std::size_t m = 0; m < M; ++m) {
            for (std::size_t r = 0; r < R; ++r) {
                float sum = 0.0f;
                for (std::size_t l = 0; l < lanes; ++l) sum += acc[m][r][l / quad][l % quad];
                store(scaled<D>(sum, t, r), t.beta, t.y + m * t.ldy + r);
            }
        }
    }
};

// One vector ISA's tile, written once over its Vec type: `Ops` loads and converts.
template <class Ops>
struct VectorIsa {
    static constexpr std::size_t registers = Ops::registers;

    template <WeightDtype D, std::size_t M, std::size_t R>
    static void tile(const Tile& t) {
        constexpr std::size_t width = Ops::width;
        using Vec = typename Ops::Vec;
        Vec acc[M][R];  // (row of x, weight row) partial sums
        for (auto& by_x_row : acc) {
            for (auto& a : by_x_row) a = Ops::zero();
        }
        const std::size_t row_bytes = t.in_dim * elem_bytes(D);
        // Columns [i, i + width) of the rows of W at w_at(r) and of x at x_at(m).
        const auto step = [&](const auto& w_at, const auto& x_at) {
            Vec wv[R];
            for (std::size_t r = 0; r < R; ++r) {
                wv[r] = Ops::template load_weights<D>(w_at(r));
                keep_in_register(wv[r]);  // else GCC reloads and reconverts it for every row of x
            }
            for (std::size_t m = 0; m < M; ++m) {
                Vec xv = Ops::load(x_at(m));
                keep_in_register(xv);
                for (std::size_t r = 0; r < R; ++r) acc[m][r] = Ops::fma(xv, wv[r], acc[m][r]);
            }
        };
        std::size_t i = 0;
        for (; i + width <= t.in_dim; i += width) {
            step([&](std::size_t r) { return t.w + r * row_bytes + i * elem_bytes(D); },
                 [&](std::size_t m) { return t.x + m * t.in_dim + i; });
        }
        if (i < t.in_dim) {
            // The ragged end, copied into zeroed vectors' worth of elements.
            const std::size_t n = t.in_dim - i;
            alignas(64) std::array<std::byte, width * 4> w_tail[R] = {};
            alignas(64) std::array<float, width> x_tail[M] = {};
            for (std::size_t r = 0; r < R; ++r) std::memcpy(w_tail[r].data(), t.w + r * row_bytes + i * elem_bytes(D), n * elem_bytes(D));
            for (std::size_t m = 0; m < M; ++m) std::memcpy(x_tail[m].data(), t.x + m * t.in_dim + i, n * sizeof(float));
            step([&](std::size_t r) { return w_tail[r].data(); }, [&](std::size_t m) { return x_tail[m].data(); });
        }
        for (std::size_t m = 0; m < M; ++m) {
            for (std::size_t r = 0; r < R; ++r) store(scaled<D>(Ops::reduce(acc[m][r]), t, r), t.beta, t.y + m * t.ldy + r);
        }
    }
};

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
inline float reduce_add(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

struct Avx2Ops {
#ifdef __AVX512VL__
    static constexpr std::size_t registers = 32;
#else
    static constexpr std::size_t registers = 16;
#endif
    static constexpr std::size_t width = 8;
    using Vec = __m256;
    static Vec zero() { return _mm256_setzero_ps(); }
    static Vec load(const float* p) { return _mm256_loadu_ps(p); }
    static Vec fma(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
    static float reduce(Vec v) { return reduce_add(v); }
    template <WeightDtype D>
    static Vec load_weights(const std::byte* p) {
        if constexpr (D == WeightDtype::bf16) {
            const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
            return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(raw), 16));
        } else if constexpr (D == WeightDtype::f16) {
            return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
        } else {
            return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
        }
    }
};
#define KVBENCH_TYPED_AVX2 1
#endif

#ifdef __AVX512F__
struct Avx512Ops {
    static constexpr std::size_t registers = 32;
    static constexpr std::size_t width = 16;
    using Vec = __m512;
    static Vec zero() { return _mm512_setzero_ps(); }
    static Vec load(const float* p) { return _mm512_loadu_ps(p); }
    static Vec fma(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
    // Not _mm512_reduce_add_ps: in GCC 12 it trips -Wuninitialized (small_m_gemm.cpp says why).
    static float reduce(Vec v) {
        const __m512d d = _mm512_castps_pd(v);
        return reduce_add(_mm256_add_ps(_mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xff, d, 0)),
                                        _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xff, d, 1))));
    }
    template <WeightDtype D>
    static Vec load_weights(const std::byte* p) {
        // The zero-masked forms: the plain ones pass an undefined operand that trips GCC 12's
        // -Wmaybe-uninitialized, as reduce() says; they compile to the same instructions.
        constexpr __mmask16 all = 0xffff;
        if constexpr (D == WeightDtype::bf16) {
            const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
            return _mm512_castsi512_ps(_mm512_maskz_slli_epi32(all, _mm512_maskz_cvtepu16_epi32(all, raw), 16));
        } else if constexpr (D == WeightDtype::f16) {
            return _mm512_maskz_cvtph_ps(all, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
        } else {
            return _mm512_maskz_cvtepi32_ps(all, _mm512_maskz_cvtepi8_epi32(all, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
        }
    }
};
#endif

using TileFn = void (*)(const Tile& t);
struct TypedKernel {
    TileFn tile;  // tile_rows weight rows
    TileFn row;   // one weight row: the rows after a slab's last whole tile
    std::size_t tile_rows;
};

template <class Isa, WeightDtype D, std::size_t M>
constexpr TypedKernel typed_kernel() {
    constexpr std::size_t r = tile_rows_for(M, Isa::registers);
    return {&Isa::template tile<D, M, r>, &Isa::template tile<D, M, 1>, r};
}

template <class Isa, WeightDtype D, std::size_t... I>
constexpr std::array<TypedKernel, sizeof...(I)> typed_table(std::index_sequence<I...>) {
    return {typed_kernel<Isa, D, I + 1>()...};
}

template <class Isa, WeightDtype D>
constexpr std::array<TypedKernel, small_m_max_rows> typed_kernels =
    typed_table<Isa, D>(std::make_index_sequence<small_m_max_rows>{});

template <class Isa>
TypedKernel kernel_of(WeightDtype dtype, std::size_t n_rows) {
    switch (dtype) {
        case WeightDtype::bf16: return typed_kernels<Isa, WeightDtype::bf16>[n_rows - 1];
        case WeightDtype::f16: return typed_kernels<Isa, WeightDtype::f16>[n_rows - 1];
        default: return typed_kernels<Isa, WeightDtype::int8>[n_rows - 1];
    }
}

TypedKernel kernel_for(SmallMIsa isa, WeightDtype dtype, std::size_t n_rows) {
    switch (isa) {
#ifdef __AVX512F__
        case SmallMIsa::avx512: return kernel_of<VectorIsa<Avx512Ops>>(dtype, n_rows);
#endif
#ifdef KVBENCH_TYPED_AVX2
        case SmallMIsa::avx2: return kernel_of<VectorIsa<Avx2Ops>>(dtype, n_rows);
#endif
        default: return kernel_of<ScalarIsa>(dtype, n_rows);
    }
}

}  // namespace

void small_m_gemm_typed(const float* x, std::size_t n_rows, std::size_t in_dim, TypedWeights w,
                        std::size_t out_dim, float beta, float* y, SmallMIsa isa) {
    assert(n_rows >= 1 && n_rows <= small_m_max_rows && in_dim >= 1 && w.dtype != WeightDtype::f32);
    const TypedKernel kernel = kernel_for(isa, w.dtype, n_rows);
    const std::size_t tile_rows = kernel.tile_rows;
    const std::size_t n_tiles = out_dim / tile_rows;
    const std::size_t row_bytes = in_dim * elem_bytes(w.dtype);
    const auto* elements = static_cast<const std::byte*>(w.elements);
#pragma omp parallel if (out_dim * in_dim >= choices.min_parallel_weights)
    {
        const auto n_threads = static_cast<std::size_t>(omp_get_num_threads());
        const auto thread = static_cast<std::size_t>(omp_get_thread_num());
        // Whole tiles dealt out evenly as contiguous slabs; the last thread also takes the rows
        // after the last whole tile.
        const std::size_t first = n_tiles * thread / n_threads * tile_rows;
        const std::size_t last = thread + 1 == n_threads ? out_dim : n_tiles * (thread + 1) / n_threads * tile_rows;
        Tile t{x, nullptr, nullptr, in_dim, beta, nullptr, out_dim};
        std::size_t o = first;
        const auto place = [&](std::size_t row) {
            t.w = elements + row * row_bytes;
            t.scales = w.scales != nullptr ? w.scales + row : nullptr;
            t.y = y + row;
        };
        for (; o + tile_rows <= last; o += tile_rows) {
            place(o);
            kernel.tile(t);
        }
        for (; o < last; ++o) {
            place(o);
            kernel.row(t);
        }
    }
}

void small_m_gemm_typed(const float* x, std::size_t n_rows, std::size_t in_dim, TypedWeights w,
                        std::size_t out_dim, float beta, float* y) {
    small_m_gemm_typed(x, n_rows, in_dim, w, out_dim, beta, y, widest_small_m_isa());
}

}  // namespace kvbench
