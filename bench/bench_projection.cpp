// BM_Linear: linear(), the projections of a step, at model shapes: a few rows times a D x D weight,
// with the last-level cache evicted before every iteration (cold) or not (warm). BM_LinearTyped:
// the same with the weight stored in each element type (--weight-dtype).
#include "bench_support.hpp"

#include "kvbench/engine/linear.hpp"
#include "kvbench/engine/page_aligned.hpp"
#include "kvbench/engine/weight_matrix.hpp"

#include <algorithm>
#include <chrono>

namespace kvbench::bench {
namespace {

// Cold iterations each pay a flush of 4 × LLC outside the timed region: a fixed count
// bounds their wall time.
constexpr benchmark::IterationCount cold_iterations = 30;

// Args: rows (B tokens), D, cold (1 = flush the LLC before each iteration, 0 = warm).
// W is (D, D), the shape of Wq and Wo; the fused Wqkv of MHA is 3 of them. W is page-aligned,
// as the model's weights are. Timed manually, so that the flush stays outside.
void BM_Linear(benchmark::State& state) {
    use_all_cores();
    const std::size_t n_rows = arg(state, 0);
    const std::size_t dim = arg(state, 1);
    const bool cold = state.range(2) != 0;
    const std::vector<float> x = random_floats(n_rows * dim, 1);  // (n_rows, dim)
    const std::vector<float> w_values = random_floats(dim * dim, 2);
    PageAlignedVector<float> w(w_values.begin(), w_values.end());  // (dim, dim), W^T
    std::vector<float> y(n_rows * dim);                            // (n_rows, dim)
    CacheFlusher* flusher = cold ? &shared_flusher() : nullptr;

    for (auto _ : state) {
        if (flusher != nullptr) flusher->flush();
        const auto start = std::chrono::steady_clock::now();
        benchmark::DoNotOptimize(linear(x.data(), n_rows, dim, w.data(), dim, 0.0f, y.data()));
        benchmark::ClobberMemory();
        const auto stop = std::chrono::steady_clock::now();
        state.SetIterationTime(std::chrono::duration<double>(stop - start).count());
    }
    benchmark::DoNotOptimize(y.data());

    // 2·rows·D·D FLOPs; the traffic that matters is the weight, streamed once per call
    // for all rows (x and y are rows·D floats each, negligible). Warm, a weight that fits
    // in the LLC (4 MiB at D = 1024; on large-LLC machines also the 64 MiB at D = 4096)
    // is read from cache, so its bytes/s is cache bandwidth, not DRAM's: cold is the
    // figure to hold against the roofline's read bandwidth.
    const std::uint64_t rows = n_rows, d = dim;
    set_rate_counters(state, 2 * rows * d * d, d * d * 4);
}

BENCHMARK(BM_Linear)
    ->ArgNames({"rows", "D", "cold"})
    ->ArgsProduct({{1, 2, 3, 4, 6, 8}, {1024, 4096}, {0}})
    ->MinTime(0.1)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

// From 9 rows (a serving batch) AVX-512 builds take the rows-in-lanes kernel (linear.cpp).
BENCHMARK(BM_Linear)
    ->ArgNames({"rows", "D", "cold"})
    ->ArgsProduct({{1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64}, {1024, 4096}, {1}})
    ->Iterations(cold_iterations)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

// Args: rows, D, weight type (WeightDtype: 0 f32, 1 bf16, 2 f16, 3 int8), cold. Cold is how the
// step reads its weights. Warm shows what the tile computes when W is already near the core: at
// D = 1024 each core's half of a bf16 or f16 W is 1 MiB (of int8 half that), within a 2 MiB L2,
// so its FLOP/s is the tile's arithmetic ceiling, which bounds the cold read from above. Bytes are
// the stored matrix's, int8's scales included, so bytes/s is held against the roofline's read
// bandwidth whatever the type.
void BM_LinearTyped(benchmark::State& state) {
    use_all_cores();
    const std::size_t n_rows = arg(state, 0);
    const std::size_t dim = arg(state, 1);
    const auto dtype = static_cast<WeightDtype>(state.range(2));
    const bool cold = state.range(3) != 0;
    const std::vector<float> x = random_floats(n_rows * dim, 1);  // (n_rows, dim)
    const WeightMatrix w(dtype, dim, dim, random_floats(dim * dim, 2));
    std::vector<float> y(n_rows * dim);  // (n_rows, dim)
    CacheFlusher* flusher = cold ? &shared_flusher() : nullptr;

    for (auto _ : state) {
        if (flusher != nullptr) flusher->flush();
        const auto start = std::chrono::steady_clock::now();
        benchmark::DoNotOptimize(linear(x.data(), n_rows, dim, w.view(), dim, 0.0f, y.data()));
        benchmark::ClobberMemory();
        const auto stop = std::chrono::steady_clock::now();
        state.SetIterationTime(std::chrono::duration<double>(stop - start).count());
    }
    benchmark::DoNotOptimize(y.data());
    state.SetLabel(std::string(weight_dtype_info(dtype).name));
    const std::uint64_t rows = n_rows, d = dim;
    set_rate_counters(state, 2 * rows * d * d, w.bytes());
}

BENCHMARK(BM_LinearTyped)
    ->ArgNames({"rows", "D", "dtype", "cold"})
    ->ArgsProduct({{1, 2, 3, 4, 6, 8, 16, 32}, {4096}, {0, 1, 2, 3}, {1}})
    ->Iterations(cold_iterations)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_LinearTyped)
    ->ArgNames({"rows", "D", "dtype", "cold"})
    ->ArgsProduct({{1, 8}, {1024, 4096}, {0, 1, 2, 3}, {0}})
    ->MinTime(0.1)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace kvbench::bench
