// The latent-attention shapes the MLA tests share (docs/model.md, "Latent attention").
#pragma once

#include "kvbench/engine/config.hpp"

#include "test_support.hpp"

#include <cstddef>

namespace kvbench::test {

// H = 4 heads of r = 16, d_r = 8, d_n = 12, d_v = 12 on D = 32: small, and no width a multiple
// of another, so a head or stride mixed up shows.
inline ModelConfig latent_config(std::size_t n_batch, std::size_t seq_len, std::size_t n_layers) {
    ModelConfig config = make_config(n_batch, seq_len, 32, 4, 1, n_layers);
    config.mla = {.kv_lora_rank = 16, .rope_dim = 8, .nope_dim = 12, .v_head_dim = 12, .q_lora_rank = 0};
    return config;
}

// The same attention in DeepSeek's whole layer: RMSNorm, latent attention with its own norms
// and RoPE, RMSNorm, then a dense MLP of F = 40 on the first layer and 5 experts of 24 (2 per
// token, 1 shared) on the rest.
inline ModelConfig full_latent_config(std::size_t n_batch, std::size_t seq_len, std::size_t n_layers) {
    ModelConfig config = latent_config(n_batch, seq_len, n_layers);
    config.block = BlockKind::full;
    config.ffn_dim = 40;
    config.moe = {.n_experts = 5, .n_active = 2, .n_shared = 1, .expert_dim = 24, .n_dense_layers = 1};
    config.mla.q_lora_rank = 10;
    return config;
}

}  // namespace kvbench::test
