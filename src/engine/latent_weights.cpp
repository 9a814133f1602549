// Seeded weights of a latent attention layer.
#include "kvbench/engine/latent_weights.hpp"

#include "kvbench/engine/checked_size.hpp"

#include <cmath>
#include <utility>

namespace kvbench {

LatentDims::LatentDims(const ModelConfig& config)
    : n_heads(config.n_heads),
      rank(config.mla.kv_lora_rank),
      rope_dim(config.mla.rope_dim),
      nope_dim(config.mla.nope_dim),
      v_head_dim(config.mla.v_head_dim),
      q_lora_rank(config.mla.q_lora_rank) {}

std::size_t LatentWeights::bytes() const {
    std::size_t total = (q_norm.size() + kv_norm.size()) * sizeof(float);
    for (const WeightMatrix* matrix : latent_matrices(*this)) total += matrix->bytes();
    return total;
}

std::size_t LatentWeights::bytes_for(const ModelConfig& config) {
    const LatentDims d(config);
    const WeightDtype dtype = config.weight_dtype;
    const std::size_t dim = config.model_dim;
    const std::size_t q_in = d.q_lora_rank != 0 ? d.q_lora_rank : dim;
    std::size_t total = 0;
    for (const auto& [n_out, n_in] : {std::pair{d.q_lora_rank, dim}, {d.q_width(), q_in}, {d.latent_dim(), dim},
                                      {checked_mul(d.n_heads, d.rank), d.nope_dim}, {d.out_width(), d.rank},
                                      {dim, d.out_width()}}) {
        total = checked_add(total, WeightMatrix::bytes_for(dtype, n_out, n_in));
    }
    if (config.block == BlockKind::full) total = checked_add(total, checked_mul(d.q_lora_rank + d.rank, sizeof(float)));
    return total;
}

std::array<const WeightMatrix*, 6> latent_matrices(const LatentWeights& w) {
    return {&w.wq_down, &w.wq, &w.wkv_down, &w.wuk, &w.wuv, &w.wo};
}

namespace {

// A uniform variable on [-a, a) has variance a²/3.
float bound_for_fan_in(double fan_in) { return static_cast<float>(std::sqrt(3.0 / fan_in)); }

WeightMatrix draw(Rng& rng, const ModelConfig& config, std::size_t n_out, std::size_t n_in, double fan_in,
                  std::vector<float>& values) {
    values.resize(checked_mul(n_out, n_in));
    fill_uniform(rng, values, bound_for_fan_in(fan_in));
    return WeightMatrix(config.weight_dtype, n_out, n_in, values);
}

std::vector<float> draw_gains(Rng& rng, std::size_t n) {
    std::vector<float> gains(n);
    fill_uniform(rng, gains, 0.1f);
    for (float& gain : gains) gain += 1.0f;
    return gains;
}

}  // namespace

LatentWeights make_latent_weights(const ModelConfig& config, Rng& rng) {
    const LatentDims d(config);
    const std::size_t dim = config.model_dim;
    const auto dim_d = static_cast<double>(dim);
    std::vector<float> values;  // one matrix's f32 draws, stored as config.weight_dtype
    LatentWeights w;
    if (d.q_lora_rank != 0) w.wq_down = draw(rng, config, d.q_lora_rank, dim, dim_d, values);
    const std::size_t q_in = d.q_lora_rank != 0 ? d.q_lora_rank : dim;
    w.wq = draw(rng, config, d.q_width(), q_in, static_cast<double>(q_in), values);
    w.wkv_down = draw(rng, config, d.latent_dim(), dim, dim_d, values);
    // c has the variance of x, so the expanded keys and values keep it too: fan-in r.
    w.wuk = draw(rng, config, d.n_heads * d.rank, d.nope_dim, static_cast<double>(d.rank), values);
    w.wuv = draw(rng, config, d.out_width(), d.rank, static_cast<double>(d.rank), values);
    w.wo = draw(rng, config, dim, d.out_width(), static_cast<double>(d.out_width()) * static_cast<double>(config.n_layers),
                values);
    if (config.block == BlockKind::full) {
        w.q_norm = draw_gains(rng, d.q_lora_rank);
        w.kv_norm = draw_gains(rng, d.rank);
    }
    return w;
}

}  // namespace kvbench
