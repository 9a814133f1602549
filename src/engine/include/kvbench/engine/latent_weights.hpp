// LatentWeights: the matrices of one latent attention layer (MLA), seeded like the others.
#pragma once

#include "kvbench/engine/config.hpp"
#include "kvbench/engine/page_aligned.hpp"
#include "kvbench/engine/rng.hpp"

#include <array>
#include <cstddef>

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

// Stored transposed, (out, in) row-major, as LayerWeights is, so linear() projects with them.
// Absent in a multi-head layer (every vector empty).
struct LatentWeights {
    PageAlignedVector<float> wq_down;   // (q_lora_rank, model_dim): W_dq^T; empty without q_lora_rank
    PageAlignedVector<float> wq;        // (H·(d_n + d_r), q_lora_rank or model_dim): head h's d_n rows, then its d_r
    PageAlignedVector<float> wkv_down;  // (r + d_r, model_dim): W_dkv^T, then W_kr^T: row t of x·W^T is c | k_rope
    PageAlignedVector<float> wuk;       // (H·d_n, r): W_uk^T, head h's rows [h·d_n, (h+1)·d_n)
    PageAlignedVector<float> wuv;       // (H·d_v, r): W_uv^T, head h's rows [h·d_v, (h+1)·d_v)
    PageAlignedVector<float> wo;        // (model_dim, H·d_v): W_o^T

    std::size_t floats() const;
    // floats() of one layer of config, without drawing it: weights_per_layer (cost_model.hpp).
    static std::size_t floats_for(const ModelConfig& config);
};

// Every matrix of `weights`, empty ones included, for whoever walks them (the cold-cache eviction).
std::array<const PageAlignedVector<float>*, 6> latent_matrices(const LatentWeights& weights);

// One layer's weights with variance 1/fan-in, Wo further scaled by 1/sqrt(L) (as make_weights
// does), drawn from `rng` in member order. Requires: config validated and latent.
LatentWeights make_latent_weights(const ModelConfig& config, Rng& rng);

}  // namespace kvbench
