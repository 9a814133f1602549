// BM_HighwayLinear: the small-M projection of small_m_gemm.cpp written once with Google Highway
// (runtime dispatch over SSE4, AVX2, AVX-512, NEON, SVE), timed beside linear() on the same
// shapes: the measurement behind the choice of hand-written back-ends
// (bench/journal/2026-12-01-highway-or-hand-written.md).
//
// The port keeps small_m_gemm's algorithm, so that only the way it is written differs: the
// chunk of x staged in L1, tiles of weight rows each loaded once per vector for every row of
// x, rows of x in passes of at most 4 over a tile where 16 registers cannot hold them all,
// horizontal sums per chunk, a slab of W per thread. It leaves out what Highway cannot say
// portably: the asm that keeps a vector in a register. The prefetch of the next tile is
// hwy::Prefetch.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "bench_highway.cpp"
#include <hwy/foreach_target.h>  // re-includes this file once per target

#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include <omp.h>

#include <algorithm>
#include <array>
#include <type_traits>
#include <cstddef>

HWY_BEFORE_NAMESPACE();
namespace kvbench::bench::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// As small_m_gemm.cpp: 32 KiB of x per chunk.
constexpr std::size_t x_chunk_bytes = 32 * 1024;
constexpr std::size_t page_floats = 4096 / sizeof(float);

struct Chunk {
    const float* x;  // (n_rows, ldx), staged
    std::size_t ldx;
    const float* w;  // (tile rows, ldw) at the chunk's first column
    std::size_t ldw;
    const float* next;  // the next tile's weights, prefetched meanwhile as small_m_gemm does
    std::size_t len;
    bool accumulate;  // later chunks add to y
    float* y;         // at the tile's first output
    std::size_t ldy;
};

// M rows of x times R weight rows over one chunk.
template <std::size_t M, std::size_t R, bool Prefetch>
void tile(const Chunk& c) {
    const hn::ScalableTag<float> d;
    using V = hn::Vec<decltype(d)>;
    const std::size_t lanes = hn::Lanes(d);
    V acc[M][R];
    for (auto& row : acc) {
        for (auto& a : row) a = hn::Zero(d);
    }
    std::size_t i = 0;
    for (; i + lanes <= c.len; i += lanes) {
        V w[R];
        for (std::size_t r = 0; r < R; ++r) {
            w[r] = hn::LoadU(d, c.w + r * c.ldw + i);
            if constexpr (Prefetch) {
                if (i % 16 == 0) hwy::Prefetch(c.next + r * c.ldw + i);
            }
        }
        for (std::size_t m = 0; m < M; ++m) {
            const V x = hn::LoadU(d, c.x + m * c.ldx + i);
            for (std::size_t r = 0; r < R; ++r) acc[m][r] = hn::MulAdd(x, w[r], acc[m][r]);
        }
    }
    for (std::size_t m = 0; m < M; ++m) {
        for (std::size_t r = 0; r < R; ++r) {
            float sum = hn::GetLane(hn::SumOfLanes(d, acc[m][r]));
            for (std::size_t k = i; k < c.len; ++k) sum += c.x[m * c.ldx + k] * c.w[r * c.ldw + k];
            float* dst = c.y + m * c.ldy + r;
            *dst = c.accumulate ? *dst + sum : sum;
        }
    }
}

// small_m_gemm's AVX2 shapes (16 registers): rows of x per pass and weight rows per tile.
constexpr std::size_t pass_rows(std::size_t m) { return m >= 7 ? 4 : m; }
constexpr std::size_t tile_rows(std::size_t m) {
    const std::size_t p = pass_rows(m);
    return p == 1 ? 8 : p == 2 ? 5 : p <= 4 ? 3 : 2;
}

template <std::size_t M>
void slab(const Chunk& chunk, std::size_t first, std::size_t last) {
    constexpr std::size_t P = pass_rows(M);
    constexpr std::size_t R = tile_rows(M);
    Chunk c = chunk;
    std::size_t o = first;
    const auto passes = [&](auto tile_fn_rows) {
        constexpr std::size_t rows_per_tile = decltype(tile_fn_rows)::value;
        for (std::size_t m0 = 0; m0 < M; m0 += P) {
            Chunk part = c;
            part.x += m0 * c.ldx;
            part.y += m0 * c.ldy;
            // As small_m_gemm: from 3 rows of x on, the first pass prefetches.
            if (m0 == 0) {
                tile<P, rows_per_tile, (M >= 3)>(part);
            } else if (M - m0 >= P) {
                tile<P, rows_per_tile, false>(part);
            } else {
                tile<M % P == 0 ? P : M % P, rows_per_tile, false>(part);
            }
        }
    };
    for (; o + R <= last; o += R) {
        c.w = chunk.w + o * chunk.ldw;
        c.next = c.w + R * chunk.ldw;  // past the slab: a prefetch never faults
        c.y = chunk.y + o;
        passes(std::integral_constant<std::size_t, R>{});
    }
    for (; o < last; ++o) {
        c.w = chunk.w + o * chunk.ldw;
        c.next = c.w + chunk.ldw;
        c.y = chunk.y + o;
        passes(std::integral_constant<std::size_t, 1>{});
    }
}

template <std::size_t M>
void project_rows(const float* x, std::size_t in_dim, const float* w, std::size_t out_dim, float* y) {
    const std::size_t tile = tile_rows(M);
    const std::size_t n_tiles = out_dim / tile;
    const std::size_t max_cols = x_chunk_bytes / (M * sizeof(float));
    const std::size_t chunk_cols = max_cols >= page_floats ? max_cols / page_floats * page_floats
                                                           : std::max<std::size_t>(64, max_cols / 64 * 64);
#pragma omp parallel
    {
        const auto n_threads = static_cast<std::size_t>(omp_get_num_threads());
        const auto thread = static_cast<std::size_t>(omp_get_thread_num());
        const std::size_t first = n_tiles * thread / n_threads * tile;
        const std::size_t last = thread + 1 == n_threads ? out_dim : n_tiles * (thread + 1) / n_threads * tile;
        alignas(64) std::array<float, x_chunk_bytes / sizeof(float)> staged;
        for (std::size_t k0 = 0; k0 < in_dim && first < last; k0 += chunk_cols) {
            const std::size_t len = std::min(chunk_cols, in_dim - k0);
            for (std::size_t m = 0; m < M; ++m) std::copy_n(x + m * in_dim + k0, len, staged.data() + m * chunk_cols);
            const Chunk c{staged.data(), chunk_cols, w + k0, in_dim, nullptr, len, k0 != 0, y, out_dim};
            slab<M>(c, first, last);
        }
    }
}

// y (n_rows, out_dim) = x (n_rows, in_dim) · W^T, W (out_dim, in_dim); 1 <= n_rows <= 8.
void highway_project(const float* x, std::size_t n_rows, const float* w, std::size_t in_dim, std::size_t out_dim,
                     float* y) {
    switch (n_rows) {
        case 1: return project_rows<1>(x, in_dim, w, out_dim, y);
        case 2: return project_rows<2>(x, in_dim, w, out_dim, y);
        case 3: return project_rows<3>(x, in_dim, w, out_dim, y);
        case 4: return project_rows<4>(x, in_dim, w, out_dim, y);
        case 5: return project_rows<5>(x, in_dim, w, out_dim, y);
        case 6: return project_rows<6>(x, in_dim, w, out_dim, y);
        case 7: return project_rows<7>(x, in_dim, w, out_dim, y);
        default: return project_rows<8>(x, in_dim, w, out_dim, y);
    }
}

}  // namespace kvbench::bench::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "bench_support.hpp"

#include "kvbench/engine/linear.hpp"
#include "kvbench/engine/page_aligned.hpp"

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

namespace kvbench::bench {
HWY_EXPORT(highway_project);

namespace {

constexpr benchmark::IterationCount cold_iterations = 30;

// The target HWY_DYNAMIC_DISPATCH runs: the best one both compiled and supported by this CPU
// (Highway numbers better targets with lower bits).
std::int64_t best_target() {
    const std::int64_t targets = hwy::SupportedTargets() & HWY_TARGETS;
    return targets & -targets;
}

// Args: rows, D, cold, kernel (0 = linear(), kvbench's own; 1 = the Highway port). The same
// data and timing as BM_Linear; the Highway result is checked against linear()'s first.
void BM_HighwayLinear(benchmark::State& state) {
    use_all_cores();
    const std::size_t n_rows = arg(state, 0);
    const std::size_t dim = arg(state, 1);
    const bool cold = state.range(2) != 0;
    const bool highway = state.range(3) != 0;
    const std::vector<float> x = random_floats(n_rows * dim, 1);
    const std::vector<float> w_values = random_floats(dim * dim, 2);
    PageAlignedVector<float> w(w_values.begin(), w_values.end());
    std::vector<float> y(n_rows * dim), expected(n_rows * dim);
    linear(x.data(), n_rows, dim, w.data(), dim, 0.0f, expected.data());
    const auto run = [&] {
        if (highway) {
            HWY_DYNAMIC_DISPATCH(highway_project)(x.data(), n_rows, w.data(), dim, dim, y.data());
        } else {
            linear(x.data(), n_rows, dim, w.data(), dim, 0.0f, y.data());
        }
    };
    run();
    for (std::size_t i = 0; i < y.size(); ++i) {
        // Sums of dim unit-variance products in another order: agree to a few ulps of √dim.
        if (std::abs(y[i] - expected[i]) > 1e-4f * std::sqrt(static_cast<float>(dim))) {
            state.SkipWithError(("the Highway port disagrees with linear() at output " + std::to_string(i)).c_str());
            return;
        }
    }
    CacheFlusher* flusher = cold ? &shared_flusher() : nullptr;
    for (auto _ : state) {
        if (flusher != nullptr) flusher->flush();
        const auto start = std::chrono::steady_clock::now();
        run();
        benchmark::ClobberMemory();
        const auto stop = std::chrono::steady_clock::now();
        state.SetIterationTime(std::chrono::duration<double>(stop - start).count());
    }
    benchmark::DoNotOptimize(y.data());
    const std::uint64_t rows = n_rows, d = dim;
    set_rate_counters(state, 2 * rows * d * d, d * d * 4);
    state.SetLabel(highway ? std::string("highway ") + hwy::TargetName(best_target()) : "kvbench");
}

BENCHMARK(BM_HighwayLinear)
    ->ArgNames({"rows", "D", "cold", "hwy"})
    ->ArgsProduct({{1, 2, 4, 8}, {1024, 4096}, {0}, {0, 1}})
    ->MinTime(0.1)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_HighwayLinear)
    ->ArgNames({"rows", "D", "cold", "hwy"})
    ->ArgsProduct({{1, 2, 4, 8}, {4096}, {1}, {0, 1}})
    ->Iterations(cold_iterations)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace kvbench::bench
#endif
