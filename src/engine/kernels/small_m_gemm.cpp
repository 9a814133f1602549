// Small-M matrix product: every thread streams its own slab of W once, for all rows of x.
//
// Why it exists: for 1 to 8 rows of x OpenBLAS 0.3.21's sgemm streams W far below the memory
// bandwidth, and its sgemv one row's W slower than four streams do (linear.cpp links the
// measurements). Here each thread walks its slab of W in tiles of tile_rows weight rows (for
// one row of x on every path, for 2 on AVX2, and on AVX2 from 3 rows on where the L1 holds
// 48 KiB, rows far apart: one from each of tile_rows runs of the slab); a tile's weights are
// loaded once per vector and multiplied into n_rows · tile_rows register accumulators, so W is
// read exactly once.
// The columns are taken in chunks of x (kept in L1 where it holds 48 KiB, in L2 where it holds
// 32, or where a kernel wants whole weight rows as runs), and tiles of adjacent rows
// prefetch the weights of a later tile: the next one into L1, or, with the chunks in L2, the one
// l2_prefetch_bytes_ahead ahead into L2; far-apart rows prefetch each run line_prefetch_bytes
// ahead. Chunks and vector lanes follow column numbers, so the rounding, like the answer, is the
// same wherever the buffers are allocated.
#include "small_m_gemm.hpp"

#include "intel_cpu.hpp"
#include "keep_in_register.hpp"
#include "l1_data_cache.hpp"
#include "prefetch_line.hpp"
#include "tuning.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <cstdint>
#include <utility>

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

namespace kvbench {
namespace {

// This build's choices (tuning.hpp's `small_m` row).
constexpr KernelTuning::SmallM choices = tuning.small_m;
constexpr std::size_t min_parallel_weights = choices.min_parallel_weights;

// Columns of x are taken in chunks of at most x_chunk_bytes(to) over all n_rows rows; each chunk
// costs one horizontal sum per output, and each weight row is streamed as chunk-long runs. With a
// 48 KiB L1 a chunk stays in L1 beside the weight tile; with a 32 KiB L1 none worth having does,
// and chunks in L2 make each weight row one long run
// (bench/journal/2026-12-01-x-chunks-by-l1-size.md).
constexpr std::size_t l1_chunk_bytes = choices.l1_chunk_bytes;
constexpr std::size_t l2_chunk_bytes = choices.l2_chunk_bytes;
constexpr std::size_t l1_fits_chunk_bytes = large_l1_bytes;

// How the tiles prefetch W, chosen with the chunk size, since both follow the L1: with chunks in
// L1, the next tile's weights into L1; with chunks in L2, the weights about
// l2_prefetch_bytes_ahead ahead into L2, as next-tile requests into L1 came too late for memory
// to overlap the arithmetic (bench/journal/2026-12-02-prefetching-w-into-l2.md).
enum class PrefetchTo { l1, l2 };
constexpr std::size_t l2_prefetch_bytes_ahead = choices.l2_prefetch_bytes_ahead;

PrefetchTo prefetch_to(SmallML1 l1) { return l1 == SmallML1::kib32 ? PrefetchTo::l2 : PrefetchTo::l1; }
std::size_t x_chunk_bytes(PrefetchTo to) { return to == PrefetchTo::l2 ? l2_chunk_bytes : l1_chunk_bytes; }

// Tiles between a tile and the one whose weights it prefetches, for tiles of tile_rows rows
// times len columns.
std::size_t tiles_ahead(PrefetchTo to, std::size_t tile_rows, std::size_t len) {
    if (to == PrefetchTo::l1) return 1;
    return std::max<std::size_t>(1, l2_prefetch_bytes_ahead / (tile_rows * len * sizeof(float)));
}

constexpr std::size_t page_floats = 4096 / sizeof(float);
// One prefetch per cache line: chunks start at multiples of 64 floats, so i % line_floats == 0
// marks a line's first vector in page-aligned weight rows.
constexpr std::size_t line_floats = 64 / sizeof(float);

// Weight rows far apart that a spread tile reads at once (one row of x, and two on AVX2): one
// from each of as many equal runs of a thread's slab, as the bandwidth probe reads memory
// (bench/journal/2026-12-02-one-row-of-x-as-four-streams.md).
constexpr std::size_t spread_streams = choices.spread_streams;

// Beta is 0 or 1 (the Requires of small_m_gemm); 0 must not read y, which may be garbage.
inline void store(float sum, float beta, float* dst) { *dst = beta == 0.0f ? sum : sum + *dst; }

// The operands of one tile: tile_rows weight rows times n_rows rows of x, over one chunk
// of columns [k0, k0 + len) of both.
struct Tile {
    const float* x;       // (n_rows, ldx) floats, at column k0
    std::size_t ldx;      // row stride of x, in floats
    const float* w;       // (tile_rows, ldw) floats, at column k0
    std::size_t ldw;      // row stride of W, in floats: in_dim
    std::uintptr_t next;  // address of the weights of a later tile (tiles_ahead), to prefetch;
                          // an integer, since it may point past the end of W
    std::size_t len;      // columns in the chunk
    std::size_t spread;   // spread kernels only: rows of W and y between the tile's rows
    float beta;           // 0: y = sum, 1: y += sum
    float* y;             // (n_rows, ldy) floats, at the tile's first column
    std::size_t ldy;      // row stride of y: out_dim
};

inline std::uintptr_t address_of(const float* p) { return reinterpret_cast<std::uintptr_t>(p); }

// At 8 rows of x a core is busy with FMAs, so its out-of-order window spans few weight
// lines and the stream from memory stalls between them; asking for a later tile's weights
// while this one computes overlaps the two. At 1 or 2 rows the core issues loads fast enough
// for the hardware prefetcher alone, and the prefetches only cost issue slots
// (bench/journal/2026-11-30-small-m-projection-choices.md).
constexpr std::size_t min_rows_to_prefetch = choices.min_rows_to_prefetch;

// From this many rows of x, Avx2Isa reads far-apart weight rows with lines() where it can.
constexpr std::size_t min_rows_for_lines = choices.min_rows_for_lines;

// How far ahead in its own run each far-apart weight row of Avx2Isa::lines is prefetched.
constexpr std::size_t line_prefetch_bytes = choices.line_prefetch_bytes;
template <PrefetchTo to>
inline void prefetch(std::uintptr_t address) {
    prefetch_line(reinterpret_cast<const void*>(address), to == PrefetchTo::l2);
}

// Columns of a chunk before rounding. Kernels that want each weight row as one long run more
// than x in L1 (whole_runs: Avx2Isa's far-apart lines from 3 rows of x, and its passes; see
// Avx2Isa::whole_runs) take a chunk of x that may fill l2_chunk_bytes. With chunks in L1 and
// prefetching tiles, the chunk of x, the tile of weights being read and the next one being
// prefetched share the L1, so the columns are cut until the three fit in l1_fits_chunk_bytes
// (bench/journal/2026-12-02-prefetches-spread-over-passes.md).
std::size_t chunk_cols_at_most(std::size_t n_rows, std::size_t tile_rows, bool whole_runs, PrefetchTo to) {
    if (whole_runs) return l2_chunk_bytes / (n_rows * sizeof(float));
    const std::size_t cols = x_chunk_bytes(to) / (n_rows * sizeof(float));
    if (to != PrefetchTo::l1 || n_rows < min_rows_to_prefetch) return cols;
    return std::min(cols, l1_fits_chunk_bytes / ((n_rows + 2 * tile_rows) * sizeof(float)));
}

// Columns per chunk under a page, a multiple of 64: as even as that allows, since a short last
// chunk costs its horizontal sums and a pass over y for little work (a cap of 877 columns, 8
// rows of x beside two tiles of 3 weight rows in 48 KiB, would cut D=1024 into 832 and 192).
// Today's kernels all allow a page or more; this keeps any cap below one correct.
std::size_t even_chunk_cols(std::size_t in_dim, std::size_t max_cols) {
    const std::size_t widest = std::max<std::size_t>(64, max_cols / 64 * 64);
    const std::size_t n_chunks = (in_dim + widest - 1) / widest;
    const std::size_t even = (in_dim + n_chunks - 1) / n_chunks;
    return std::min(widest, (even + 63) / 64 * 64);
}

// One kernel for a given n_rows: `tile` runs tile_rows weight rows, `row` a single one, for
// the rows left after the last whole tile of a slab.
using TileFn = void (*)(const Tile& t);
struct SlabKernel {
    TileFn tile;
    TileFn row;
    std::size_t tile_rows;
    bool spread;       // the tile's rows are one from each of tile_rows equal runs of the slab
    bool whole_runs;   // each weight row is best read as one long run: x's chunk may fill the L2
};

// Portable path: eight partial sums per output keep the rounding error near the vector
// paths' and give the compiler an independent chain per lane. They are two GCC vectors of four
// floats, one SSE or NEON register each, so every tile is vector code on any target: as eight
// scalar chains GCC's cost model left the lone-row tile (tile<1, 1>) scalar, and one vector of
// eight, wider than those registers, it lowers through memory
// (bench/journal/2026-12-03-portable-tile-on-arm.md; scripts/test-arm64.sh checks the
// disassembly). One row of x reads four weight rows far apart at once, as Avx2Isa does (see
// there); more rows, one weight row.
struct ScalarIsa {
    static constexpr std::size_t tile_rows(std::size_t m, PrefetchTo) { return m == 1 ? spread_streams : 1; }
    static constexpr bool spread(std::size_t m, PrefetchTo) { return m == 1; }
    static constexpr bool whole_runs(std::size_t, PrefetchTo) { return false; }

    static constexpr std::size_t quad = 4;
    static constexpr std::size_t lanes = 2 * quad;  // partial sums per output; lane l is [l / quad][l % quad]
    typedef float Quad __attribute__((vector_size(quad * sizeof(float))));
    typedef float UnalignedQuad __attribute__((vector_size(quad * sizeof(float)), aligned(alignof(float)), may_alias));
    static Quad quad_at(const float* p) { return *reinterpret_cast<const UnalignedQuad*>(p); }

    template <std::size_t M, std::size_t R, PrefetchTo to>
    static void tile(const Tile& t) {
        Quad acc[M][R][2] = {};  // (n_rows, tile_rows, half of the lanes) partial sums
        // Rows of W and y from one of the tile's rows to the next (R is 1 unless spread).
        const std::size_t step = spread(M, to) ? t.spread : 1;
        const float* w = t.w;
        const std::size_t ldw = step * t.ldw;
        // Columns [0, lanes) from row r of W at w_at(r) and row m of x at x_at(m).
        const auto accumulate = [&](const auto& w_at, const auto& x_at) {
            for (std::size_t m = 0; m < M; ++m) {
                const Quad x0 = quad_at(x_at(m));
                const Quad x1 = quad_at(x_at(m) + quad);
                for (std::size_t r = 0; r < R; ++r) {
                    acc[m][r][0] += x0 * quad_at(w_at(r));
                    acc[m][r][1] += x1 * quad_at(w_at(r) + quad);
                }
            }
        };
        std::size_t i = 0;
        for (; i + lanes <= t.len; i += lanes) {
            accumulate([&](std::size_t r) { return w + r * ldw + i; }, [&](std::size_t m) { return t.x + m * t.ldx + i; });
        }
        if (i < t.len) {
            // The ragged end as one more step over zero-padded copies, through the same vector
            // operations as the columns before it: a scalar loop here may be vectorized as
            // multiplies and in-order adds at one R and fused at another (small_m_typed.cpp's
            // portable path did so on aarch64), and a row's bits would hang on its tile.
            const std::size_t n = t.len - i;
            std::array<float, lanes> w_tail[R] = {};
            std::array<float, lanes> x_tail[M] = {};
            for (std::size_t r = 0; r < R; ++r) std::copy_n(w + r * ldw + i, n, w_tail[r].data());
            for (std::size_t m = 0; m < M; ++m) std::copy_n(t.x + m * t.ldx + i, n, x_tail[m].data());
            accumulate([&](std::size_t r) { return w_tail[r].data(); }, [&](std::size_t m) { return x_tail[m].data(); });
        }
        for (std::size_t m = 0; m < M; ++m) {
            for (std::size_t r = 0; r < R; ++r) {
                float sum = 0.0f;
                for (std::size_t l = 0; l < lanes; ++l) sum += acc[m][r][l / quad][l % quad];
                store(sum, t.beta, t.y + m * t.ldy + r * step);
            }
        }
    }
};

#ifdef __AVX2__
inline float reduce_add(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

// The ymm registers hold n_rows · tile_rows accumulators, the tile's weight vectors and
// one x vector (one weight row alone, at n_rows = 1, is an FMA memory operand); at least
// 8 accumulators keep both FMA pipes busy through the 4-cycle latency. AVX2 has 16 ymm
// registers; with AVX-512VL the compiler may use 32, room for 2 weight rows at 7 and 8 rows
// of x (bench/journal/2026-11-30-small-m-projection-choices.md).
//
// In 16 registers a tile covering all 8 rows of x has room for one weight row only, so each
// x vector loaded would feed a single FMA: 9 loads per 8 FMAs, and the loads, not memory, bound
// it. There the rows of x are taken in passes of at most pass_rows over the same tile of
// weights, each pass with 3 weight rows (12 accumulators, 3 weight vectors and one x vector
// fill the 16 registers): 7 loads per 12 FMAs
// (bench/journal/2026-12-01-avx2-tile-at-4-7-8-rows.md). The passes after the first read the
// tile's weights from L1 or L2. Every output's sum runs over the same lanes in the same order as
// in one pass, so the bits of y do not change. How the passes share the prefetch of the next
// tile (pass_prefetch) changes only when its lines are asked for, never the bits.
template <PassPrefetch pass_prefetch>
struct Avx2IsaFor {
#ifdef __AVX512VL__
    static constexpr std::size_t registers = 32;
#else
    static constexpr std::size_t registers = 16;
#endif
    // Rows of x per pass. At 5 and 6 rows one pass with 2 weight rows already loads as
    // little per FMA as passes of 3 rows would, without reading the weights twice, and is
    // faster (bench/journal/2026-12-01-avx2-tile-at-4-7-8-rows.md).
    static constexpr std::size_t pass_rows(std::size_t m) {
        return registers == 16 && m >= choices.passes_from_rows ? choices.pass_rows : m;
    }
    // Adjacent tiles (spread false) fill the registers with 3 weight rows up to 4 rows of x, 2 above.
    static constexpr std::size_t tile_rows(std::size_t m, PrefetchTo to) {
        if (m < min_rows_for_lines) return spread_streams;
        if (spread(m, to)) return line_streams(m);
        const std::size_t p = pass_rows(m);
        return p == 3 || (p == 4 && registers == 16) ? 3 : 2;
    }

    // Far-apart weight rows a lines() tile can hold in registers at m rows of x: m · r
    // accumulators, r weight vectors and one x vector; 0 where fewer than min_line_streams fit,
    // as two streams read slower than the adjacent tiles
    // (bench/journal/2026-12-03-far-apart-whole-lines.md).
    static constexpr std::size_t min_line_streams = choices.min_line_streams;
    static constexpr std::size_t line_streams(std::size_t m) {
        for (std::size_t r = spread_streams; r >= min_line_streams; --r) {
            if (m * r + r + 1 <= registers) return r;
        }
        return 0;
    }
    // Whether lines() holds its weight vectors in registers. Where they would take the last
    // registers (4 rows of x in 16: 12 accumulators, 3 weights, x), GCC spills accumulators in
    // the loop; left to GCC, the weights become FMA memory operands, read again from L1, and no
    // accumulator spills (bench/journal/2026-12-03-far-apart-whole-lines.md).
    static constexpr bool weights_in_registers(std::size_t m, std::size_t r) { return m * r + r + 1 < registers; }

    // One or two rows of x read W as spread_streams streams far apart, faster than adjacent
    // tiles; at one row a whole cache line (two vectors, two accumulators) of each per step
    // (bench/journal/2026-12-02-one-row-of-x-as-four-streams.md). From 3 rows on, far-apart
    // streams too (lines()) where the registers hold at least min_line_streams of them and the
    // L1 holds 48 KiB, where they were measured (Zen 5); with a 32 KiB L1 the adjacent tiles and
    // their L2 prefetch stay, as measured on Zen 4, until lines() is measured on such a core.
    static constexpr bool spread(std::size_t m, PrefetchTo to) {
        return m < min_rows_for_lines || (to == PrefetchTo::l1 && line_streams(m) != 0);
    }
    // lines() reads each weight row as one run through its part of the slab, and so do the
    // passes (7 and 8 rows in 16 registers): for them x read from L2 costs less than chunks of x
    // cut to fit the L1 beside two weight tiles, which split every weight row into several runs
    // (bench/journal/2026-12-03-whole-weight-rows-for-passes.md).
    static constexpr bool whole_runs(std::size_t m, PrefetchTo to) {
        return (m >= min_rows_for_lines && spread(m, to)) || pass_rows(m) < m;
    }

    template <std::size_t M, std::size_t R, PrefetchTo to>
    static void tile(const Tile& t) {
        if constexpr (M < min_rows_for_lines) {
            streams<M, R>(t);
        } else if constexpr (spread(M, to)) {
            lines<M, R>(t);
        } else {
            // A lone weight row gains nothing from passes: each x vector feeds one FMA anyway.
            constexpr std::size_t p = R == 1 ? M : pass_rows(M);
            passes<M, p, R, M >= min_rows_to_prefetch, to>(t);
        }
    }

    // Lanes [0, n) of -1, the rest 0: the mask of a ragged end of n < 8 columns.
    static __m256i first_lanes(std::size_t n) {
        // A window into eight -1s then eight 0s.
        alignas(32) static constexpr int ones_then_zeros[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                                                0,  0,  0,  0,  0,  0,  0,  0};
        return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ones_then_zeros + 8 - n));
    }

    // y[m · ldy + r · spread] for the M rows of x and the R weight rows at t.w + r · spread · ldw.
    // Rows computed alone (R = 1, after the slab's runs) sum in the same order, so no output's
    // bits depend on where the slabs end.
    template <std::size_t M, std::size_t R>
    static void streams(const Tile& t) {
        constexpr std::size_t width = 8;
        // Vectors of each weight row per step: a whole line at one row of x; half a line at two,
        // where two per row would take 2 · 4 · 2 accumulators, all 16 registers.
        constexpr std::size_t V = M == 1 ? 2 : 1;
        __m256 acc[M][R][V];  // (row of x, weight row, vector of the step) partial sums
        for (auto& by_x_row : acc) {
            for (auto& by_w_row : by_x_row) {
                for (auto& a : by_w_row) a = _mm256_setzero_ps();
            }
        }
        const auto row_of = [&](std::size_t r) { return t.w + r * t.spread * t.ldw; };
        // Columns [i, i + width), read by load (whole vectors, or masked at the ragged end), into
        // vector v of the partial sums.
        const auto step = [&](std::size_t i, std::size_t v, const auto& load) {
            __m256 xv[M];
            for (std::size_t m = 0; m < M; ++m) xv[m] = load(t.x + m * t.ldx + i);
            for (std::size_t r = 0; r < R; ++r) {
                __m256 wv = load(row_of(r) + i);
                if constexpr (M > 1) keep_in_register(wv);  // else one load per row of x
                for (std::size_t m = 0; m < M; ++m) acc[m][r][v] = _mm256_fmadd_ps(xv[m], wv, acc[m][r][v]);
            }
        };
        const auto whole = [](const float* p) { return _mm256_loadu_ps(p); };
        std::size_t i = 0;
        for (; i + V * width <= t.len; i += V * width) {
            for (std::size_t v = 0; v < V; ++v) step(i + v * width, v, whole);
        }
        if (V == 2 && i + width <= t.len) {
            step(i, 0, whole);
            i += width;
        }
        if (i < t.len) {
            const __m256i mask = first_lanes(t.len - i);
            step(i, V - 1, [&](const float* p) { return _mm256_maskload_ps(p, mask); });
        }
        for (std::size_t m = 0; m < M; ++m) {
            for (std::size_t r = 0; r < R; ++r) {
                __m256 sum = acc[m][r][0];
                for (std::size_t v = 1; v < V; ++v) sum = _mm256_add_ps(sum, acc[m][r][v]);
                store(reduce_add(sum), t.beta, t.y + m * t.ldy + r * t.spread);
            }
        }
    }

    // y[m · ldy + r · spread] for the M rows of x and the R far-apart weight rows at
    // t.w + r · spread · ldw, from 3 rows of x on. Tiles of adjacent rows read W in short runs
    // (a chunk of x each) and need the next tile prefetched; with so many FMAs per weight line
    // the core's window holds too few lines to keep memory busy, and their read order, not their
    // FMAs, sets their pace. So each of the R rows is one long run through its part of the slab,
    // a whole line of it per step (each load instruction then strides a line, which reads faster
    // than half a line), and each run asks for its line line_prefetch_bytes ahead
    // (bench/journal/2026-12-03-far-apart-whole-lines.md). Both halves of a line go into the same
    // accumulator, so every lane sums its columns in order, as in the other tiles.
    template <std::size_t M, std::size_t R>
    static void lines(const Tile& t) {
        constexpr std::size_t width = 8;
        __m256 acc[M][R];  // (row of x, weight row) partial sums
        for (auto& by_x_row : acc) {
            for (auto& a : by_x_row) a = _mm256_setzero_ps();
        }
        const auto row_of = [&](std::size_t r) { return t.w + r * t.spread * t.ldw; };
        // Columns [i, i + width), read by load (whole vectors, or masked at the ragged end).
        const auto step = [&](std::size_t i, const auto& load) {
            __m256 wv[R];
            for (std::size_t r = 0; r < R; ++r) {
                wv[r] = load(row_of(r) + i);
                // Else GCC folds each weight load into the M FMAs that use it.
                if constexpr (weights_in_registers(M, R)) keep_in_register(wv[r]);
            }
            for (std::size_t m = 0; m < M; ++m) {
                __m256 xv = load(t.x + m * t.ldx + i);
                keep_in_register(xv);
                for (std::size_t r = 0; r < R; ++r) acc[m][r] = _mm256_fmadd_ps(xv, wv[r], acc[m][r]);
            }
        };
        const auto whole = [](const float* p) { return _mm256_loadu_ps(p); };
        std::size_t i = 0;
        for (; i + line_floats <= t.len; i += line_floats) {
            // Near the chunk's end, the start of the same chunk in the run's next row: the next tile's.
            const std::size_t ahead = i + line_prefetch_bytes / sizeof(float);
            const std::size_t column = ahead < t.len ? ahead : t.ldw + ahead - t.len;
            for (std::size_t r = 0; r < R; ++r) {
                prefetch<PrefetchTo::l1>(address_of(row_of(r)) + column * sizeof(float));
            }
            step(i, whole);
            step(i + width, whole);
        }
        if (i + width <= t.len) {
            step(i, whole);
            i += width;
        }
        if (i < t.len) {
            const __m256i mask = first_lanes(t.len - i);
            step(i, [&](const float* p) { return _mm256_maskload_ps(p, mask); });
        }
        for (std::size_t m = 0; m < M; ++m) {
            for (std::size_t r = 0; r < R; ++r) store(reduce_add(acc[m][r]), t.beta, t.y + m * t.ldy + r * t.spread);
        }
    }

    // Rows [0, M) of x in passes of at most P rows. With PassPrefetch::spread each pass
    // prefetches its share of the later tile's lines (pass k of n the lines k, k + n, ...):
    // asked for by the first pass alone, they would have to arrive within that pass, faster than
    // memory delivered to two cores of a Zen 5 guest
    // (bench/journal/2026-12-02-prefetches-spread-over-passes.md). On an Intel Xeon guest the
    // first pass asking for all of them was the faster (first_pass, the share of a single pass;
    // bench/journal/2026-12-05-v3-passes-prefetch-by-vendor.md).
    template <std::size_t M, std::size_t P, std::size_t R, bool Prefetch, PrefetchTo to, std::size_t Pass = 0,
              std::size_t Passes = pass_prefetch == PassPrefetch::spread ? (M + P - 1) / P : 1>
    static void passes(const Tile& t) {
        constexpr std::size_t rows = M < P ? M : P;
        block<rows, R, Prefetch, to, Pass, Passes>(t);
        if constexpr (M > P) {
            Tile rest = t;
            rest.x += P * t.ldx;
            rest.y += P * t.ldy;
            passes<M - P, P, R, Prefetch, to, Pass + 1, Passes>(rest);
        }
    }

    template <std::size_t M, std::size_t R, bool Prefetch, PrefetchTo to, std::size_t Pass, std::size_t Passes>
    static void block(const Tile& t) {
        constexpr std::size_t width = 8;
        const float* x = t.x;
        const float* w = t.w;
        __m256 acc[M][R];  // (n_rows, tile_rows) vector partial sums
        for (auto& row : acc) {
            for (auto& a : row) a = _mm256_setzero_ps();
        }
        // The ragged end: the n < width columns at i, the rest of the vector read as 0.
        const auto partial_step = [&](std::size_t i, std::size_t n) {
            const __m256i mask = first_lanes(n);
            __m256 wv[R];
            for (std::size_t r = 0; r < R; ++r) {
                wv[r] = _mm256_maskload_ps(w + r * t.ldw + i, mask);
            }
            for (std::size_t m = 0; m < M; ++m) {
                const __m256 xv = _mm256_maskload_ps(x + m * t.ldx + i, mask);
                for (std::size_t r = 0; r < R; ++r) {
                    acc[m][r] = _mm256_fmadd_ps(xv, wv[r], acc[m][r]);
                }
            }
        };
        std::size_t i = 0;
        for (; i + width <= t.len; i += width) {
            __m256 wv[R];
            for (std::size_t r = 0; r < R; ++r) {
                wv[r] = _mm256_loadu_ps(w + r * t.ldw + i);
                // Else GCC folds each weight load into the M FMAs that use it: M loads where one will do.
                keep_in_register(wv[r]);
                if constexpr (Prefetch) {
                    if (i % (line_floats * Passes) == Pass * line_floats) {
                        prefetch<to>(t.next + (r * t.ldw + i) * sizeof(float));
                    }
                }
            }
            for (std::size_t m = 0; m < M; ++m) {
                __m256 xv = _mm256_loadu_ps(x + m * t.ldx + i);
                keep_in_register(xv);
                for (std::size_t r = 0; r < R; ++r) {
                    acc[m][r] = _mm256_fmadd_ps(xv, wv[r], acc[m][r]);
                }
            }
        }
        if (i < t.len) partial_step(i, t.len - i);
        for (std::size_t m = 0; m < M; ++m) {
            for (std::size_t r = 0; r < R; ++r) {
                store(reduce_add(acc[m][r]), t.beta, t.y + m * t.ldy + r);
            }
        }
    }
};
// The AVX2 tiles with each pass prefetching its share: what runs off Intel, and in Avx512Table,
// whose AVX2 tiles run no passes.
using Avx2Isa = Avx2IsaFor<PassPrefetch::spread>;
#endif

#ifdef __AVX512F__
// Not _mm512_reduce_add_ps or _mm512_castps512_ps256: in GCC 12 both expand to an extract
// whose _mm256_undefined_pd operand trips -Wuninitialized. The zero-masked extract has no
// undefined operand and compiles to the same vextractf64x4.
inline float reduce_add(__m512 v) {
    const __m512d d = _mm512_castps_pd(v);
    return reduce_add(_mm256_add_ps(_mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xff, d, 0)),
                                    _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xff, d, 1))));
}

// 32 zmm registers: the budget rule of Avx2Isa with twice the room. Each x vector loaded
// feeds tile_rows FMAs, so the larger tiles load less per FMA. Used up to zmm_max_rows rows
// of x only (see Avx512Table).
struct Avx512Isa {
    // One row of x reads four weight rows far apart, as Avx2Isa::streams, two lines of each
    // per step (two zmm accumulators per output): faster than 8 adjacent rows on a 1024-wide W,
    // no slower on a 4096-wide one. Two rows of x keep the adjacent tile, where four streams with
    // 16 accumulators read slower (bench/journal/2026-12-02-one-row-of-x-as-four-streams.md).
    static constexpr std::size_t tile_rows(std::size_t m, PrefetchTo to) {
        return spread(m, to) ? spread_streams : choices.zmm_tile_rows;
    }
    static constexpr bool spread(std::size_t m, PrefetchTo) { return m == 1; }
    static constexpr bool whole_runs(std::size_t, PrefetchTo) { return false; }

    // y[r · spread] for the R weight rows at t.w + r · spread · ldw, one row of x; rows computed
    // alone (R = 1) sum in the same order.
    template <std::size_t R>
    static void streams(const Tile& t) {
        constexpr std::size_t width = 16;
        __m512 acc[R][2];  // (weight row, even or odd vector of the step) partial sums
        for (auto& row : acc) row[0] = row[1] = _mm512_setzero_ps();
        const auto row_of = [&](std::size_t r) { return t.w + r * t.spread * t.ldw; };
        std::size_t i = 0;
        for (; i + 2 * width <= t.len; i += 2 * width) {
            const __m512 x0 = _mm512_loadu_ps(t.x + i);
            const __m512 x1 = _mm512_loadu_ps(t.x + i + width);
            for (std::size_t r = 0; r < R; ++r) {
                acc[r][0] = _mm512_fmadd_ps(x0, _mm512_loadu_ps(row_of(r) + i), acc[r][0]);
                acc[r][1] = _mm512_fmadd_ps(x1, _mm512_loadu_ps(row_of(r) + i + width), acc[r][1]);
            }
        }
        if (i + width <= t.len) {
            const __m512 x0 = _mm512_loadu_ps(t.x + i);
            for (std::size_t r = 0; r < R; ++r) {
                acc[r][0] = _mm512_fmadd_ps(x0, _mm512_loadu_ps(row_of(r) + i), acc[r][0]);
            }
            i += width;
        }
        if (i < t.len) {
            const auto mask = static_cast<__mmask16>((1u << (t.len - i)) - 1u);
            const __m512 x1 = _mm512_maskz_loadu_ps(mask, t.x + i);
            for (std::size_t r = 0; r < R; ++r) {
                acc[r][1] = _mm512_fmadd_ps(x1, _mm512_maskz_loadu_ps(mask, row_of(r) + i), acc[r][1]);
            }
        }
        for (std::size_t r = 0; r < R; ++r) {
            store(reduce_add(_mm512_add_ps(acc[r][0], acc[r][1])), t.beta, t.y + r * t.spread);
        }
    }

    template <std::size_t M, std::size_t R, PrefetchTo to>
    static void tile(const Tile& t) {
        if constexpr (spread(M, to)) {
            streams<R>(t);
        } else {
            adjacent<M, R, to>(t);
        }
    }

    // M rows of x times R adjacent weight rows.
    template <std::size_t M, std::size_t R, PrefetchTo to>
    static void adjacent(const Tile& t) {
        constexpr std::size_t width = 16;
        const float* x = t.x;
        const float* w = t.w;
        __m512 acc[M][R];  // (n_rows, tile_rows) vector partial sums
        for (auto& row : acc) {
            for (auto& a : row) a = _mm512_setzero_ps();
        }
        // The ragged end: the n < width columns at i, the rest of the vector read as 0.
        const auto partial_step = [&](std::size_t i, std::size_t n) {
            const auto mask = static_cast<__mmask16>((1u << n) - 1u);
            __m512 wv[R];
            for (std::size_t r = 0; r < R; ++r) {
                wv[r] = _mm512_maskz_loadu_ps(mask, w + r * t.ldw + i);
            }
            for (std::size_t m = 0; m < M; ++m) {
                const __m512 xv = _mm512_maskz_loadu_ps(mask, x + m * t.ldx + i);
                for (std::size_t r = 0; r < R; ++r) {
                    acc[m][r] = _mm512_fmadd_ps(xv, wv[r], acc[m][r]);
                }
            }
        };
        std::size_t i = 0;
        for (; i + width <= t.len; i += width) {
            __m512 wv[R];
            for (std::size_t r = 0; r < R; ++r) {
                wv[r] = _mm512_loadu_ps(w + r * t.ldw + i);
                if constexpr (M >= min_rows_to_prefetch) {
                    prefetch<to>(t.next + (r * t.ldw + i) * sizeof(float));
                }
            }
            for (std::size_t m = 0; m < M; ++m) {
                __m512 xv = _mm512_loadu_ps(x + m * t.ldx + i);
                keep_in_register(xv);
                for (std::size_t r = 0; r < R; ++r) {
                    acc[m][r] = _mm512_fmadd_ps(xv, wv[r], acc[m][r]);
                }
            }
        }
        if (i < t.len) partial_step(i, t.len - i);
        for (std::size_t m = 0; m < M; ++m) {
            for (std::size_t r = 0; r < R; ++r) {
                store(reduce_add(acc[m][r]), t.beta, t.y + m * t.ldy + r);
            }
        }
    }
};
#endif

template <class Isa, std::size_t M, PrefetchTo to>
constexpr SlabKernel slab_kernel() {
    constexpr std::size_t tile_rows = Isa::tile_rows(M, to);
    return {&Isa::template tile<M, tile_rows, to>, &Isa::template tile<M, 1, to>, tile_rows, Isa::spread(M, to),
            Isa::whole_runs(M, to)};
}

// A kernel table: Table::kernel<M, to>() runs M rows of x.
template <class Isa>
struct OneIsaTable {
    template <std::size_t M, PrefetchTo to>
    static constexpr SlabKernel kernel() {
        return slab_kernel<Isa, M, to>();
    }
};

#ifdef __AVX512F__
// Where AVX-512 is there, zmm tiles up to zmm_max_rows rows of x and ymm tiles (in 32
// registers, so never in passes) above: streaming a cold W the ymm kernel is the faster one
// from 3 or 4 rows on, although it is the slower one on a W in cache
// (bench/journal/2026-11-30-small-m-projection-choices.md).
constexpr std::size_t zmm_max_rows = choices.zmm_max_rows;
struct Avx512Table {
    template <std::size_t M, PrefetchTo to>
    static constexpr SlabKernel kernel() {
        if constexpr (M <= zmm_max_rows) {
            return slab_kernel<Avx512Isa, M, to>();
        } else {
            return slab_kernel<Avx2Isa, M, to>();
        }
    }
};
#endif

// Entry m - 1 is the kernel for m rows of x.
template <class Table, PrefetchTo to, std::size_t... I>
constexpr std::array<SlabKernel, sizeof...(I)> kernel_table(std::index_sequence<I...>) {
    return {Table::template kernel<I + 1, to>()...};
}

template <class Table, PrefetchTo to>
constexpr std::array<SlabKernel, small_m_max_rows> kernels =
    kernel_table<Table, to>(std::make_index_sequence<small_m_max_rows>{});

template <class Table>
SlabKernel kernel_of(PrefetchTo to, std::size_t n_rows) {
    return to == PrefetchTo::l1 ? kernels<Table, PrefetchTo::l1>[n_rows - 1] : kernels<Table, PrefetchTo::l2>[n_rows - 1];
}

// The widest path compiled, what the default overload runs.
constexpr SmallMIsa best_isa =
#if defined(__AVX512F__)
    SmallMIsa::avx512;
#elif defined(__AVX2__)
    SmallMIsa::avx2;
#else
    SmallMIsa::scalar;
#endif

// pass_prefetch: read by the AVX2 tiles only, so unused where AVX2 is not compiled.
SlabKernel kernel_for(SmallMIsa isa, PrefetchTo to, [[maybe_unused]] PassPrefetch pass_prefetch,
                      std::size_t n_rows) {
    switch (isa) {
#ifdef __AVX512F__
        // Its AVX2 tiles have 32 registers and run no passes.
        case SmallMIsa::avx512: return kernel_of<Avx512Table>(to, n_rows);
#endif
#ifdef __AVX2__
        case SmallMIsa::avx2:
            return pass_prefetch == PassPrefetch::spread
                       ? kernel_of<OneIsaTable<Avx2Isa>>(to, n_rows)
                       : kernel_of<OneIsaTable<Avx2IsaFor<PassPrefetch::first_pass>>>(to, n_rows);
#endif
        default: return kernel_of<OneIsaTable<ScalarIsa>>(to, n_rows);
    }
}

}  // namespace

std::vector<SmallMIsa> small_m_isas() {
    std::vector<SmallMIsa> isas{SmallMIsa::scalar};
#ifdef __AVX2__
    isas.push_back(SmallMIsa::avx2);
#endif
#ifdef __AVX512F__
    isas.push_back(SmallMIsa::avx512);
#endif
    return isas;
}

const char* isa_name(SmallMIsa isa) {
    switch (isa) {
        case SmallMIsa::avx512: return "avx512";
        case SmallMIsa::avx2: return "avx2";
        default: return "scalar";
    }
}

SmallML1 small_m_l1() {
    // An L1 of unknown size (0) takes the 48 KiB choice, the one measured first.
    const std::size_t l1d = l1_data_cache_bytes();
    return l1d > 0 && l1d < l1_fits_chunk_bytes ? SmallML1::kib32 : SmallML1::kib48;
}

PassPrefetch host_pass_prefetch() {
    const bool first_pass = choices.passes_prefetch_from_first_on_intel && on_intel_cpu();
    return first_pass ? PassPrefetch::first_pass : PassPrefetch::spread;
}

void small_m_gemm(const float* x, std::size_t n_rows, std::size_t in_dim, const float* w,
                  std::size_t out_dim, float beta, float* y, SmallMIsa isa, SmallML1 l1,
                  PassPrefetch pass_prefetch) {
    assert(n_rows >= 1 && n_rows <= small_m_max_rows && in_dim >= 1);
    const PrefetchTo to = prefetch_to(l1);
    const SlabKernel kernel = kernel_for(isa, to, pass_prefetch, n_rows);
    const std::size_t tile_rows = kernel.tile_rows;
    const std::size_t n_tiles = out_dim / tile_rows;
    // Columns per chunk: a multiple of a 4 KiB page of floats when it can be (even chunks of a
    // multiple of 64 floats when not), so that the chunks of page-aligned weight rows start at
    // page boundaries. Chunks and vector lanes follow column numbers, never addresses: the
    // sums, and so the bits of y, must not depend on where W happens to be allocated.
    const std::size_t max_cols = chunk_cols_at_most(n_rows, tile_rows, kernel.whole_runs, to);
    const std::size_t chunk_cols = max_cols >= page_floats ? max_cols / page_floats * page_floats
                                                           : even_chunk_cols(in_dim, max_cols);
#pragma omp parallel if (out_dim * in_dim >= min_parallel_weights)
    {
        const auto n_threads = static_cast<std::size_t>(omp_get_num_threads());
        const auto thread = static_cast<std::size_t>(omp_get_thread_num());
        // Whole tiles are dealt out evenly as contiguous slabs; the last thread also takes the
        // rows after the last whole tile.
        const std::size_t first = n_tiles * thread / n_threads * tile_rows;
        const std::size_t last =
            thread + 1 == n_threads ? out_dim : n_tiles * (thread + 1) / n_threads * tile_rows;
        // (n_rows, chunk_cols) floats: the chunk of x, copied to cache-line-aligned rows so that
        // the tiles' vector loads of x never straddle two lines.
        // Static: a 128 KiB array on the stack of an OpenMP worker could overflow a small one.
        alignas(64) static thread_local std::array<float, l2_chunk_bytes / sizeof(float)> staged;
        Tile t{};
        t.x = staged.data();
        t.ldx = chunk_cols;
        t.ldw = in_dim;
        t.ldy = out_dim;
        for (std::size_t k0 = 0; k0 < in_dim && first < last; k0 += chunk_cols) {
            t.len = std::min(chunk_cols, in_dim - k0);
            t.beta = k0 == 0 ? beta : 1.0f;  // later chunks add to the partial sums
            for (std::size_t m = 0; m < n_rows; ++m) {
                std::copy_n(x + m * in_dim + k0, t.len, staged.data() + m * chunk_cols);
            }
            // The slab's last tiles prefetch the slab's first in the next chunk.
            const std::uintptr_t next_chunk = address_of(w + first * in_dim + k0 + t.len);
            const std::size_t rows_ahead = tiles_ahead(to, tile_rows, t.len) * tile_rows;
            std::size_t o = first;
            if (kernel.spread) {
                // Tile k takes row k of each of the tile_rows runs (these kernels do not prefetch);
                // the rows after the runs, alone.
                t.spread = (last - first) / tile_rows;
                for (std::size_t k = 0; k < t.spread; ++k) {
                    t.w = w + (first + k) * in_dim + k0;
                    t.y = y + first + k;
                    kernel.tile(t);
                }
                o = first + tile_rows * t.spread;
            } else {
                for (; o + tile_rows <= last; o += tile_rows) {
                    t.w = w + o * in_dim + k0;
                    t.y = y + o;
                    t.next = o + rows_ahead < last ? address_of(t.w + rows_ahead * in_dim) : next_chunk;
                    kernel.tile(t);
                }
            }
            for (; o < last; ++o) {
                t.w = w + o * in_dim + k0;
                t.y = y + o;
                t.next = o + 1 < last ? address_of(t.w + in_dim) : next_chunk;
                kernel.row(t);
            }
        }
    }
}

void small_m_gemm(const float* x, std::size_t n_rows, std::size_t in_dim, const float* w,
                  std::size_t out_dim, float beta, float* y, SmallMIsa isa) {
    static const PassPrefetch pass_prefetch = host_pass_prefetch();
    small_m_gemm(x, n_rows, in_dim, w, out_dim, beta, y, isa, small_m_l1(), pass_prefetch);
}

void small_m_gemm(const float* x, std::size_t n_rows, std::size_t in_dim, const float* w,
                  std::size_t out_dim, float beta, float* y) {
    small_m_gemm(x, n_rows, in_dim, w, out_dim, beta, y, best_isa);
}

}  // namespace kvbench
