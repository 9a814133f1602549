// The tensor- and pipeline-parallel split of one model into the shape each device runs.
#include "kvbench/plan/parallelism.hpp"

#include <fmt/format.h>

namespace kvbench {

std::uint64_t kv_heads_per_rank(std::uint64_t n_kv_heads, std::uint64_t tp) {
    return n_kv_heads >= tp ? n_kv_heads / tp : 1;
}

std::uint64_t layers_per_stage(std::uint64_t n_layers, std::uint64_t pp) { return (n_layers + pp - 1) / pp; }

void check_parallelism(const ModelConfig& whole, const Parallelism& parallelism) {
    const std::uint64_t tp = parallelism.tp;
    const std::uint64_t heads = whole.n_heads;
    const std::uint64_t kv_heads = whole.n_kv_heads;
    if (tp == 0 || heads % tp != 0) {
        throw ConfigError(fmt::format("--tp {}: must divide the model's {} query heads, as each rank holds whole "
                                      "heads",
                                      tp, heads));
    }
    if (!whole.is_latent() && kv_heads % tp != 0 && tp % kv_heads != 0) {
        throw ConfigError(fmt::format("--tp {}: must divide the model's {} KV heads or be a multiple of them, so "
                                      "that each rank holds whole KV heads (replicated when the ranks outnumber "
                                      "them)",
                                      tp, kv_heads));
    }
    if (parallelism.pp == 0 || parallelism.pp > whole.n_layers) {
        throw ConfigError(fmt::format("--pp {}: must be between 1 and the model's {} layers", parallelism.pp,
                                      whole.n_layers));
    }
}

ModelConfig device_config(const ModelConfig& whole, const Parallelism& parallelism) {
    ModelConfig device = whole;
    device.explicit_head_dim = whole.head_dim();  // H / tp heads of the same width, whatever D / (H / tp) is
    device.n_heads = whole.n_heads / parallelism.tp;
    if (!whole.is_latent()) device.n_kv_heads = kv_heads_per_rank(whole.n_kv_heads, parallelism.tp);
    else device.n_kv_heads = device.n_heads;  // one latent per layer, shared by every query head
    device.n_layers = layers_per_stage(whole.n_layers, parallelism.pp);
    if (!whole.layer_windows.empty()) device.layer_windows.resize(device.n_layers);  // the first stage's layers
    return device;
}

}  // namespace kvbench
