// The counting formulas of docs/counting.md, written once. Requires a validated config.
#include "kvbench/engine/cost_model.hpp"

namespace kvbench {

namespace {
std::uint64_t u64(std::size_t v) { return static_cast<std::uint64_t>(v); }
}  // namespace

const char* path_name(DecodePath path) {
    return path == DecodePath::cached ? "cached" : "uncached";
}

std::uint64_t weights_per_layer(const ModelConfig& c) {
    // Wq and Wo are D×H·dh each, Wk and Wv D×G·dh each.
    const std::uint64_t d = u64(c.model_dim);
    return 2 * d * u64(c.q_dim()) + 2 * d * u64(c.kv_dim());
}

std::uint64_t step_flops(const ModelConfig& c, DecodePath path) {
    const std::uint64_t p = weights_per_layer(c);
    const std::uint64_t n = u64(c.seq_len);
    const std::uint64_t attn_width = u64(c.q_dim());  // H·dh
    const std::uint64_t per_sequence = path == DecodePath::cached
                                           ? 2 * p + 4 * attn_width * n
                                           : 2 * n * p + 2 * attn_width * n * (n + 1);
    return u64(c.n_layers) * u64(c.n_batch) * per_sequence;
}

std::uint64_t kv_vector_bytes_of(const ModelConfig& c) { return kv_vector_bytes(c.kv_dtype, u64(c.head_dim())); }

std::uint64_t step_bytes(const ModelConfig& c, DecodePath path) {
    const std::uint64_t b = u64(c.n_batch);
    const std::uint64_t n = u64(c.seq_len);
    const std::uint64_t rows = path == DecodePath::cached ? b : b * n;  // activations read and written
    // The uncached path keeps no cache: its K and V are f32 activations whatever kv_dtype says.
    const std::uint64_t kv_vector = path == DecodePath::cached ? kv_vector_bytes_of(c)
                                                               : u64(c.head_dim()) * activation_elem_bytes;
    const std::uint64_t per_layer = weights_per_layer(c) * weight_elem_bytes +
                                    2 * b * n * u64(c.n_kv_heads) * kv_vector +
                                    2 * rows * u64(c.model_dim) * activation_elem_bytes;
    return u64(c.n_layers) * per_layer;
}

std::uint64_t kv_cache_bytes(const ModelConfig& c) {
    return 2 * u64(c.n_layers) * u64(c.n_batch) * u64(c.seq_len) * u64(c.n_kv_heads) * kv_vector_bytes_of(c);
}

StepCost step_cost(const ModelConfig& config, DecodePath path) {
    return {step_flops(config, path), step_bytes(config, path), kv_cache_bytes(config)};
}

}  // namespace kvbench
