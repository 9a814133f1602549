// Measuring grid points: allocation, cache fill, verification, warm-up, timed repetitions, and the
// interleaved schedule.
#include "kvbench/measure/runner.hpp"

#include "kvbench/measure/budget.hpp"
#include "kvbench/measure/equivalence.hpp"
#include "kvbench/measure/resident_points.hpp"

#include "kvbench/engine/blas.hpp"
#include "kvbench/engine/cost_model.hpp"
#include "kvbench/engine/decoder.hpp"
#include "kvbench/engine/kernel_check.hpp"
#include "kvbench/engine/reference.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <stdexcept>

namespace kvbench {

namespace {

bool adaptive(const RunOptions& options) { return options.min_time_s > 0; }

double seconds_since(const RunOptions& options, std::int64_t start_ns) {
    return static_cast<double>(options.now_ns() - start_ns) * 1e-9;
}

template <typename Step>
std::int64_t time_once_ns(NowNs now_ns, Step&& step) {
    const std::int64_t start = now_ns();
    step();
    return now_ns() - start;
}

std::vector<ByteRegion> weight_regions(const ModelWeights& weights) {
    std::vector<ByteRegion> regions;
    const auto add = [&](const WeightMatrix& matrix) {
        for (std::span<const std::byte> storage : {matrix.element_storage(), matrix.scale_storage()}) {
            if (!storage.empty()) regions.emplace_back(storage.data(), storage.size());
        }
    };
    for (const LayerWeights& layer : weights.layers) {
        for (const WeightMatrix* matrix : {&layer.wqkv, &layer.wo, &layer.mlp.gate_up, &layer.mlp.down, &layer.router,
                                           &layer.shared_experts.gate_up, &layer.shared_experts.down}) {
            add(*matrix);
        }
        for (const MlpWeights& expert : layer.experts) {
            add(expert.gate_up);
            add(expert.down);
        }
        for (const WeightMatrix* matrix : latent_matrices(layer.latent)) add(*matrix);
        for (const std::vector<float>* norm :
             {&layer.attention_norm, &layer.mlp_norm, &layer.latent.q_norm, &layer.latent.kv_norm}) {
            if (!norm->empty()) regions.push_back(byte_region(*norm));
        }
    }
    return regions;
}

// K and V of every layer (and an int8 cache's scales): each is one allocation.
std::vector<ByteRegion> cache_regions(const KvCache& cache) {
    std::vector<ByteRegion> regions;
    for (std::span<const std::byte> storage : cache.storage()) regions.emplace_back(storage.data(), storage.size());
    return regions;
}

// Every kernel of the point against its naive twin; throws, failing the point, when one disagrees.
// Returns the worst relative error.
double check_point_kernels(const GridPoint& point, const ModelWeights& weights, const KernelCheckInputs& inputs,
                           const StepKernels& kernels) {
    double worst = 0;
    for (const KernelCheck& check : check_kernels(point.config, weights, inputs, kernels)) {
        if (!(check.rel_error < kernel_check_tolerance)) {
            throw std::runtime_error(fmt::format(
                "--check: {} differs from its naive twin by {:.3g} (relative error; tolerance {:.0e}) at {} T={}",
                check.kernel, check.rel_error, kernel_check_tolerance, describe(point.config), point.n_threads));
        }
        worst = std::max(worst, check.rel_error);
    }
    return worst;
}

// Everything one point keeps allocated while it is measured (llama2.c's RunState): inputs,
// the KV cache filled to N-1, scratch, and the step's own input and output rows.
class PointState {
public:
    // Allocates and fills everything; checks `stop` inside the prefill and the cache fill, and
    // leaves the state unusable (stopped() true for the caller) when it is set.
    PointState(const GridPoint& point, const RunOptions& options, std::shared_ptr<const ModelWeights> weights,
               const std::atomic<bool>* stop)
        : config_(point.config), weights_(std::move(weights)), stop_(stop), kernels_(options.kernels),
          reference_kernels_(verify_reference_kernels(options.kernels)), verify_(options.verify), seed_(options.seed),
          n_threads_(point.n_threads), now_ns_(options.now_ns) {
        const std::size_t n = config_.seq_len;
        const bool prefill = needs_prefill(point, options);
        if (prefill) {
            // The whole prompt only where the uncached forward reads it; a cached step reads one position.
            inputs_ = make_inputs(config_, options.seed);
            full_out_.resize(inputs_.size());
            forward_scratch_.emplace(config_, point.n_threads);
        }
        if (needs_cache(options)) {
            cache_.emplace(config_, n, options.seed);
            decode_scratch_.emplace(config_, n, point.n_threads);
            step_in_ = make_step_inputs(config_, options.seed);
            step_out_.resize(step_in_.size());
            if (options.verify) {
                reference_trace_.resize(attention_trace_size(config_));
                step_trace_.resize(reference_trace_.size());
                reference_mlp_.resize(mlp_trace_size(config_));
                step_mlp_.resize(reference_mlp_.size());
            }
            if (!config_.has_reduced_cache()) {
                fill(config_, *cache_, prefill, options.seed);
            } else {
                // The same values in f32 first: the reduced cache is their conversion, and one step
                // over each gives kv_rel_error. The f32 copy lives only while the point is set up.
                ModelConfig f32_config = config_;
                f32_config.set_kv_dtypes(KvDtype::f32, KvDtype::f32);
                KvCache reference(f32_config, n, options.seed);  // the same blocks: assign_converted copies slot by slot
                fill(f32_config, reference, prefill, options.seed);
                if (reference.length() != filled_length()) return;  // stopped
                cache_->assign_converted(reference);
                std::vector<float> reference_out(step_out_.size());
                std::vector<float> reference_trace(attention_trace_size(config_));  // (L, B, H·dh) floats
                std::vector<float> reduced_trace(reference_trace.size());           // (L, B, H·dh) floats
                std::vector<float> reference_mlp(mlp_trace_size(config_));          // (L, B, D) floats of a full block
                std::vector<float> reduced_mlp(reference_mlp.size());               // (L, B, D) floats of a full block
                decode_step(f32_config, *weights_, reference, step_in_.data(), reference_out.data(), *decode_scratch_,
                            {&kernels_, reference_trace, reference_mlp});
                decode_step(config_, *weights_, *cache_, step_in_.data(), step_out_.data(), *decode_scratch_,
                            {&kernels_, reduced_trace, reduced_mlp});
                cache_->roll_back(filled_length());
                kv_rel_error_ = step_equivalence_error(config_, {step_out_, reduced_trace, reduced_mlp},
                                                       {reference_out, reference_trace, reference_mlp});
            }
            if (config_.weight_dtype != WeightDtype::f32 && cache_->length() == filled_length()) {
                weight_rel_error_ = step_against_f32_weights(options.seed);
            }
        }
    }

    // docs/model.md's measure of reduced weights: the step against the same step with the f32
    // weights they were converted from, over the same cache. The f32 copy lives only here.
    double step_against_f32_weights(std::uint64_t seed) {
        ModelConfig f32_weights_config = config_;
        f32_weights_config.weight_dtype = WeightDtype::f32;
        const ModelWeights f32_weights = make_weights(f32_weights_config, seed);
        std::vector<float> reference_out(step_out_.size());
        std::vector<float> reference_trace(attention_trace_size(config_)), reduced_trace(reference_trace.size());
        std::vector<float> reference_mlp(mlp_trace_size(config_)), reduced_mlp(reference_mlp.size());
        decode_step(config_, f32_weights, *cache_, step_in_.data(), reference_out.data(), *decode_scratch_,
                    {&kernels_, reference_trace, reference_mlp});
        cache_->roll_back(filled_length());
        decode_step(config_, *weights_, *cache_, step_in_.data(), step_out_.data(), *decode_scratch_,
                    {&kernels_, reduced_trace, reduced_mlp});
        cache_->roll_back(filled_length());
        return step_equivalence_error(config_, {step_out_, reduced_trace, reduced_mlp},
                                      {reference_out, reference_trace, reference_mlp});
    }

    // docs/model.md's measure of the reduced cache against an f32 one; empty for f32.
    std::optional<double> kv_rel_error() const { return kv_rel_error_; }
    // The same of reduced weights against f32 ones; empty for f32 weights.
    std::optional<double> weight_rel_error() const { return weight_rel_error_; }
    // Routed experts the last step of `path` read, summed over its layers; empty without experts.
    std::optional<std::uint64_t> experts_read(DecodePath path) const {
        if (!config_.has_experts()) return std::nullopt;
        return path == DecodePath::cached ? cached_experts_read_ : uncached_experts_read_;
    }

    // One step of `path`, untimed; the cache is back at N-1 before a cached step.
    void run(DecodePath path) {
        if (path == DecodePath::uncached) {
            uncached_flops_ = forward_full(config_, *weights_, inputs_.data(), full_out_.data(), *forward_scratch_,
                                           nullptr, stop_, {&kernels_, {}, {}, &uncached_experts_read_});
        } else {
            cache_->roll_back(filled_length());
            cached_flops_ = decode_step(config_, *weights_, *cache_, step_in_.data(), step_out_.data(),
                                        *decode_scratch_, {&kernels_, {}, {}, &cached_experts_read_});
        }
    }

    // Rolls back and evicts outside the timer, then times one step.
    std::int64_t time(DecodePath path, const Evict* evict) {
        if (path == DecodePath::cached) cache_->roll_back(filled_length());
        if (evict != nullptr && *evict) (*evict)(cold_regions(path));
        return time_once_ns(now_ns_, [&] { run(path); });
    }

    // docs/model.md's equivalence: the cached step against the last row of the prefill, the
    // uncached forward on verify's reference kernels, output and every layer's attention output;
    // then the same at a short context, where one key is not averaged away.
    double verify() {
        const std::size_t n = config_.seq_len;
        cache_->roll_back(filled_length());
        decode_step(config_, *weights_, *cache_, step_in_.data(), step_out_.data(), *decode_scratch_,
                    {&kernels_, step_trace_, step_mlp_});
        const std::vector<float> last_row = gather_newest(config_, full_out_);
        const double at_n = step_equivalence_error(config_, {step_out_, step_trace_, step_mlp_},
                                                       {last_row, reference_trace_, reference_mlp_});
        // A ragged batch's short sequences are its own short contexts (docs/measuring.md); Q
        // tokens already span Q contexts (docs/model.md#multi-token-queries).
        if (n <= verify_short_context || config_.is_ragged() || config_.n_query_tokens != 1) return at_n;
        return std::max(at_n, verify_at_context(config_, *weights_, seed_, verify_short_context, kernels_,
                                                reference_kernels_, n_threads_));
    }

    // Every kernel of the point against its naive twin, on the point's own data (docs/measuring.md).
    double check(const GridPoint& point) {
        if (cache_) cache_->roll_back(filled_length());
        // The step's projections are checked on the step's inputs, drawn here when the cached
        // path does not run: they are the weights the uncached path reads too.
        const std::vector<float> drawn = step_in_.empty() ? make_step_inputs(config_, seed_) : std::vector<float>{};
        return check_point_kernels(point, *weights_,
                                   {step_in_.empty() ? drawn.data() : step_in_.data(),
                                    full_out_.empty() ? nullptr : inputs_.data(), cache_ ? &*cache_ : nullptr,
                                    point.n_threads, forward_scratch_ ? &*forward_scratch_ : nullptr},
                                   kernels_);
    }

    // What a cold repetition of `path` evicts: every buffer the step touches (docs/measuring.md).
    std::span<const ByteRegion> cold_regions(DecodePath path) {
        std::vector<ByteRegion>& regions = path == DecodePath::cached ? cached_regions_ : uncached_regions_;
        if (!regions.empty()) return regions;
        regions = weight_regions(*weights_);
        if (path == DecodePath::uncached) {
            for (ByteRegion region : {byte_region(inputs_), byte_region(full_out_), byte_region(forward_scratch_->qkv),
                                      byte_region(forward_scratch_->head_outputs),
                                      byte_region(forward_scratch_->attention_scratch.scores)}) {
                regions.push_back(region);
            }
        } else {
            for (ByteRegion region : cache_regions(*cache_)) regions.push_back(region);
            for (ByteRegion region :
                 {byte_region(step_in_), byte_region(step_out_), byte_region(decode_scratch_->qkv),
                  byte_region(decode_scratch_->head_outputs)}) {
                regions.push_back(region);
            }
            for (std::span<const float> buffer : decode_scratch_->attention_scratch.partial_buffers()) {
                regions.push_back(byte_region(buffer));
            }
        }
        return regions;
    }

    FlopCount flops(DecodePath path) const { return path == DecodePath::cached ? cached_flops_ : uncached_flops_; }

private:
    // Positions the cache holds before a step: N - 1, or N - Q with Q query tokens (docs/model.md).
    std::size_t filled_length() const { return config_.seq_len - config_.n_query_tokens; }

    // Fills `cache` to N-1 positions: a prefill (the uncached forward, whose outputs verify
    // compares against) or seeded values. Positions 1..N-1 do not depend on token N.
    void fill(const ModelConfig& config, KvCache& cache, bool prefill, std::uint64_t seed) {
        const std::size_t n = config.seq_len;
        if (prefill) {
            // With --verify this forward is the reference the cached step is compared with.
            const PathOptions options = verify_ ? PathOptions{&reference_kernels_, reference_trace_, reference_mlp_}
                                                : PathOptions{&kernels_, {}, {}};
            forward_full(config, *weights_, inputs_.data(), full_out_.data(), *forward_scratch_, &cache, stop_, options);
            if (cache.length() == n) cache.roll_back(filled_length());
        } else {
            fill_cache_seeded(config, cache, filled_length(), seed, stop_);
        }
    }

    ModelConfig config_;
    std::shared_ptr<const ModelWeights> weights_;
    const std::atomic<bool>* stop_;                  // checked inside the prefill, the fill and each forward
    StepKernels kernels_;                            // what both paths run (options.kernels)
    StepKernels reference_kernels_;                  // what the prefill runs with --verify
    bool verify_;
    std::uint64_t seed_;
    std::size_t n_threads_;
    NowNs now_ns_;                                   // what a repetition is timed with (options.now_ns)
    std::vector<float> reference_trace_;             // (n_layers, n_batch, q_dim) floats: the prefill's, with --verify
    std::vector<float> step_trace_;                  // (n_layers, n_batch, q_dim) floats: verify's cached step's
    std::vector<float> reference_mlp_;               // (n_layers, n_batch, model_dim) floats of a full block: the prefill's
    std::vector<float> step_mlp_;                    // (n_layers, n_batch, model_dim) floats of a full block: verify's step's
    std::vector<float> inputs_;                      // (total_tokens, model_dim) floats: (n_batch, seq_len, ..) uniform
    std::vector<float> full_out_;                    // (total_tokens, model_dim) floats, with a prefill
    std::optional<ForwardScratch> forward_scratch_;
    std::optional<KvCache> cache_;
    std::optional<DecodeScratch> decode_scratch_;
    std::vector<float> step_in_;                     // (n_batch, model_dim) floats: the new token
    std::vector<float> step_out_;                    // (n_batch, model_dim) floats
    FlopCount cached_flops_;
    FlopCount uncached_flops_;
    std::vector<ByteRegion> cached_regions_;    // cold_regions(cached), computed once
    std::vector<ByteRegion> uncached_regions_;  // cold_regions(uncached), computed once
    std::optional<double> kv_rel_error_;
    std::optional<double> weight_rel_error_;
    std::size_t cached_experts_read_ = 0;
    std::size_t uncached_experts_read_ = 0;
};

std::vector<DecodePath> timed_paths(const GridPoint& point, const RunOptions& options) {
    std::vector<DecodePath> paths;
    if (times_uncached(point, options)) paths.push_back(DecodePath::uncached);
    if (options.run_cached) paths.push_back(DecodePath::cached);
    return paths;
}

// Warm-up of one path: up to n_warmup steps, fewer for a slow step under a time budget.
template <typename Stopped>
void warm_up(PointState& state, DecodePath path, const RunOptions& options, Stopped&& stopped) {
    const std::int64_t start = options.now_ns();
    for (std::size_t rep = 0; rep < options.n_warmup && !stopped(); ++rep) {
        state.run(path);
        if (adaptive(options) && seconds_since(options, start) >= options.min_time_s / 2) break;
    }
}

std::optional<PathMeasurement>& slot(PointMeasurement& measured, DecodePath path) {
    return path == DecodePath::cached ? measured.cached : measured.uncached;
}

// The weights of each model shape, shared by the points of that shape while any is alive.
class WeightsCache {
public:
    std::shared_ptr<const ModelWeights> get(const ModelConfig& config, std::uint64_t seed) {
        ModelConfig shape = config;
        shape.n_batch = 1;
        shape.seq_len = 1;
        shape.seq_lens.clear();
        shape.n_query_tokens = 1;
        shape.set_kv_dtypes(KvDtype::f32, KvDtype::f32);  // weights are f32 whatever the cache's type
        for (auto& [key, weak] : entries_) {
            if (key.first == shape && key.second == seed) {
                if (auto alive = weak.lock()) return alive;
            }
        }
        std::shared_ptr<const ModelWeights> weights = std::make_shared<ModelWeights>(make_weights(shape, seed));
        std::erase_if(entries_, [](const auto& entry) { return entry.second.expired(); });
        entries_.emplace_back(std::pair{shape, seed}, weights);
        return weights;
    }

private:
    std::vector<std::pair<std::pair<ModelConfig, std::uint64_t>, std::weak_ptr<const ModelWeights>>> entries_;
};

}  // namespace

std::string describe_reps_policy(const RunOptions& options) {
    if (!adaptive(options)) return fmt::format("reps={} warmup={}", options.n_reps, options.n_warmup);
    return fmt::format("min-time={:g}s reps={}..{} warmup<={}", options.min_time_s, options.min_reps,
                       options.max_reps, options.n_warmup);
}

bool enough_repetitions(const RunOptions& options, std::size_t n_done, double elapsed_s) {
    if (!adaptive(options)) return n_done >= options.n_reps;
    if (n_done >= options.max_reps) return true;
    return n_done >= options.min_reps && elapsed_s >= options.min_time_s;
}

double estimate_step_seconds(const ModelConfig& config, DecodePath path, const Roofline& roofline) {
    return roofline_time_s(step_flops(config, path), step_bytes(config, path), roofline) / estimate_achieved_fraction;
}

double estimate_point_seconds(const GridPoint& point, const RunOptions& options,
                              const Roofline* roofline, std::uint64_t flush_bytes) {
    const Roofline machine = roofline_or_assumed(roofline);
    auto step_seconds = [&](DecodePath path) { return estimate_step_seconds(point.config, path, machine); };
    const double flush_seconds =
        options.cold_cache ? 2.0 * static_cast<double>(flush_bytes) / (machine.peak_gbps * 1e9) : 0.0;
    // The repetitions the policy gives a step of `rep_seconds`, and the warm-ups before them.
    auto path_seconds = [&](double step_s) {
        const double rep_s = step_s + flush_seconds;
        double reps = static_cast<double>(options.n_reps);
        double warmup = static_cast<double>(options.n_warmup);
        if (adaptive(options)) {
            reps = std::clamp(std::ceil(options.min_time_s / rep_s), static_cast<double>(options.min_reps),
                              static_cast<double>(options.max_reps));
            warmup = std::min(warmup, std::ceil(options.min_time_s / 2 / step_s));
        }
        return reps * rep_s + warmup * step_s;
    };
    double seconds = 0;
    // The prefill is a forward into the cache: without a cache (the uncached path alone) no
    // separate forward runs, only the timed ones.
    if (needs_prefill(point, options) && needs_cache(options)) seconds += step_seconds(DecodePath::uncached);
    if (times_uncached(point, options)) seconds += path_seconds(step_seconds(DecodePath::uncached));
    if (options.run_cached) seconds += path_seconds(step_seconds(DecodePath::cached));
    return seconds;
}

PointRunner::PointRunner(CacheFlusher* flusher) {
    if (flusher != nullptr) evict_ = [flusher](std::span<const ByteRegion> regions) { flusher->flush(regions); };
}

std::shared_ptr<const ModelWeights> PointRunner::weights_for(const ModelConfig& config, std::uint64_t seed) {
    ModelConfig shape = config;
    shape.n_batch = 1;
    shape.seq_len = 1;
    shape.seq_lens.clear();
    shape.n_query_tokens = 1;
    shape.set_kv_dtypes(KvDtype::f32, KvDtype::f32);  // weights are f32 whatever the cache's type
    if (!weights_shape_ || *weights_shape_ != shape || weights_seed_ != seed) {
        weights_.reset();  // release the previous shape's weights before drawing the next
        weights_ = std::make_shared<ModelWeights>(make_weights(shape, seed));
        weights_shape_ = shape;
        weights_seed_ = seed;
    }
    return weights_;
}

PointMeasurement PointRunner::run(const GridPoint& point, const RunOptions& options,
                                  const std::atomic<bool>& stop) {
    set_compute_threads(point.n_threads);
    PointState state(point, options, weights_for(point.config, options.seed), &stop);
    const Evict* evict = options.cold_cache ? &evict_ : nullptr;
    PointMeasurement result;
    auto stopped = [&] {
        result.interrupted = result.interrupted || stop.load(std::memory_order_relaxed);
        return result.interrupted;
    };
    result.kv_rel_error = state.kv_rel_error();
    result.weight_rel_error = state.weight_rel_error();
    if (options.check && !stopped()) result.check_rel_error = state.check(point);
    if (options.verify && !stopped()) result.verify_rel_error = state.verify();
    for (const DecodePath path : timed_paths(point, options)) {
        PathMeasurement measured;
        warm_up(state, path, options, stopped);
        const std::int64_t start = options.now_ns();
        while (!stopped() &&
               !enough_repetitions(options, measured.samples_ns.size(), seconds_since(options, start))) {
            measured.samples_ns.push_back(state.time(path, evict));
        }
        measured.flops = state.flops(path);
        measured.experts_read = state.experts_read(path);
        slot(result, path) = std::move(measured);
    }
    return result;
}

void run_interleaved(const std::vector<GridPoint>& points, const RunOptions& options, const Evict& evict,
                     const InterleaveOptions& interleave, const std::atomic<bool>& stop,
                     const PointStarted& started, const PointFinished& finished) {
    struct Task {
        std::size_t point;
        DecodePath path;
        double elapsed_s = 0;  // wall time of its timed repetitions, evictions included
        bool done = false;
    };
    std::vector<Task> tasks;
    for (std::size_t i = 0; i < points.size(); ++i) {
        for (const DecodePath path : timed_paths(points[i], options)) tasks.push_back({i, path});
    }
    std::vector<PointMeasurement> measured(points.size());
    std::vector<bool> failed(points.size(), false);
    std::vector<bool> was_started(points.size(), false);
    ResidentPoints<PointState> resident(interleave.resident_budget_bytes);
    WeightsCache weights;
    const Evict* cold_evict = options.cold_cache ? &evict : nullptr;
    auto stopped = [&] { return stop.load(std::memory_order_relaxed); };

    auto fail = [&](std::size_t i, std::exception_ptr error) {
        failed[i] = true;
        resident.release(i);
        for (Task& task : tasks) task.done = task.done || task.point == i;
        finished(i, nullptr, error);
    };
    // The point's state, built (and warmed up) when it is not resident.
    auto state_of = [&](std::size_t i) -> PointState& {
        if (PointState* state = resident.find(i)) return *state;
        const std::uint64_t bytes = point_memory_bytes(points[i], options);
        resident.make_room(bytes);
        if (!was_started[i]) started(i);
        auto state = std::make_unique<PointState>(points[i], options, weights.get(points[i].config, options.seed), &stop);
        if (!was_started[i] && options.check && !stopped()) measured[i].check_rel_error = state->check(points[i]);
        if (!was_started[i] && options.verify && !stopped()) measured[i].verify_rel_error = state->verify();
        if (!was_started[i]) {
            measured[i].kv_rel_error = state->kv_rel_error();
            measured[i].weight_rel_error = state->weight_rel_error();
        }
        was_started[i] = true;
        for (const DecodePath path : timed_paths(points[i], options)) warm_up(*state, path, options, stopped);
        return resident.insert(i, std::move(state), bytes);
    };

    std::mt19937_64 shuffle(interleave.shuffle_seed);
    std::vector<std::size_t> order;
    while (!stopped()) {
        order.clear();
        for (std::size_t t = 0; t < tasks.size(); ++t) {
            if (!tasks[t].done) order.push_back(t);
        }
        if (order.empty()) break;
        std::shuffle(order.begin(), order.end(), shuffle);
        for (const std::size_t t : order) {
            Task& task = tasks[t];
            if (stopped()) break;
            if (task.done) continue;  // its point failed earlier in this round
            const std::size_t i = task.point;
            try {
                set_compute_threads(points[i].n_threads);
                PointState& state = state_of(i);
                if (stopped()) break;
                // Warm means this step's data in the caches, not the previous point's.
                if (!options.cold_cache) state.run(task.path);
                std::optional<PathMeasurement>& path = slot(measured[i], task.path);
                if (!path) path.emplace();
                const std::int64_t start = options.now_ns();
                path->samples_ns.push_back(state.time(task.path, cold_evict));
                task.elapsed_s += seconds_since(options, start);
                path->flops = state.flops(task.path);
                path->experts_read = state.experts_read(task.path);
                task.done = enough_repetitions(options, path->samples_ns.size(), task.elapsed_s);
            } catch (...) {
                fail(i, std::current_exception());
                continue;
            }
            const bool point_done = std::all_of(tasks.begin(), tasks.end(), [&](const Task& other) {
                return other.point != i || other.done;
            });
            if (point_done && !failed[i]) {
                resident.release(i);
                finished(i, &measured[i], nullptr);
                measured[i] = {};
            }
        }
    }
}

}  // namespace kvbench
