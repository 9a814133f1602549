// BM_DecodeStep and BM_ForwardFull: one whole step of the cached and of the uncached path
// (docs/model.md#paths), over MHA, GQA and MQA, with the analytic FLOPs and bytes of docs/counting.md as rate counters.
#include "bench_support.hpp"

#include "kvbench/engine/cost_model.hpp"
#include "kvbench/engine/decoder.hpp"
#include "kvbench/engine/weights.hpp"

#include <exception>

namespace kvbench::bench {
namespace {

// Args: B, N, D, H, G (one layer). Cached step at context N: the cache holds N-1
// positions, the step appends the N-th and is rolled back after each iteration.
void BM_DecodeStep(benchmark::State& state) {
    const std::size_t n_threads = use_all_cores();
    const std::optional<ModelConfig> parsed = config_or_skip(state);
    if (!parsed) return;
    const ModelConfig& config = *parsed;
    const std::size_t n_ctx = config.seq_len;
    const ModelWeights weights = make_weights(config, seed);
    KvCache cache(config, n_ctx);
    fill_cache(config, cache, n_ctx - 1);
    DecodeScratch scratch(config, n_ctx, n_threads);
    const std::vector<float> x_in = random_floats(config.n_batch * config.model_dim, 1);  // (n_batch, model_dim)
    std::vector<float> x_out(x_in.size());                                               // (n_batch, model_dim)

    for (auto _ : state) {
        cache.roll_back(n_ctx - 1);  // sets a length: nothing to keep out of the timing
        benchmark::DoNotOptimize(decode_step(config, weights, cache, x_in.data(), x_out.data(), scratch));
        benchmark::ClobberMemory();
    }
    benchmark::DoNotOptimize(x_out.data());

    set_rate_counters(state, step_flops(config, DecodePath::cached), step_bytes(config, DecodePath::cached));
    state.SetLabel(grouping_label(config.n_heads, config.n_kv_heads));
}

// Args: B, N, D, H, G (one layer). The uncached path: the full causal forward of N tokens.
void BM_ForwardFull(benchmark::State& state) {
    const std::size_t n_threads = use_all_cores();
    const std::optional<ModelConfig> parsed = config_or_skip(state);
    if (!parsed) return;
    const ModelConfig& config = *parsed;
    const ModelWeights weights = make_weights(config, seed);
    ForwardScratch scratch(config, n_threads);
    const std::vector<float> x_in = make_inputs(config, seed);  // (n_batch, seq_len, model_dim)
    std::vector<float> x_out(x_in.size());                     // (n_batch, seq_len, model_dim)

    for (auto _ : state) {
        benchmark::DoNotOptimize(forward_full(config, weights, x_in.data(), x_out.data(), scratch));
        benchmark::ClobberMemory();
    }
    benchmark::DoNotOptimize(x_out.data());

    set_rate_counters(state, step_flops(config, DecodePath::uncached),
                      step_bytes(config, DecodePath::uncached));
    state.SetLabel(grouping_label(config.n_heads, config.n_kv_heads));
}

// D = 2048, H = 16 (dh = 128): MHA, GQA-4 and MQA.
BENCHMARK(BM_DecodeStep)
    ->ArgNames({"B", "N", "D", "H", "G"})
    ->ArgsProduct({{1}, {512, 4096}, {2048}, {16}, {16, 4, 1}})
    ->MinTime(0.1)
    ->UseRealTime()  // threaded: CPU time would add up both cores
    ->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_ForwardFull)
    ->ArgNames({"B", "N", "D", "H", "G"})
    ->ArgsProduct({{1}, {512}, {2048}, {16}, {16, 4, 1}})
    ->MinTime(0.1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kvbench::bench
