// What every micro-benchmark shares: thread count, shapes from benchmark args, seeded data, rate counters.
#pragma once

#include "kvbench/engine/blas.hpp"
#include "kvbench/measure/cache_flush.hpp"
#include "kvbench/engine/config.hpp"
#include "kvbench/engine/kv_cache.hpp"
#include "kvbench/engine/rng.hpp"
#include "kvbench/engine/weights.hpp"

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <vector>

namespace kvbench::bench {

inline constexpr std::uint64_t seed = 42;

// All compute runs on every core this process may use, set explicitly rather than
// left to OpenBLAS's default. Returns the thread count.
inline std::size_t use_all_cores() {
    const std::size_t n_threads = available_cores();
    set_compute_threads(n_threads);
    return n_threads;
}

inline std::size_t arg(const benchmark::State& state, std::size_t index) {
    return static_cast<std::size_t>(state.range(index));
}

// Argument layout shared by the attention and step benchmarks: B, N, D, H, G first.
inline ModelConfig config_from_args(const benchmark::State& state) {
    ModelConfig config;
    config.n_batch = arg(state, 0);
    config.seq_len = arg(state, 1);
    config.model_dim = arg(state, 2);
    config.n_heads = arg(state, 3);
    config.n_kv_heads = arg(state, 4);
    config.n_layers = 1;
    validate(config);
    return config;
}

// config_from_args, or the benchmark skipped with the rule the arguments broke.
inline std::optional<ModelConfig> config_or_skip(benchmark::State& state) {
    try {
        return config_from_args(state);
    } catch (const std::exception& e) {
        state.SkipWithError(e.what());
        return std::nullopt;
    }
}

// Uniform values with unit variance, the scale real activations, keys and values have.
inline std::vector<float> random_floats(std::size_t count, std::uint64_t stream) {
    std::vector<float> values(count);
    Rng rng(seed ^ stream);
    fill_uniform(rng, values, std::sqrt(3.0f));
    return values;
}

// Fills positions [0, length) of every layer, batch row and KV head and sets the cache length.
// Requires: length <= cache.max_seq_len().
inline void fill_cache(const ModelConfig& config, KvCache& cache, std::size_t length) {
    fill_cache_seeded(config, cache, length, seed);
}

// One flusher for the process: its buffer (4 × LLC) is allocated and first-touched once.
// Requires: the compute threads are set before the first call.
inline CacheFlusher& shared_flusher() {
    static CacheFlusher flusher;
    return flusher;
}

// FLOP/s and bytes/s of one iteration's analytic counts, divided by the benchmark's time
// (real or manual, whichever it uses).
inline void set_rate_counters(benchmark::State& state, std::uint64_t flops, std::uint64_t bytes) {
    state.counters["FLOP/s"] =
        benchmark::Counter(static_cast<double>(flops), benchmark::Counter::kIsIterationInvariantRate);
    state.counters["bytes/s"] =
        benchmark::Counter(static_cast<double>(bytes), benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace kvbench::bench
