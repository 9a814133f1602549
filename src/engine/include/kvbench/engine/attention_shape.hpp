// AttentionShape: what one layer's attention is to the kernels, for multi-head and latent attention alike.
#pragma once

#include "kvbench/engine/config.hpp"

#include <cstddef>

namespace kvbench {

// Query heads, the cached vectors they share, and the widths their products run over
// (docs/model.md, "Latent attention"). Multi-head attention (MHA, GQA, MQA) is n_kv_heads
// vectors of head_dim keys and as many values. Latent attention's cached step, with the
// up-projections absorbed, is one shared vector per position, the latent c and the RoPE key
// (r + d_r values), against which every query head scores; its values are the first r of the
// same vector. Its uncached path expands K and V per head and is multi-head attention again,
// with keys of d_n + d_r and values of d_v.
struct AttentionShape {
    std::size_t n_heads = 1;
    std::size_t n_kv_heads = 1;   // vectors per position each group of query heads reads
    std::size_t key_dim = 1;      // width of q·k
    std::size_t value_dim = 1;    // width of a value, and of each head's output
    bool values_in_keys = false;  // a value is the first value_dim elements of its key (no V of its own)
    float scale = 1.0f;           // of q·k before the softmax: 1/sqrt of the model's query-key width

    std::size_t group_size() const { return n_heads / n_kv_heads; }
    std::size_t q_dim() const { return n_heads * key_dim; }      // queries of one row, head h at h·key_dim
    std::size_t out_dim() const { return n_heads * value_dim; }  // outputs of one row, head h at h·value_dim
};

// The cached step's attention: (H, G, dh, dh) for multi-head attention; (H, 1, r + d_r, r),
// values in keys, for latent attention. Scale 1/sqrt(dh), or 1/sqrt(d_n + d_r).
// Requires: config validated.
AttentionShape cached_attention_shape(const ModelConfig& config);

// The uncached forward's attention: the cached shape for multi-head attention; (H, H, d_n +
// d_r, d_v) for latent attention, whose K and V it expands. Requires: config validated.
AttentionShape causal_attention_shape(const ModelConfig& config);

// Width of one row of head outputs, what the output projection reads and --verify compares:
// H·dh, or H·d_v for latent attention (both paths' out_dim).
std::size_t attention_output_dim(const ModelConfig& config);

}  // namespace kvbench
