// Measuring one grid point: allocation, cache fill, warm-up, timed repetitions, verification.
#include "kvbench/measure/runner.hpp"

#include "kvbench/engine/blas.hpp"
#include "kvbench/engine/cost_model.hpp"
#include "kvbench/engine/decoder.hpp"
#include "kvbench/engine/reference.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace kvbench {

namespace {

constexpr std::uint64_t float_bytes = sizeof(float);

bool needs_prefill(const RunOptions& options) { return options.run_uncached || options.verify; }
bool needs_cache(const RunOptions& options) { return options.run_cached || options.verify; }

template <typename Step>
std::int64_t time_once_ns(Step&& step) {
    const auto start = std::chrono::steady_clock::now();
    step();
    const auto stop = std::chrono::steady_clock::now();
    return std::chrono::duration_cast<std::chrono::nanoseconds>(stop - start).count();
}

// Row `pos` of every sequence of a (n_batch, seq_len, dim) tensor, as (n_batch, dim).
std::vector<float> gather_position(const std::vector<float>& tensor, const ModelConfig& config,
                                   std::size_t pos) {
    const std::size_t dim = config.model_dim;
    std::vector<float> rows(config.n_batch * dim);
    for (std::size_t b = 0; b < config.n_batch; ++b) {
        const auto first = tensor.begin() + static_cast<std::ptrdiff_t>((b * config.seq_len + pos) * dim);
        std::copy_n(first, dim, rows.begin() + static_cast<std::ptrdiff_t>(b * dim));
    }
    return rows;
}

std::vector<ByteRegion> weight_regions(const ModelWeights& weights) {
    std::vector<ByteRegion> regions;
    for (const LayerWeights& layer : weights.layers) {
        regions.push_back(byte_region(layer.wqkv));
        regions.push_back(byte_region(layer.wo));
    }
    return regions;
}

// K and V of every layer: each is one allocation, starting at layer 0, batch row 0, KV head 0.
std::vector<ByteRegion> cache_regions(const KvCache& cache) {
    const std::size_t half_bytes = cache.bytes() / 2;
    return {ByteRegion(reinterpret_cast<const std::byte*>(cache.keys(0, 0, 0)), half_bytes),
            ByteRegion(reinterpret_cast<const std::byte*>(cache.values(0, 0, 0)), half_bytes)};
}

}  // namespace

std::uint64_t point_memory_bytes(const GridPoint& point, const RunOptions& options) {
    const ModelConfig& c = point.config;
    const std::uint64_t b = c.n_batch, n = c.seq_len, d = c.model_dim;
    const std::uint64_t sequence_floats = b * n * d;  // one (B, N, D) tensor
    std::uint64_t floats = std::uint64_t{c.n_layers} * weights_per_layer(c) + sequence_floats;
    if (needs_prefill(options)) {
        // Output of the forward, its q|k|v and head outputs (ForwardScratch).
        floats += sequence_floats + b * n * c.qkv_dim() + sequence_floats;
    }
    if (needs_cache(options)) {
        floats += kv_cache_bytes(c) / float_bytes;
        floats += b * c.qkv_dim() + b * d;  // DecodeScratch's q|k|v and head outputs
        floats += 2 * b * d;  // the step's input and output rows
    }
    std::uint64_t bytes = floats * float_bytes;
    if (needs_prefill(options)) bytes += CausalAttentionScratch::bytes_for(n, point.n_threads);
    if (needs_cache(options)) bytes += DecodeAttentionScratch::bytes_for(c, point.n_threads);
    return bytes;
}

double estimate_point_seconds(const GridPoint& point, const RunOptions& options,
                              const Roofline* roofline, std::uint64_t flush_bytes) {
    Roofline assumed;
    assumed.peak_gflops = 100;
    assumed.peak_gbps = 20;
    const Roofline& machine = roofline != nullptr ? *roofline : assumed;
    constexpr double achieved_fraction = 0.5;
    const ModelConfig& config = point.config;
    auto step_seconds = [&](DecodePath path) {
        return roofline_time_s(step_flops(config, path), step_bytes(config, path), machine) /
               achieved_fraction;
    };
    const double reps = static_cast<double>(options.n_reps + options.n_warmup);
    const double flush_seconds =
        options.cold_cache ? 2.0 * static_cast<double>(flush_bytes) / (machine.peak_gbps * 1e9) : 0.0;
    double seconds = 0;
    if (needs_prefill(options)) seconds += step_seconds(DecodePath::uncached);
    if (options.run_uncached) seconds += reps * (step_seconds(DecodePath::uncached) + flush_seconds);
    if (options.run_cached) seconds += reps * (step_seconds(DecodePath::cached) + flush_seconds);
    return seconds;
}

const ModelWeights& PointRunner::weights_for(const ModelConfig& config, std::uint64_t seed) {
    ModelConfig shape = config;
    shape.n_batch = 1;
    shape.seq_len = 1;
    if (!weights_shape_ || *weights_shape_ != shape || weights_seed_ != seed) {
        weights_ = {};  // release the previous shape's weights before drawing the next
        weights_ = make_weights(shape, seed);
        weights_shape_ = shape;
        weights_seed_ = seed;
    }
    return weights_;
}

PointMeasurement PointRunner::run(const GridPoint& point, const RunOptions& options,
                                  const std::atomic<bool>& stop) {
    const ModelConfig& config = point.config;
    const std::size_t n = config.seq_len;
    set_compute_threads(point.n_threads);
    const ModelWeights& weights = weights_for(config, options.seed);
    const std::vector<float> inputs = make_inputs(config, options.seed);
    // What a cold repetition evicts: every buffer of the point (docs/measuring.md).
    std::vector<ByteRegion> cold_regions;
    auto flush = [&] {
        if (options.cold_cache && flusher_ != nullptr) flusher_->flush(cold_regions);
    };
    PointMeasurement result;
    auto stopped = [&] {
        result.interrupted = result.interrupted || stop.load(std::memory_order_relaxed);
        return result.interrupted;
    };

    std::vector<float> full_out;
    std::optional<ForwardScratch> forward_scratch;
    if (needs_prefill(options)) {
        full_out.resize(inputs.size());
        forward_scratch.emplace(config, point.n_threads);
    }
    std::optional<KvCache> cache;
    std::optional<DecodeScratch> decode_scratch;
    if (needs_cache(options)) {
        cache.emplace(config, n);
        decode_scratch.emplace(config, n, point.n_threads);
        if (needs_prefill(options)) {
            // Prefill all N positions, then forget the last: positions 1..N-1 do not depend on token N.
            forward_full(config, weights, inputs.data(), full_out.data(), *forward_scratch, &*cache);
            cache->roll_back(n - 1);
        } else {
            fill_cache_seeded(config, *cache, n - 1, options.seed);
        }
    }

    if (options.run_uncached) {
        cold_regions = weight_regions(weights);
        for (ByteRegion region : {byte_region(inputs), byte_region(full_out), byte_region(forward_scratch->qkv),
                                  byte_region(forward_scratch->attention), byte_region(forward_scratch->tiles.tiles)}) {
            cold_regions.push_back(region);
        }
        PathMeasurement measured;
        for (std::size_t rep = 0; rep < options.n_warmup && !stopped(); ++rep) {
            measured.flops = forward_full(config, weights, inputs.data(), full_out.data(), *forward_scratch);
        }
        for (std::size_t rep = 0; rep < options.n_reps && !stopped(); ++rep) {
            flush();
            measured.samples_ns.push_back(time_once_ns([&] {
                measured.flops = forward_full(config, weights, inputs.data(), full_out.data(), *forward_scratch);
            }));
        }
        result.uncached = std::move(measured);
    }

    if (needs_cache(options)) {
        const std::vector<float> step_in = gather_position(inputs, config, n - 1);
        std::vector<float> step_out(step_in.size());
        cold_regions = weight_regions(weights);
        for (ByteRegion region : cache_regions(*cache)) cold_regions.push_back(region);
        for (ByteRegion region : {byte_region(step_in), byte_region(step_out), byte_region(decode_scratch->qkv),
                                  byte_region(decode_scratch->attention), byte_region(decode_scratch->heads.partial_out),
                                  byte_region(decode_scratch->heads.partial_max),
                                  byte_region(decode_scratch->heads.partial_sum)}) {
            cold_regions.push_back(region);
        }
        PathMeasurement measured;
        auto step = [&] {
            cache->roll_back(n - 1);
            measured.flops = decode_step(config, weights, *cache, step_in.data(), step_out.data(), *decode_scratch);
        };
        const std::size_t n_warmup = options.run_cached ? options.n_warmup : 0;
        const std::size_t n_reps = options.run_cached ? options.n_reps : 0;
        for (std::size_t rep = 0; rep < n_warmup && !stopped(); ++rep) step();
        for (std::size_t rep = 0; rep < n_reps && !stopped(); ++rep) {
            cache->roll_back(n - 1);  // outside the timed region
            flush();
            measured.samples_ns.push_back(time_once_ns(step));
        }
        if (options.verify && !stopped()) {
            if (!options.run_cached) step();
            result.verify_rel_error = relative_error(step_out, gather_position(full_out, config, n - 1));
        }
        if (options.run_cached) result.cached = std::move(measured);
    }
    return result;
}

}  // namespace kvbench
