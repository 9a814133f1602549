// The attention shapes of the two paths, from a config's heads or latent widths.
#include "kvbench/engine/attention_shape.hpp"

#include <cmath>

namespace kvbench {

namespace {

float inverse_sqrt(std::size_t width) { return 1.0f / std::sqrt(static_cast<float>(width)); }

}  // namespace

AttentionShape cached_attention_shape(const ModelConfig& config) {
    if (config.is_latent()) {
        const MlaShape& mla = config.mla;
        // The absorbed query of head h is q_nope_h·W_uk_h (r values) beside q_rope_h (d_r): its
        // product with [c | k_rope] is the expanded q·k, so the scale is the expanded one.
        return {config.n_heads, 1, mla.kv_lora_rank + mla.rope_dim, mla.kv_lora_rank, true,
                inverse_sqrt(mla.nope_dim + mla.rope_dim)};
    }
    return {config.n_heads, config.n_kv_heads, config.head_dim(), config.head_dim(), false,
            inverse_sqrt(config.head_dim())};
}

AttentionShape causal_attention_shape(const ModelConfig& config) {
    if (config.is_latent()) {
        const MlaShape& mla = config.mla;
        return {config.n_heads, config.n_heads, mla.nope_dim + mla.rope_dim, mla.v_head_dim, false,
                inverse_sqrt(mla.nope_dim + mla.rope_dim)};
    }
    return cached_attention_shape(config);
}

std::size_t attention_output_dim(const ModelConfig& config) { return causal_attention_shape(config).out_dim(); }

}  // namespace kvbench
