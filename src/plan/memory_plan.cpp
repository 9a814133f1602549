// The memory bill's arithmetic (docs/memory.md, "Formulas").
#include "kvbench/plan/memory_plan.hpp"

#include "kvbench/engine/checked_size.hpp"
#include "kvbench/engine/cost_model.hpp"

#include <algorithm>
#include <limits>

namespace kvbench {

namespace {

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

std::uint64_t round_up(std::uint64_t tokens, std::uint64_t block) { return checked_mul(ceil_div(tokens, block), block); }

std::uint64_t window_of(const ModelPreset& model, std::size_t layer) {
    return model.layer_windows.empty() ? 0 : model.layer_windows[layer];
}

// Positions of the shared prefix layer `layer` keeps once for every sequence: none on a window layer.
std::uint64_t prefix_positions(const ModelPreset& model, std::size_t layer, const CacheLayout& layout) {
    return window_of(model, layer) == 0 ? layout.shared_prefix : 0;
}

// Positions layer `layer` of `model` holds for one sequence at context seq_len, its own past
// the shared prefix.
std::uint64_t cached_positions(const ModelPreset& model, std::size_t layer, std::uint64_t seq_len,
                               const CacheLayout& layout) {
    const std::uint64_t window = window_of(model, layer);
    if (window != 0) return std::min(seq_len, window);
    return seq_len - std::min(seq_len, prefix_positions(model, layer, layout));
}

// The layers' positions billed in whole blocks, of each per_layer_position bytes.
template <typename PositionsOf>
SequenceBill bill_of(const ModelPreset& model, const CacheLayout& layout, PositionsOf positions_of) {
    // Every layer of a model caches the same bytes per position; only how many differs.
    const std::uint64_t per_layer_position = kv_bytes_per_token(model, layout.kv_dtype) / model.n_layers;
    SequenceBill bill;
    std::uint64_t allocated = 0;
    std::uint64_t cached = 0;
    for (std::size_t layer = 0; layer < model.n_layers; ++layer) {
        const std::uint64_t positions = positions_of(layer);
        bill.cached_tokens = std::max(bill.cached_tokens, positions);
        cached = checked_add(cached, positions);
        allocated = checked_add(allocated, round_up(positions, layout.block_size));
    }
    bill.allocated_tokens = round_up(bill.cached_tokens, layout.block_size);
    bill.kv_bytes = checked_mul(allocated, per_layer_position);
    bill.waste_bytes = (allocated - cached) * per_layer_position;
    return bill;
}

}  // namespace

std::uint64_t kv_bytes_per_token(const ModelPreset& model, KvDtype kv_dtype) {
    ModelConfig config = model_config_of(model);
    config.kv_dtype = kv_dtype;
    return kv_bytes_per_position(config);
}

SequenceBill sequence_bill(const ModelPreset& model, std::uint64_t seq_len, const CacheLayout& layout) {
    return bill_of(model, layout, [&](std::size_t layer) { return cached_positions(model, layer, seq_len, layout); });
}

SequenceBill prefix_bill(const ModelPreset& model, const CacheLayout& layout) {
    return bill_of(model, layout, [&](std::size_t layer) { return prefix_positions(model, layer, layout); });
}

std::uint64_t batch_kv_bytes(const ModelPreset& model, std::uint64_t seq_len, std::uint64_t batch,
                             const CacheLayout& layout) {
    return checked_add(prefix_bill(model, layout).kv_bytes, checked_mul(batch, sequence_bill(model, seq_len, layout).kv_bytes));
}

std::uint64_t weight_bytes(std::uint64_t n_params, KvDtype dtype) {
    const std::uint64_t bits = kv_dtype_info(dtype).bits;
    // n_params * bits can pass 2^64 only for absurd counts; split to stay exact below that.
    return checked_add(checked_mul(n_params / 8, bits), ceil_div((n_params % 8) * bits, 8));
}

std::uint64_t max_batch(const ModelPreset& model, std::uint64_t seq_len, const CacheLayout& layout,
                        std::uint64_t kv_budget_bytes) {
    const std::uint64_t prefix = prefix_bill(model, layout).kv_bytes;
    if (prefix > kv_budget_bytes) return 0;
    return (kv_budget_bytes - prefix) / sequence_bill(model, seq_len, layout).kv_bytes;
}

std::optional<std::uint64_t> max_context(const ModelPreset& model, std::uint64_t batch, const CacheLayout& layout,
                                         std::uint64_t kv_budget_bytes) {
    const std::uint64_t prefix = prefix_bill(model, layout).kv_bytes;
    if (prefix > kv_budget_bytes) return 0;
    // Each sequence's own tokens past the shared prefix (all of them without one).
    const std::uint64_t shared = layout.shared_prefix;
    const auto fits = [&](std::uint64_t own) {
        const std::uint64_t per_sequence = sequence_bill(model, shared + own, layout).kv_bytes;
        return per_sequence <= (kv_budget_bytes - prefix) / batch;  // in whole sequences
    };
    const bool every_layer_windowed =
        !model.layer_windows.empty() &&
        std::find(model.layer_windows.begin(), model.layer_windows.end(), 0u) == model.layer_windows.end();
    if (every_layer_windowed && fits(*largest_window(model))) return std::nullopt;
    // The bill grows with the context: double past the answer, then bisect. Below one token per
    // layer-position of budget the doubling ends well before the sizes overflow.
    std::uint64_t low = 0;  // fits, or 0
    std::uint64_t high = 1;
    while (fits(high)) {
        low = high;
        high *= 2;
    }
    while (high - low > 1) {
        const std::uint64_t mid = low + (high - low) / 2;
        (fits(mid) ? low : high) = mid;
    }
    return low == 0 ? 0 : shared + low;
}

ModelPreset with_kv_heads(const ModelPreset& model, std::uint64_t n_kv_heads) {
    ModelPreset twin = model;
    twin.n_kv_heads = n_kv_heads;
    if (model.n_params != 0) {
        const std::uint64_t per_kv_head = checked_mul(checked_mul(2 * model.n_layers, model.model_dim), model.head_dim);
        if (n_kv_heads >= model.n_kv_heads) {
            twin.n_params = checked_add(model.n_params, checked_mul(per_kv_head, n_kv_heads - model.n_kv_heads));
        } else {
            // A --params smaller than the projections it must hold is not a model: unknown, not wrapped.
            const std::uint64_t removed = checked_mul(per_kv_head, model.n_kv_heads - n_kv_heads);
            twin.n_params = removed < model.n_params ? model.n_params - removed : 0;
        }
    }
    return twin;
}

ModelPreset with_window(const ModelPreset& model, std::optional<std::uint64_t> window) {
    ModelPreset windowed = model;
    windowed.layer_windows.clear();
    if (window) windowed.layer_windows.assign(model.n_layers, static_cast<std::uint32_t>(*window));
    return windowed;
}

}  // namespace kvbench
