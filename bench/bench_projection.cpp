// BM_Linear: linear(), the projections of a step, at model shapes: a few rows times a D x D weight.
#include "bench_support.hpp"

#include "kvbench/engine/linear.hpp"

namespace kvbench::bench {
namespace {

// Args: rows (B tokens), D. W is (D, D), the shape of Wq and Wo; the fused Wqkv of MHA is 3 of them.
void BM_Linear(benchmark::State& state) {
    use_all_cores();
    const std::size_t n_rows = arg(state, 0);
    const std::size_t dim = arg(state, 1);
    const std::vector<float> x = random_floats(n_rows * dim, 1);                     // (n_rows, dim)
    const std::vector<float> w = random_floats(dim * dim, 2);                        // (dim, dim), W^T
    std::vector<float> y(n_rows * dim);                                             // (n_rows, dim)

    for (auto _ : state) {
        benchmark::DoNotOptimize(linear(x.data(), n_rows, dim, w.data(), dim, 0.0f, y.data()));
        benchmark::ClobberMemory();
    }
    benchmark::DoNotOptimize(y.data());

    // 2·rows·D·D FLOPs; the traffic that matters is the weight, streamed once per call
    // for all rows (x and y are rows·D floats each, negligible). At D = 1024 the 4 MiB
    // weight stays in the LLC, so its bytes/s is cache bandwidth, not DRAM's.
    const std::uint64_t rows = n_rows, d = dim;
    set_rate_counters(state, 2 * rows * d * d, d * d * 4);
}

BENCHMARK(BM_Linear)
    ->ArgNames({"rows", "D"})
    ->ArgsProduct({{1, 2, 4, 8}, {1024, 4096}})
    ->MinTime(0.1)
    ->UseRealTime()  // threaded: CPU time would add up both cores
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace kvbench::bench
