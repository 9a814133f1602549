// Measuring one grid point: allocation, cache fill, warm-up, timed repetitions, verification.
#include "kvbench/measure/runner.hpp"

#include "kvbench/engine/blas.hpp"
#include "kvbench/engine/cost_model.hpp"
#include "kvbench/engine/decoder.hpp"
#include "kvbench/engine/kernel_check.hpp"
#include "kvbench/engine/reference.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace kvbench {

namespace {

template <typename Step>
std::int64_t time_once_ns(Step&& step) {
    const auto start = std::chrono::steady_clock::now();
    step();
    const auto stop = std::chrono::steady_clock::now();
    return std::chrono::duration_cast<std::chrono::nanoseconds>(stop - start).count();
}

// Every kernel of the point against its naive twin; throws, failing the point, when one disagrees.
// Returns the worst relative error.
double check_point_kernels(const GridPoint& point, const ModelWeights& weights, const KernelCheckInputs& inputs) {
    double worst = 0;
    for (const KernelCheck& check : check_kernels(point.config, weights, inputs)) {
        if (!(check.rel_error < kernel_check_tolerance)) {
            throw std::runtime_error(fmt::format(
                "--check: {} differs from its naive twin by {:.3g} (relative error; tolerance {:.0e}) at {} T={}",
                check.kernel, check.rel_error, kernel_check_tolerance, describe(point.config), point.n_threads));
        }
        worst = std::max(worst, check.rel_error);
    }
    return worst;
}

}  // namespace

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
    // The whole prompt only where the uncached forward reads it; a cached step reads one position.
    const std::vector<float> inputs = needs_prefill(options) ? make_inputs(config, options.seed) : std::vector<float>{};
    const std::vector<float> step_in = make_input_positions(config, options.seed, n - 1, 1);
    auto flush = [&] {
        if (options.cold_cache && flusher_ != nullptr) flusher_->flush();
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
            forward_full(config, weights, inputs.data(), full_out.data(), *forward_scratch, &*cache, &stop);
            if (!stopped()) cache->roll_back(n - 1);
        } else {
            fill_cache_seeded(config, *cache, n - 1, options.seed, &stop);
        }
    }
    if (options.check && !stopped()) {
        result.check_rel_error = check_point_kernels(
            point, weights, {step_in.data(), needs_prefill(options) ? inputs.data() : nullptr,
                             cache ? &*cache : nullptr, point.n_threads});
    }

    if (options.run_uncached) {
        PathMeasurement measured;
        for (std::size_t rep = 0; rep < options.n_warmup && !stopped(); ++rep) {
            measured.flops = forward_full(config, weights, inputs.data(), full_out.data(), *forward_scratch, nullptr, &stop);
        }
        for (std::size_t rep = 0; rep < options.n_reps && !stopped(); ++rep) {
            flush();
            measured.samples_ns.push_back(time_once_ns([&] {
                measured.flops = forward_full(config, weights, inputs.data(), full_out.data(), *forward_scratch, nullptr, &stop);
            }));
        }
        result.uncached = std::move(measured);
    }

    if (needs_cache(options)) {
        std::vector<float> step_out(step_in.size());
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
            result.verify_rel_error = relative_error(
                step_out, gather_positions(full_out, config.n_batch, n, config.model_dim, n - 1, 1));
        }
        if (options.run_cached) result.cached = std::move(measured);
    }
    return result;
}

}  // namespace kvbench
