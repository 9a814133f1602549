// The element-wise parts of a full block (docs/model.md, "The full layer"): RMSNorm, RoPE and
// SwiGLU's gate, each beside its naive twin (src/engine/reference.cpp).
#pragma once

#include "kvbench/engine/config.hpp"

#include <cstddef>

namespace kvbench {

// Llama's RMSNorm epsilon (rms_norm_eps of Llama 2 and 3).
inline constexpr float rms_norm_eps = 1e-5f;

// y[r] = x[r] / sqrt(mean(x[r]²) + rms_norm_eps) ⊙ gains, for each row r of x (n_rows, dim).
// Requires: x and y do not overlap, or are the same array.
void rmsnorm(const float* x, std::size_t n_rows, std::size_t dim, const float* gains, float* y);
void rmsnorm_naive(const float* x, std::size_t n_rows, std::size_t dim, const float* gains, float* y);

// RoPE on the query and key heads of qkv rows (n_rows, qkv_dim): row r sits at position
// first_pos + r % seq_len. Hugging Face Llama's rotate-half convention: in each head of dh
// values, element i < dh/2 pairs with i + dh/2 and turns by pos · rope_theta^(-2i/dh)
// (Hugging Face Llama's rotate-half convention, which docs/model.md#the-full-layer names). Values are left alone.
// Requires: head_dim even; seq_len >= 1.
void apply_rope(const ModelConfig& config, float* qkv, std::size_t n_rows, std::size_t seq_len, std::size_t first_pos);
void apply_rope_naive(const ModelConfig& config, float* qkv, std::size_t n_rows, std::size_t seq_len,
                      std::size_t first_pos);

// SwiGLU's gate: out[r][i] = silu(gate_up[r][i]) · gate_up[r][width + i], silu(a) = a / (1 + e^-a),
// for gate_up (n_rows, 2·width) and out (n_rows, width).
void silu_gate(const float* gate_up, std::size_t n_rows, std::size_t width, float* out);
void silu_gate_naive(const float* gate_up, std::size_t n_rows, std::size_t width, float* out);

}  // namespace kvbench
