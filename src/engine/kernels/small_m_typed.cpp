// Small-M matrix product over weights of a reduced type (docs/model.md, "Weight element types").
//
// A reduced type halves (bf16, f16) or quarters (int8) the bytes of W, so the same rows of x
// cost two or four times the arithmetic per byte read, and the conversion adds to it. What sets
// the pace, as for small_m_gemm's f32 tiles, is the order in which W is read
// (bench/journal/2026-12-04-typed-small-m-tuned.md): each thread reads its slab of W as a few
// streams far apart (a tile takes one weight row from each of R equal runs of the slab), each
// weight row in long runs (x's chunk, all n_rows rows of it, sits in L1 where runs of
// min_run_bytes remain, else in L2), a whole cache line of each stream per step, and each
// stream asks for its line line_prefetch_bytes ahead. Each weight vector is converted once in
// registers and multiplied into all M rows of x (M · R accumulators); R is the most the
// register file holds beside the weight vectors and one x vector, at most max_streams (int8 at 2
// to int8_max_rows rows of x: int8_max_streams, int8_lines_per_step lines of each per step)
// (tuning.hpp's `small_m_typed` row; bench/journal/2026-12-04-small-m-rows.md). Like small_m_gemm's ISA
// structs, the paths are raw intrinsics compiled side by side, so that an AVX-512 build's tests
// hold its AVX2 path to the reference too (the exception of simd.hpp's rule).
#include "small_m_typed.hpp"

#include "intel_cpu.hpp"
#include "keep_in_register.hpp"
#include "prefetch_line.hpp"
#include "tuning.hpp"

#include "kvbench/engine/kv_convert.hpp"

#include <omp.h>

#include <algorithm>
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
constexpr std::size_t line_bytes = 64;

// Beta is 0 or 1 (the Requires); 0 must not read y, which may be garbage.
inline void store(float sum, float beta, float* dst) { *dst = beta == 0.0f ? sum : sum + *dst; }

// The operands of one tile: R weight rows spread apart times the M rows of x, over one chunk of
// columns [k0, k0 + len) of both.
struct Tile {
    const float* x;         // (n_rows, ldx) floats: the chunk of x
    std::size_t ldx;        // row stride of x's chunk, in floats
    const std::byte* w;     // the tile's first weight row, at column k0
    std::size_t row_bytes;  // bytes of a weight row (in_dim elements): from a run's row to its next
    std::size_t spread;     // rows of W, scales and y between the tile's rows
    const float* scales;    // int8: the tile's first row's scale; else null
    std::size_t len;        // columns in the chunk
    float beta;             // 0: y = sum, 1: y += sum
    float* y;               // (n_rows, ldy) floats, at the tile's first output
    std::size_t ldy;        // out_dim
};

constexpr std::size_t elem_bytes(WeightDtype d) { return weight_dtype_info(d).bytes; }

// Weight rows per tile for m accumulators per weight row (rows of x times accumulator sets):
// m · R accumulators, R weight vectors and one x vector within `registers` (one register
// spare), at most cap.
constexpr std::size_t tile_rows_for(std::size_t m, std::size_t registers, std::size_t cap) {
    const std::size_t r = (registers - 2) / (m + 1);
    return r < 1 ? 1 : (r > cap ? cap : r);
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

// Output r's sum, times its scale for int8.
template <WeightDtype D>
inline float scaled(float sum, const Tile& t, std::size_t r) {
    if constexpr (D == WeightDtype::int8) return sum * t.scales[r * t.spread];
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

    // A, the vector paths' accumulator sets, and L, their lines per step, are not used: the two
    // quads per output are this path's.
    template <WeightDtype D, std::size_t M, std::size_t R, std::size_t A, std::size_t L>
    static void tile(const Tile& t) {
        Quad acc[M][R][2] = {};
        const std::size_t w_step = t.spread * t.row_bytes;
        // Columns [c, c + lanes) of weight row r are element(w_at(r), c...), of row m of x x_at(m).
        const auto step = [&](std::size_t c, const auto& w_at, const auto& x_at) {
            // Built whole, not lane by lane: a lane store into a declared vector trips GCC 12's
            // -Wmaybe-uninitialized.
            Quad wv[R][2];
            for (std::size_t r = 0; r < R; ++r) {
                const std::byte* row = w_at(r);
                for (std::size_t h = 0; h < 2; ++h) {
                    const std::size_t e = c + h * quad;
                    wv[r][h] = Quad{element<D>(row, e), element<D>(row, e + 1), element<D>(row, e + 2), element<D>(row, e + 3)};
                }
            }
            for (std::size_t m = 0; m < M; ++m) {
                const Quad x0 = *reinterpret_cast<const UnalignedQuad*>(x_at(m));
                const Quad x1 = *reinterpret_cast<const UnalignedQuad*>(x_at(m) + quad);
                for (std::size_t r = 0; r < R; ++r) {
                    acc[m][r][0] += x0 * wv[r][0];
                    acc[m][r][1] += x1 * wv[r][1];
                }
            }
        };
        std::size_t i = 0;
        for (; i + lanes <= t.len; i += lanes) {
            step(i, [&](std::size_t r) { return t.w + r * w_step; }, [&](std::size_t m) { return t.x + m * t.ldx + i; });
        }
        if (i < t.len) {
            // The ragged end as one more step over zero-padded copies, through the same vector
            // operations as the columns before it. A scalar loop here was vectorized by GCC as
            // multiplies and in-order adds at one R and fused multiply-adds at another, so on
            // aarch64 a row's bits hung on how many rows shared its tile.
            const std::size_t n = t.len - i;
            std::array<std::byte, lanes * elem_bytes(D)> w_tail[R] = {};
            std::array<float, lanes> x_tail[M] = {};
            for (std::size_t r = 0; r < R; ++r) std::memcpy(w_tail[r].data(), t.w + r * w_step + i * elem_bytes(D), n * elem_bytes(D));
            for (std::size_t m = 0; m < M; ++m) std::memcpy(x_tail[m].data(), t.x + m * t.ldx + i, n * sizeof(float));
            step(0, [&](std::size_t r) { return w_tail[r].data(); }, [&](std::size_t m) { return x_tail[m].data(); });
        }
        for (std::size_t m = 0; m < M; ++m) {
            for (std::size_t r = 0; r < R; ++r) {
                float sum = 0.0f;
                for (std::size_t l = 0; l < lanes; ++l) sum += acc[m][r][l / quad][l % quad];
                store(scaled<D>(sum, t, r), t.beta, t.y + m * t.ldy + r * t.spread);
            }
        }
    }
};

// One vector ISA's tile, written once over its Vec type: `Ops` loads and converts. Every
// output's lanes sum their columns in order, whatever R, so a row computed alone (R = 1, after
// a slab's runs) has the bits it would have in a tile.
template <class Ops>
struct VectorIsa {
    static constexpr std::size_t registers = Ops::registers;

    template <WeightDtype D, std::size_t M, std::size_t R, std::size_t A, std::size_t L>
    static void tile(const Tile& t) {
        constexpr std::size_t width = Ops::width;
        constexpr std::size_t line_cols = line_bytes / elem_bytes(D);  // columns of a weight line
        using Vec = typename Ops::Vec;
        Vec acc[M][R][A];  // (row of x, weight row, set) partial sums
        for (auto& by_x_row : acc) {
            for (auto& by_w_row : by_x_row) {
                for (auto& a : by_w_row) a = Ops::zero();
            }
        }
        const std::size_t w_step = t.spread * t.row_bytes;
        // Columns [i, i + width) of the rows of W at w_at(r) and of x at x_at(m).
        const auto step = [&](std::size_t a, const auto& w_at, const auto& x_at) {
            Vec wv[R];
            for (std::size_t r = 0; r < R; ++r) {
                wv[r] = Ops::template load_weights<D>(w_at(r));
                keep_in_register(wv[r]);  // else GCC reloads and reconverts it for every row of x
            }
            for (std::size_t m = 0; m < M; ++m) {
                Vec xv = Ops::load(x_at(m));
                keep_in_register(xv);
                for (std::size_t r = 0; r < R; ++r) acc[m][r][a] = Ops::fma(xv, wv[r], acc[m][r][a]);
            }
        };
        const auto whole = [&](std::size_t i, std::size_t a) {
            step(a, [&](std::size_t r) { return t.w + r * w_step + i * elem_bytes(D); },
                 [&](std::size_t m) { return t.x + m * t.ldx + i; });
        };
        const std::size_t chunk_bytes = t.len * elem_bytes(D);
        const std::uintptr_t first_row = reinterpret_cast<std::uintptr_t>(t.w);
        // Each stream's line at column i asks for the line line_prefetch_bytes ahead; near the
        // chunk's end, the start of the same chunk in the run's next row: the next tile's. An
        // integer address, since it may lie past the end of W. Written out in each loop: called
        // through a lambda, GCC 12 dropped the prefetches (bench/journal/2026-12-04-small-m-rows.md).
        // L lines of each stream per step, then single lines: the vectors go to the sets in the
        // same order either way (line_cols / width is even wherever A is 2), so L changes no bit.
        std::size_t i = 0;
        if constexpr (L > 1) {
            for (; i + L * line_cols <= t.len; i += L * line_cols) {
                for (std::size_t l = 0; l < L; ++l) {
                    const std::size_t ahead = (i + l * line_cols) * elem_bytes(D) + choices.line_prefetch_bytes;
                    const std::size_t offset = ahead < chunk_bytes ? ahead : t.row_bytes + ahead - chunk_bytes;
                    for (std::size_t r = 0; r < R; ++r) {
                        prefetch_line(reinterpret_cast<const void*>(first_row + r * w_step + offset), false);
                    }
                }
                for (std::size_t v = 0; v < L * line_cols / width; ++v) whole(i + v * width, v % A);
            }
        }
        for (; i + line_cols <= t.len; i += line_cols) {
            const std::size_t ahead = i * elem_bytes(D) + choices.line_prefetch_bytes;
            const std::size_t offset = ahead < chunk_bytes ? ahead : t.row_bytes + ahead - chunk_bytes;
            for (std::size_t r = 0; r < R; ++r) {
                prefetch_line(reinterpret_cast<const void*>(first_row + r * w_step + offset), false);
            }
            for (std::size_t v = 0; v < line_cols / width; ++v) whole(i + v * width, v % A);
        }
        for (; i + width <= t.len; i += width) whole(i, 0);
        if (i < t.len) {
            // The ragged end, copied into zeroed vectors' worth of elements.
            const std::size_t n = t.len - i;
            alignas(64) std::array<std::byte, width * 4> w_tail[R] = {};
            alignas(64) std::array<float, width> x_tail[M] = {};
            for (std::size_t r = 0; r < R; ++r) std::memcpy(w_tail[r].data(), t.w + r * w_step + i * elem_bytes(D), n * elem_bytes(D));
            for (std::size_t m = 0; m < M; ++m) std::memcpy(x_tail[m].data(), t.x + m * t.ldx + i, n * sizeof(float));
            step(0, [&](std::size_t r) { return w_tail[r].data(); }, [&](std::size_t m) { return x_tail[m].data(); });
        }
        for (std::size_t m = 0; m < M; ++m) {
            for (std::size_t r = 0; r < R; ++r) {
                Vec sum = acc[m][r][0];
                for (std::size_t a = 1; a < A; ++a) sum = Ops::add(sum, acc[m][r][a]);
                store(scaled<D>(Ops::reduce(sum), t, r), t.beta, t.y + m * t.ldy + r * t.spread);
            }
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
    static Vec add(Vec a, Vec b) { return _mm256_add_ps(a, b); }
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
    static Vec add(Vec a, Vec b) { return _mm512_add_ps(a, b); }
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
    TileFn tile;  // tile_rows weight rows far apart
    TileFn row;   // one weight row: the rows after a slab's runs
    std::size_t tile_rows;
};

template <class Isa, WeightDtype D, std::size_t M>
constexpr TypedKernel typed_kernel() {
    // One row of x gives each output's FMAs a single chain of dependent adds; two sets of
    // accumulators (a line's vectors alternating between them) keep twice as many FMAs in
    // flight (bench/journal/2026-12-04-typed-small-m-tuned.md).
    constexpr std::size_t A = M == 1 ? 2 : 1;
    // int8 at 2 to int8_max_rows rows: more streams and several lines of each per step, where the
    // tuning row says so (at one row both read slower, at 8 two lines do).
    constexpr bool int8_rows = D == WeightDtype::int8 && M >= 2 && M <= choices.int8_max_rows;
    constexpr std::size_t cap = int8_rows ? choices.int8_max_streams : choices.max_streams;
    constexpr std::size_t L = int8_rows ? choices.int8_lines_per_step : 1;
    constexpr std::size_t r = tile_rows_for(M * A, Isa::registers, cap);
    return {&Isa::template tile<D, M, r, A, L>, &Isa::template tile<D, M, 1, A, L>, r};
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

// Columns of x per chunk, a multiple of a page of floats so that chunks of page-aligned weight
// rows start at line boundaries. Staged in L1 where runs allow: as many as the L1 holds over all
// rows of x where that leaves each weight row runs of at least min_run_bytes (x's loads then hit
// L1), else as many as the L2 holds (shorter runs read slower than x from L2 costs)
// (bench/journal/2026-12-04-typed-small-m-tuned.md). Staged in L2: as many as the L2 holds,
// whatever the runs. Chunks follow the shape, the type and the staging only, so the sums, and
// the bits of y, do too.
std::size_t chunk_cols_for(std::size_t n_rows, WeightDtype dtype, XStaging staging) {
    constexpr std::size_t page_floats = 4096 / sizeof(float);
    const auto cols_within = [&](std::size_t bytes) { return bytes / (n_rows * sizeof(float)) / page_floats * page_floats; };
    const std::size_t l1_cols = cols_within(choices.x_l1_chunk_bytes);
    const bool in_l1 = staging == XStaging::l1_where_runs_allow && l1_cols * elem_bytes(dtype) >= choices.min_run_bytes;
    return in_l1 ? l1_cols : cols_within(choices.x_l2_chunk_bytes);
}

}  // namespace

XStaging host_x_staging() {
    return choices.x_in_l2_on_intel && on_intel_cpu() ? XStaging::l2 : XStaging::l1_where_runs_allow;
}

void small_m_gemm_typed(const float* x, std::size_t n_rows, std::size_t in_dim, TypedWeights w,
                        std::size_t out_dim, float beta, float* y, SmallMIsa isa, XStaging staging) {
    assert(n_rows >= 1 && n_rows <= small_m_max_rows && in_dim >= 1 && w.dtype != WeightDtype::f32);
    const TypedKernel kernel = kernel_for(isa, w.dtype, n_rows);
    const std::size_t tile_rows = kernel.tile_rows;
    const std::size_t bytes = elem_bytes(w.dtype);
    const std::size_t row_bytes = in_dim * bytes;
    const std::size_t chunk_cols = chunk_cols_for(n_rows, w.dtype, staging);
    const auto* elements = static_cast<const std::byte*>(w.elements);
#pragma omp parallel if (out_dim * in_dim >= choices.min_parallel_weights)
    {
        const auto n_threads = static_cast<std::size_t>(omp_get_num_threads());
        const auto thread = static_cast<std::size_t>(omp_get_thread_num());
        // Each thread one contiguous slab of W's rows, as even as rows allow.
        const std::size_t first = out_dim * thread / n_threads;
        const std::size_t last = out_dim * (thread + 1) / n_threads;
        // Tile k takes row k of each of the tile_rows runs of the slab; the rows after the runs, alone.
        const std::size_t run_rows = (last - first) / tile_rows;
        // (n_rows, chunk_cols) floats: the chunk of x, copied to cache-line-aligned rows so that
        // the tiles' vector loads of x never straddle two lines. Static: a 128 KiB array on the
        // stack of an OpenMP worker could overflow a small one.
        alignas(64) static thread_local std::array<float, choices.x_l2_chunk_bytes / sizeof(float)> staged;
        Tile t{};
        t.x = staged.data();
        t.ldx = chunk_cols;
        t.row_bytes = row_bytes;
        t.spread = run_rows;
        t.ldy = out_dim;
        const auto place = [&](std::size_t row, std::size_t k0) {
            t.w = elements + row * row_bytes + k0 * bytes;
            t.scales = w.scales != nullptr ? w.scales + row : nullptr;
            t.y = y + row;
        };
        for (std::size_t k0 = 0; k0 < in_dim && first < last; k0 += chunk_cols) {
            t.len = std::min(chunk_cols, in_dim - k0);
            t.beta = k0 == 0 ? beta : 1.0f;  // later chunks add to the partial sums
            for (std::size_t m = 0; m < n_rows; ++m) std::copy_n(x + m * in_dim + k0, t.len, staged.data() + m * chunk_cols);
            for (std::size_t k = 0; k < run_rows; ++k) {
                place(first + k, k0);
                kernel.tile(t);
            }
            for (std::size_t o = first + tile_rows * run_rows; o < last; ++o) {
                place(o, k0);
                kernel.row(t);
            }
        }
    }
}

void small_m_gemm_typed(const float* x, std::size_t n_rows, std::size_t in_dim, TypedWeights w,
                        std::size_t out_dim, float beta, float* y) {
    static const XStaging staging = host_x_staging();
    small_m_gemm_typed(x, n_rows, in_dim, w, out_dim, beta, y, widest_small_m_isa(), staging);
}

}  // namespace kvbench
