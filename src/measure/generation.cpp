// A generation measured step by step: prefill then decode on the cache, or the full forward at every step.
#include "kvbench/measure/generation.hpp"

#include "kvbench/measure/equivalence.hpp"

#include "kvbench/engine/checked_size.hpp"

#include "kvbench/engine/blas.hpp"
#include "kvbench/engine/decoder.hpp"
#include "kvbench/engine/reference.hpp"
#include "kvbench/engine/weights.hpp"

#include <algorithm>
#include <chrono>
#include <optional>

namespace kvbench {

namespace {

constexpr std::uint64_t float_bytes = sizeof(float);

// The generation's batch at the step whose longest sequence holds seq_len positions; a ragged
// batch's sequences keep their distances, each adding one token per step.
ModelConfig with_context(const ModelConfig& model, std::size_t seq_len) {
    return with_longest_context(model, seq_len);
}

template <typename Step>
std::int64_t time_once_ns(Step&& step) {
    const auto start = std::chrono::steady_clock::now();
    step();
    const auto stop = std::chrono::steady_clock::now();
    return std::chrono::duration_cast<std::chrono::nanoseconds>(stop - start).count();
}

// Each sequence's first positions of `inputs`, laid out as `full` (make_inputs), into `prefix`
// laid out as `at`: at.seq_len_of(b) positions of sequence b, packed.
void copy_prefix(const std::vector<float>& inputs, const ModelConfig& full, const ModelConfig& at,
                 std::vector<float>& prefix) {
    const std::size_t dim = full.model_dim;
    for (std::size_t b = 0; b < full.n_batch; ++b) {
        std::copy_n(inputs.begin() + static_cast<std::ptrdiff_t>(full.first_token(b) * dim), at.seq_len_of(b) * dim,
                    prefix.begin() + static_cast<std::ptrdiff_t>(at.first_token(b) * dim));
    }
}

// The newest position of every sequence of `at` in a tensor laid out as `layout`, as (n_batch, dim):
// the step's input tokens (layout: the whole generation) or a forward's last outputs (layout = at).
std::vector<float> newest_positions(const float* tensor, const ModelConfig& layout, const ModelConfig& at) {
    const std::size_t dim = layout.model_dim;
    std::vector<float> rows(layout.n_batch * dim);
    for (std::size_t b = 0; b < layout.n_batch; ++b) {
        std::copy_n(tensor + (layout.first_token(b) + at.seq_len_of(b) - 1) * dim, dim,
                    rows.begin() + static_cast<std::ptrdiff_t>(b * dim));
    }
    return rows;
}

}  // namespace

StepCost generation_step_cost(const ModelConfig& model, const GenerationOptions& options, DecodePath path,
                              std::size_t step, std::optional<std::uint64_t> experts_read) {
    const ModelConfig config = with_context(model, options.context_of(step));
    return step_cost(config, step == 0 ? DecodePath::uncached : path, experts_read);
}

std::uint64_t generation_memory_bytes(const GridPoint& point, const GenerationOptions& options) {
    const ModelConfig full = with_context(point.config, options.context_of(options.n_new));
    const ModelConfig prompt = with_context(point.config, options.prompt_len);
    // A forward over c.seq_len positions: its input prefix and output, and its scratch.
    auto forward_bytes = [&](const ModelConfig& c) {
        return checked_add(checked_mul(2, input_bytes_for(c, c.seq_len)), ForwardScratch::bytes_for(c, point.n_threads));
    };
    // Weights, the whole input sequence, and the cached outputs kept for --verify.
    std::uint64_t bytes = checked_add(ModelWeights::bytes_for(full),
                                      checked_add(input_bytes_for(full, full.seq_len),
                                                  input_bytes_for(full, options.n_steps())));
    if (options.verify) {
        // Each step's attention outputs, kept for the comparison, and the current step's.
        bytes = checked_add(bytes, checked_mul(checked_mul(options.n_steps() + 1, attention_trace_size(full)),
                                               sizeof(float)));
    }
    if (options.run_cached) {
        // The prefill's forward, the cache at the last context, the decode scratch, and the
        // step's input, output and the next token's input.
        bytes = checked_add(bytes, checked_add(forward_bytes(prompt), KvCache::bytes_for(full, full.seq_len)));
        bytes = checked_add(bytes, checked_add(DecodeScratch::bytes_for(full, full.seq_len, point.n_threads),
                                               input_bytes_for(full, 3)));
    }
    // The paths run one after the other; counting both errs on the safe side.
    if (options.run_uncached) bytes = checked_add(bytes, forward_bytes(full));
    return bytes;
}

std::vector<double> estimate_generation_seconds(const GridPoint& point, const GenerationOptions& options,
                                                const Roofline* roofline, const FlushCost& flush) {
    const Roofline machine = roofline_or_assumed(roofline);
    constexpr double achieved_fraction = estimate_achieved_fraction;
    const double flush_seconds =
        !options.cold_cache ? 0.0
        : flush.measured_seconds ? *flush.measured_seconds
                                 : 2.0 * static_cast<double>(flush.bytes) / (machine.peak_gbps * 1e9);
    std::vector<double> seconds;
    for (const DecodePath path : {DecodePath::cached, DecodePath::uncached}) {
        if (!(path == DecodePath::cached ? options.run_cached : options.run_uncached)) continue;
        for (std::size_t step = 0; step < options.n_steps(); ++step) {
            const StepCost cost = generation_step_cost(point.config, options, path, step);
            seconds.push_back(roofline_time_s(cost.flops, cost.bytes, machine) / achieved_fraction + flush_seconds);
        }
    }
    return seconds;
}

GenerationRun run_generation(const GridPoint& point, const GenerationOptions& options, CacheFlusher* flusher,
                             const std::atomic<bool>& stop, const StepObserver& observe) {
    const std::size_t prompt_len = options.prompt_len;
    const ModelConfig full = with_context(point.config, options.context_of(options.n_new));
    const std::size_t n_batch = full.n_batch, dim = full.model_dim, total_len = full.seq_len;
    const std::size_t total_tokens = full.total_tokens();
    set_compute_threads(point.n_threads);
    const ModelWeights weights = make_weights(full, options.seed);
    const std::vector<float> inputs = make_inputs(full, options.seed);  // each sequence's P_b + T positions, packed
    auto flush = [&] {
        if (options.cold_cache && flusher != nullptr) flusher->flush();
    };
    GenerationRun run;
    auto stopped = [&] {
        run.interrupted = run.interrupted || stop.load(std::memory_order_relaxed);
        return run.interrupted;
    };
    auto record = [&](DecodePath path, std::vector<GenerationStep>& steps, GenerationStep step) {
        steps.push_back(step);
        if (observe) observe(path, steps.back());
    };
    std::vector<std::vector<float>> cached_outputs;  // per step: (n_batch, dim), for the comparison
    // Per step, with verify: (n_layers, n_batch, q_dim) floats, each layer's attention output
    // of the newest position (step_equivalence_error compares them).
    std::vector<std::vector<float>> cached_traces;
    const std::size_t trace_floats = options.verify ? attention_trace_size(full) : 0;
    std::vector<float> trace(trace_floats);
    // With verify, of a full block: (n_layers, n_batch, model_dim) floats, what each MLP added.
    std::vector<std::vector<float>> cached_mlp_traces;
    std::vector<float> mlp_trace(options.verify ? mlp_trace_size(full) : 0);

    if (options.run_cached) {
        const ModelConfig prompt = with_context(full, prompt_len);
        KvCache cache(full, total_len, options.seed);
        DecodeScratch decode_scratch(full, total_len, point.n_threads);
        std::optional<ForwardScratch> prefill_scratch(std::in_place, prompt, point.n_threads);
        std::vector<float> prefix(prompt.total_tokens() * dim);  // each sequence's prompt, packed
        std::vector<float> prefill_out(prefix.size());
        copy_prefix(inputs, full, prompt, prefix);
        // Untimed: the first call of each kernel pays for page faults and thread start-up,
        // which a server that has already decoded does not. The decode warm-up is rolled back.
        forward_full(prompt, weights, prefix.data(), prefill_out.data(), *prefill_scratch, &cache);
        {
            std::vector<float> warm_in(n_batch * dim), warm_out(n_batch * dim);
            decode_step(full, weights, cache, warm_in.data(), warm_out.data(), decode_scratch);
        }
        cache.roll_back(0);
        if (!stopped()) {
            GenerationStep step{0, prompt_len, 0, {}, {}};
            std::size_t experts_read = 0;
            flush();
            step.latency_ns = time_once_ns([&] {
                step.flops = forward_full(prompt, weights, prefix.data(), prefill_out.data(), *prefill_scratch, &cache,
                                          nullptr, {&fast_kernels, trace, mlp_trace, &experts_read});
            });
            if (full.has_experts()) step.experts_read = experts_read;
            cached_outputs.push_back(newest_positions(prefill_out.data(), prompt, prompt));
            cached_traces.push_back(trace);
            cached_mlp_traces.push_back(mlp_trace);
            record(DecodePath::cached, run.cached, step);
        }
        prefill_scratch.reset();  // only the prefill needs O(P·D) scratch
        std::vector<float> step_in(n_batch * dim);   // (n_batch, dim): the new token of every sequence
        std::vector<float> step_out(n_batch * dim);  // (n_batch, dim)
        for (std::size_t i = 1; i < options.n_steps() && !stopped(); ++i) {
            step_in = newest_positions(inputs.data(), full, with_context(full, options.context_of(i)));
            GenerationStep step{i, options.context_of(i), 0, {}, {}};
            std::size_t experts_read = 0;
            flush();
            step.latency_ns = time_once_ns([&] {
                step.flops = decode_step(full, weights, cache, step_in.data(), step_out.data(), decode_scratch,
                                         {&fast_kernels, trace, mlp_trace, &experts_read});
            });
            if (full.has_experts()) step.experts_read = experts_read;
            cached_outputs.push_back(step_out);
            cached_traces.push_back(trace);
            cached_mlp_traces.push_back(mlp_trace);
            record(DecodePath::cached, run.cached, step);
        }
    }

    // The uncached path keeps no cache: of the points that differ only in kv_dtype, the first times it.
    if (options.run_uncached && point.times_uncached) {
        ForwardScratch scratch(full, point.n_threads);  // sized for the longest context, reused by every step
        std::vector<float> prefix(total_tokens * dim);  // each sequence's positions so far, packed
        std::vector<float> out(prefix.size());
        const ModelConfig prompt = with_context(full, prompt_len);
        copy_prefix(inputs, full, prompt, prefix);
        forward_full(prompt, weights, prefix.data(), out.data(), scratch);  // untimed warm-up
        for (std::size_t i = 0; i < options.n_steps() && !stopped(); ++i) {
            const ModelConfig config = with_context(full, options.context_of(i));
            copy_prefix(inputs, full, config, prefix);
            GenerationStep step{i, config.seq_len, 0, {}, {}};
            std::size_t experts_read = 0;
            flush();
            step.latency_ns = time_once_ns([&] {
                step.flops = forward_full(config, weights, prefix.data(), out.data(), scratch, nullptr, nullptr,
                                          {&fast_kernels, trace, mlp_trace, &experts_read});
            });
            if (full.has_experts()) step.experts_read = experts_read;
            if (options.verify && i < cached_outputs.size()) {
                const std::vector<float> last = newest_positions(out.data(), config, config);
                run.verify_rel_error.push_back(
                    step_equivalence_error(full, {cached_outputs[i], cached_traces[i], cached_mlp_traces[i]},
                                           {last, trace, mlp_trace}));
            }
            record(DecodePath::uncached, run.uncached, step);
        }
    }
    return run;
}

}  // namespace kvbench
