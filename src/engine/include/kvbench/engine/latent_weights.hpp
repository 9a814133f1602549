// LatentWeights: the matrices of one latent attention layer (MLA), seeded like the others.
#pragma once

#include "kvbench/engine/config.hpp"
#include "kvbench/engine/page_aligned.hpp"
#include "kvbench/engine/rng.hpp"
#include "kvbench/engine/weight_matrix.hpp"

#include <array>
#include <cstddef>
#include <vector>

namespace kvbench {

// The widths of latent attention (docs/model.md, "Latent attention"), read once from a config.
struct LatentDims {
    std::size_t n_heads;      // H
    std::size_t rank;         // r, kv_lora_rank: the latent c
    std::size_t rope_dim;     // d_r: the shared RoPE key
    std::size_t nope_dim;     // d_n: each head's key part expanded from c
    std::size_t v_head_dim;   // d_v: each head's value expanded from c
    std::size_t q_lora_rank;  // 0: q projected from x directly

    explicit LatentDims(const ModelConfig& config);
    std::size_t qk_dim() const { return nope_dim + rope_dim; }      // a head's query and expanded key
    std::size_t latent_dim() const { return rank + rope_dim; }      // one cached vector: c | k_rope
    std::size_t q_width() const { return n_heads * qk_dim(); }      // q of one row, head h at h·qk_dim
    std::size_t out_width() const { return n_heads * v_head_dim; }  // head outputs of one row
};

// Stored transposed, (out, in) row-major, as LayerWeights is, so linear() projects with them, and
// in config.weight_dtype. Absent in a multi-head layer (every matrix and vector empty).
struct LatentWeights {
    WeightMatrix wq_down;   // (q_lora_rank, model_dim): W_dq^T; empty without q_lora_rank
    WeightMatrix wq;        // (H·(d_n + d_r), q_lora_rank or model_dim): head h's d_n rows, then its d_r
    WeightMatrix wkv_down;  // (r + d_r, model_dim): W_dkv^T, then W_kr^T: row t of x·W^T is c | k_rope
    // (H·r, d_n): head h's W_uk_h (r, d_n) at rows [h·r, (h+1)·r), the (out, in) matrix the cached
    // step absorbs into the query (q_nope·W_uk_h^T); the uncached path expands c·W_uk_h with it.
    WeightMatrix wuk;
    WeightMatrix wuv;       // (H·d_v, r): W_uv^T, head h's rows [h·d_v, (h+1)·d_v)
    WeightMatrix wo;        // (model_dim, H·d_v): W_o^T
    // A full layer's RMSNorm gains inside the attention (DeepSeek's q_a_layernorm and
    // kv_a_layernorm; docs/model.md): f32 like every norm, empty in an attention block.
    std::vector<float> q_norm;   // (q_lora_rank) floats; empty without q_lora_rank
    std::vector<float> kv_norm;  // (r) floats: on the latent c before it is cached

    std::size_t bytes() const;
    // bytes() of one layer of config, without drawing it. Throws SizeOverflow.
    static std::size_t bytes_for(const ModelConfig& config);
};

// Every matrix of `weights`, empty ones included, for whoever walks them (the cold-cache eviction).
std::array<const WeightMatrix*, 6> latent_matrices(const LatentWeights& weights);

// One layer's weights with variance 1/fan-in, Wo further scaled by 1/sqrt(L) (as make_weights
// does), drawn in f32 from `rng` in member order and stored as config.weight_dtype; a full
// layer's two norms' gains follow, in [0.9, 1.1). Requires: config validated and latent.
LatentWeights make_latent_weights(const ModelConfig& config, Rng& rng);

}  // namespace kvbench
