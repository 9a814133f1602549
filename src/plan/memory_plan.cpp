// The memory bill's arithmetic (docs/memory.md, "Formulas").
#include "kvbench/plan/memory_plan.hpp"

#include "kvbench/engine/checked_size.hpp"

#include <algorithm>

namespace kvbench {

namespace {

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

}  // namespace

std::uint64_t kv_bytes_per_token(const ModelPreset& model, KvDtype kv_dtype) {
    return checked_product({2, model.n_layers, model.n_kv_heads, kv_vector_bytes(kv_dtype, model.head_dim)});
}

SequenceBill sequence_bill(const ModelPreset& model, std::uint64_t seq_len, const CacheLayout& layout) {
    SequenceBill bill;
    bill.cached_tokens = layout.window ? std::min(seq_len, *layout.window) : seq_len;
    bill.allocated_tokens = checked_mul(ceil_div(bill.cached_tokens, layout.block_size), layout.block_size);
    const std::uint64_t per_token = kv_bytes_per_token(model, layout.kv_dtype);
    bill.kv_bytes = checked_mul(bill.allocated_tokens, per_token);
    bill.waste_bytes = (bill.allocated_tokens - bill.cached_tokens) * per_token;
    return bill;
}

std::uint64_t weight_bytes(std::uint64_t n_params, KvDtype dtype) {
    const std::uint64_t bits = kv_dtype_info(dtype).bits;
    // n_params * bits can pass 2^64 only for absurd counts; split to stay exact below that.
    return checked_add(checked_mul(n_params / 8, bits), ceil_div((n_params % 8) * bits, 8));
}

std::uint64_t max_batch(const ModelPreset& model, std::uint64_t seq_len, const CacheLayout& layout,
                        std::uint64_t kv_budget_bytes) {
    return kv_budget_bytes / sequence_bill(model, seq_len, layout).kv_bytes;
}

std::optional<std::uint64_t> max_context(const ModelPreset& model, std::uint64_t batch, const CacheLayout& layout,
                                         std::uint64_t kv_budget_bytes) {
    const std::uint64_t per_token = kv_bytes_per_token(model, layout.kv_dtype);
    // Tokens each sequence may hold, then whole blocks of them: the cache of a context of
    // `tokens` tokens is ceil(tokens / block) blocks, so the longest context fills its last block.
    const std::uint64_t tokens = kv_budget_bytes / per_token / batch;
    const std::uint64_t fitting = tokens / layout.block_size * layout.block_size;
    if (layout.window && fitting >= ceil_div(*layout.window, layout.block_size) * layout.block_size) {
        return std::nullopt;
    }
    return fitting;
}

ModelPreset with_kv_heads(const ModelPreset& model, std::uint64_t n_kv_heads) {
    ModelPreset twin = model;
    twin.n_kv_heads = n_kv_heads;
    return twin;
}

}  // namespace kvbench
