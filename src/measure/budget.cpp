// The memory budget of a point: the sum of what each buffer owner says it allocates.
#include "kvbench/measure/budget.hpp"

#include "kvbench/measure/equivalence.hpp"

#include "kvbench/engine/checked_size.hpp"
#include "kvbench/engine/decoder.hpp"
#include "kvbench/engine/kv_cache.hpp"
#include "kvbench/engine/weights.hpp"

#include <fmt/format.h>

namespace kvbench {

std::uint64_t MemoryBudget::total_bytes() const {
    return checked_add(checked_add(checked_add(kv_cache_bytes, weights_bytes), checked_add(scratch_bytes, inputs_bytes)),
                       checked_add(flush_bytes, probe_bytes));
}

std::vector<MemoryTerm> memory_terms(const MemoryBudget& budget) {
    return {{"the KV cache", budget.kv_cache_bytes, "lower --seq, --batch or --layers, or use fewer --kv-heads (a --kv-dtype other than f32 also "
             "holds an f32 copy while the point is set up)"},
            {"the weights", budget.weights_bytes, "lower --dim or --layers"},
            {"scratch", budget.scratch_bytes, "lower --seq or --batch, or time only --paths cached"},
            {"inputs", budget.inputs_bytes, "lower --seq or --batch, or time only --paths cached without --verify"},
            {"the cold-cache flush buffer", budget.flush_bytes, "use --flush clflush or --cache-state warm"},
            {"the bandwidth probe", budget.probe_bytes, "use --no-roofline, or give --roofline FILE"}};
}

MemoryTerm largest_term(const MemoryBudget& budget) {
    std::vector<MemoryTerm> terms = memory_terms(budget);
    std::size_t largest = 0;
    for (std::size_t i = 1; i < terms.size(); ++i) {
        if (terms[i].bytes > terms[largest].bytes) largest = i;
    }
    return terms[largest];
}

MemoryBudget point_memory(const GridPoint& point, const RunOptions& options) {
    const ModelConfig& config = point.config;
    const std::size_t n = config.seq_len;
    try {
        MemoryBudget budget;
        budget.weights_bytes = ModelWeights::bytes_for(config);
        budget.inputs_bytes = input_bytes_for(config, config.n_query_tokens);  // the new tokens' input, always drawn
        if (needs_prefill(point, options)) {
            // The prompt (every position's input) and the forward's output.
            // Σ_b N_b rows: B·N, or a ragged batch's packed sequences.
            const std::size_t prompt_bytes = checked_product({config.total_tokens(), config.model_dim, sizeof(float)});
            budget.inputs_bytes = checked_add(budget.inputs_bytes, checked_mul(2, prompt_bytes));
            budget.scratch_bytes = ForwardScratch::bytes_for(config, point.n_threads);
        }
        if (needs_cache(options)) {
            budget.kv_cache_bytes = KvCache::bytes_for(config, n);
            if (config.has_reduced_cache()) {
                // The f32 cache that kv_rel_error is measured against, alive while the point is set up.
                ModelConfig f32_config = config;
                f32_config.set_kv_dtypes(KvDtype::f32, KvDtype::f32);
                budget.kv_cache_bytes = checked_add(budget.kv_cache_bytes, KvCache::bytes_for(f32_config, n));
            }
            if (config.weight_dtype != WeightDtype::f32) {
                // The f32 weights that weight_rel_error is measured against, alive while the point is set up.
                ModelConfig f32_weights = config;
                f32_weights.weight_dtype = WeightDtype::f32;
                budget.weights_bytes = checked_add(budget.weights_bytes, ModelWeights::bytes_for(f32_weights));
            }
            budget.scratch_bytes =
                checked_add(budget.scratch_bytes, DecodeScratch::bytes_for(config, n, point.n_threads));
            budget.inputs_bytes = checked_add(budget.inputs_bytes, input_bytes_for(config, config.n_query_tokens));  // the step's output
            // Each layer's attention output for the newest position: the prefill's and the step's
            // with --verify, the two steps' of kv_rel_error while a reduced cache is set up.
            const std::size_t n_traces = (options.verify ? 2u : 0u) + (config.has_reduced_cache() ? 2u : 0u);
            budget.inputs_bytes = checked_add(budget.inputs_bytes,
                                              checked_mul(checked_mul(n_traces, attention_trace_size(config)), sizeof(float)));
        }
        if (options.verify && n > verify_short_context && !config.is_ragged() && config.n_query_tokens == 1) {
            // verify_at_context's own cache, scratch, inputs, outputs and traces at the short context.
            ModelConfig context = config;
            context.seq_len = verify_short_context;
            context.shared_prefix = config.shared_prefix * verify_short_context / config.seq_len;  // as verify_at_context's
            const std::size_t own = checked_add(
                checked_add(KvCache::bytes_for(context, verify_short_context), ForwardScratch::bytes_for(context, point.n_threads)),
                checked_add(DecodeScratch::bytes_for(context, verify_short_context, point.n_threads),
                            checked_add(checked_mul(3, input_bytes_for(context, verify_short_context)),
                                        checked_mul(2 * sizeof(float), attention_trace_size(context)))));
            budget.scratch_bytes = checked_add(budget.scratch_bytes, own);
        }
        budget.total_bytes();  // overflows here too, not later in a caller
        return budget;
    } catch (const SizeOverflow&) {
        throw ConfigError(fmt::format("{} T={}: its memory size overflows 64 bits; lower --seq, --batch, --dim or "
                                      "--layers",
                                      describe(config), point.n_threads));
    }
}

std::uint64_t point_memory_bytes(const GridPoint& point, const RunOptions& options) {
    return point_memory(point, options).total_bytes();
}

}  // namespace kvbench
