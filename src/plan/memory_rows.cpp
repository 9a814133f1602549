// Expanding a MemoryRequest into rows: the lists crossed, the twins added, the budget applied.
#include "kvbench/plan/memory_rows.hpp"

#include "kvbench/engine/checked_size.hpp"
#include "kvbench/engine/config.hpp"
#include "kvbench/engine/cost_model.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace kvbench {

namespace {

std::vector<ModelPreset> with_twins(const ModelPreset& model, bool twins) {
    std::vector<ModelPreset> variants{model};
    // A latent cache has no KV heads to regroup.
    if (!twins || model.mla.kv_lora_rank != 0) return variants;
    if (model.n_kv_heads != model.n_heads) variants.push_back(with_kv_heads(model, model.n_heads));
    if (model.n_kv_heads != 1) variants.push_back(with_kv_heads(model, 1));
    return variants;
}

}  // namespace

std::optional<ModelConfig> step_config(const ModelPreset& model, KvDtype kv_dtype, KvDtype weight_dtype,
                                       std::uint64_t batch) {
    ModelConfig config = model_config_of(model);
    if (config.block != BlockKind::full) return std::nullopt;
    const std::optional<WeightDtype> weights = find_weight_dtype(kv_dtype_info(weight_dtype).name);
    if (!weights) return std::nullopt;
    config.weight_dtype = *weights;
    config.kv_dtype = kv_dtype;
    config.n_batch = static_cast<std::size_t>(batch);
    return config;
}

namespace {

MemoryRow plan_row(const ModelPreset& model, bool twin, const CacheLayout& layout, std::uint64_t seq_len,
                   std::uint64_t batch, const MemoryRequest& request) {
    MemoryRow row;
    row.model = model.name;
    row.grouping = model.mla.kv_lora_rank != 0 ? "MLA" : grouping_label(model.n_heads, model.n_kv_heads);
    row.twin = twin;
    row.n_layers = model.n_layers;
    row.n_heads = model.n_heads;
    row.n_kv_heads = model.n_kv_heads;
    row.head_dim = model.head_dim;
    row.kv_dtype = layout.kv_dtype;
    row.window = largest_window(model);
    row.window_layers = window_label(model);
    row.block_size = layout.block_size;
    row.seq_len = seq_len;
    row.shared_prefix = layout.shared_prefix;
    row.batch = batch;
    row.kv_bytes_per_token = kv_bytes_per_token(model, layout.kv_dtype);
    row.prefix = prefix_bill(model, layout);
    row.sequence = sequence_bill(model, seq_len, layout);
    row.kv_bytes_total = batch_kv_bytes(model, seq_len, batch, layout);
    row.weight_dtype = request.weight_dtype;
    row.n_params = model.n_params;
    row.weight_bytes = weight_bytes(model.n_params, request.weight_dtype);
    if (model.n_params != 0) row.total_bytes = checked_add(row.weight_bytes, row.kv_bytes_total);
    if (const std::optional<ModelConfig> step = step_config(model, layout.kv_dtype, request.weight_dtype, batch)) {
        row.n_star = kv_weight_crossover(*step);
        row.n_star_never = !row.n_star.has_value();
    }
    if (request.budget_bytes && row.total_bytes) {
        const std::uint64_t budget = *request.budget_bytes;
        row.budget_bytes = budget;
        row.fits = *row.total_bytes <= budget;
        const std::uint64_t kv_budget = budget > row.weight_bytes ? budget - row.weight_bytes : 0;
        row.max_batch = max_batch(model, seq_len, layout, kv_budget);
        row.max_seq = max_context(model, batch, layout, kv_budget);
        row.max_seq_unlimited = !row.max_seq.has_value();
    }
    return row;
}

}  // namespace

std::vector<MemoryRow> plan_memory(const MemoryRequest& request) {
    std::vector<MemoryRow> rows;
    for (const ModelPreset& model : request.models) {
        for (KvDtype kv_dtype : request.kv_dtypes) {
            CacheLayout layout;
            layout.kv_dtype = kv_dtype;
            layout.block_size = request.block_size;
            bool twin = false;
            const ModelPreset windowed = request.window ? with_window(model, *request.window) : model;
            for (const ModelPreset& variant : with_twins(windowed, request.twins)) {
                for (std::uint64_t seq_len : request.seq) {
                    for (const SharedPrefixLength& prefix : request.shared_prefixes) {
                        layout.shared_prefix = prefix.positions_at(static_cast<std::size_t>(seq_len));
                        for (std::uint64_t batch : request.batch) {
                            rows.push_back(plan_row(variant, twin, layout, seq_len, batch, request));
                        }
                    }
                }
                twin = true;
            }
        }
    }
    return rows;
}

std::vector<std::string> context_warnings(const MemoryRequest& request) {
    std::vector<std::string> warnings;
    if (request.seq.empty()) return warnings;
    const std::uint64_t longest = *std::max_element(request.seq.begin(), request.seq.end());
    for (const ModelPreset& model : request.models) {
        if (!model.max_position_embeddings || longest <= *model.max_position_embeddings) continue;
        warnings.push_back(fmt::format("--seq {} passes the {} positions {} was trained for (max_position_embeddings): "
                                       "its rows there are memory, not a context the model handles",
                                       longest, *model.max_position_embeddings, model.name));
    }
    return warnings;
}

}  // namespace kvbench
