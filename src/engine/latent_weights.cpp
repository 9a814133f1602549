// Seeded weights of a latent attention layer.
#include "kvbench/engine/latent_weights.hpp"

#include "kvbench/engine/checked_size.hpp"

#include <cmath>

namespace kvbench {

LatentDims::LatentDims(const ModelConfig& config)
    : n_heads(config.n_heads),
      rank(config.mla.kv_lora_rank),
      rope_dim(config.mla.rope_dim),
      nope_dim(config.mla.nope_dim),
      v_head_dim(config.mla.v_head_dim),
      q_lora_rank(config.mla.q_lora_rank) {}

std::size_t LatentWeights::floats() const {
    return wq_down.size() + wq.size() + wkv_down.size() + wuk.size() + wuv.size() + wo.size();
}

std::size_t LatentWeights::floats_for(const ModelConfig& config) {
    const LatentDims d(config);
    const std::size_t dim = config.model_dim;
    const std::size_t q_in = d.q_lora_rank != 0 ? d.q_lora_rank : dim;
    return checked_add(
        checked_add(checked_add(checked_mul(d.q_lora_rank, dim), checked_mul(d.q_width(), q_in)),
                    checked_mul(d.latent_dim(), dim)),
        checked_add(checked_mul(checked_add(d.n_heads * d.nope_dim, d.out_width()), d.rank),
                    checked_mul(dim, d.out_width())));
}

std::array<const PageAlignedVector<float>*, 6> latent_matrices(const LatentWeights& w) {
    return {&w.wq_down, &w.wq, &w.wkv_down, &w.wuk, &w.wuv, &w.wo};
}

namespace {

// A uniform variable on [-a, a) has variance a²/3.
float bound_for_fan_in(double fan_in) { return static_cast<float>(std::sqrt(3.0 / fan_in)); }

void draw(Rng& rng, PageAlignedVector<float>& matrix, std::size_t n_out, std::size_t n_in, double fan_in) {
    matrix.resize(checked_mul(n_out, n_in));
    fill_uniform(rng, matrix, bound_for_fan_in(fan_in));
}

}  // namespace

LatentWeights make_latent_weights(const ModelConfig& config, Rng& rng) {
    const LatentDims d(config);
    const std::size_t dim = config.model_dim;
    const auto dim_d = static_cast<double>(dim);
    LatentWeights w;
    if (d.q_lora_rank != 0) draw(rng, w.wq_down, d.q_lora_rank, dim, dim_d);
    const std::size_t q_in = d.q_lora_rank != 0 ? d.q_lora_rank : dim;
    draw(rng, w.wq, d.q_width(), q_in, static_cast<double>(q_in));
    draw(rng, w.wkv_down, d.latent_dim(), dim, dim_d);
    // c has the variance of x, so the expanded keys and values keep it too.
    draw(rng, w.wuk, d.n_heads * d.nope_dim, d.rank, static_cast<double>(d.rank));
    draw(rng, w.wuv, d.out_width(), d.rank, static_cast<double>(d.rank));
    draw(rng, w.wo, dim, d.out_width(), static_cast<double>(d.out_width()) * static_cast<double>(config.n_layers));
    return w;
}

}  // namespace kvbench
