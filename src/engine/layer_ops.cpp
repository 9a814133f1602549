// RMSNorm, RoPE and SwiGLU's gate: a full block's element-wise work, vectorised where it is long.
#include "kvbench/engine/layer_ops.hpp"

#include "kernels/vector_math.hpp"

#include <array>
#include <cmath>

namespace kvbench {

void rmsnorm(const float* x, std::size_t n_rows, std::size_t dim, const float* gains, float* y) {
    // Eight partial sums: one vector's worth of independent chains, which the compiler keeps in
    // a register (a single float chain may not be reordered into one).
    constexpr std::size_t lanes = 8;
    for (std::size_t r = 0; r < n_rows; ++r) {
        const float* row = x + r * dim;
        std::array<float, lanes> partial{};
        std::size_t i = 0;
        for (; i + lanes <= dim; i += lanes) {
            for (std::size_t l = 0; l < lanes; ++l) partial[l] += row[i + l] * row[i + l];
        }
        for (; i < dim; ++i) partial[0] += row[i] * row[i];
        float sum = 0.0f;
        for (const float p : partial) sum += p;
        const float inverse_rms = 1.0f / std::sqrt(sum / static_cast<float>(dim) + rms_norm_eps);
        float* out = y + r * dim;
        for (std::size_t j = 0; j < dim; ++j) out[j] = row[j] * inverse_rms * gains[j];
    }
}

void apply_rope(const ModelConfig& config, float* qkv, std::size_t n_rows, std::size_t seq_len, std::size_t first_pos) {
    const std::size_t head_dim = config.head_dim();
    const std::size_t half = head_dim / 2;
    const std::size_t n_rotated = config.n_heads + config.n_kv_heads;  // q's heads, then k's
    const std::size_t qkv_dim = config.qkv_dim();
    for (std::size_t r = 0; r < n_rows; ++r) {
        const double pos = static_cast<double>(first_pos + r % seq_len);
        float* row = qkv + r * qkv_dim;
        // Angles in double: at a position of 10^6 a float angle would be off by a tenth of a radian.
        for (std::size_t i = 0; i < half; ++i) {
            const double angle = pos * std::pow(config.rope_theta, -2.0 * static_cast<double>(i) / static_cast<double>(head_dim));
            const auto cos_a = static_cast<float>(std::cos(angle));
            const auto sin_a = static_cast<float>(std::sin(angle));
            for (std::size_t h = 0; h < n_rotated; ++h) {
                float* head = row + h * head_dim;
                const float a = head[i];
                const float b = head[i + half];
                head[i] = a * cos_a - b * sin_a;
                head[i + half] = b * cos_a + a * sin_a;
            }
        }
    }
}

void silu_gate(const float* gate_up, std::size_t n_rows, std::size_t width, float* out) {
    for (std::size_t r = 0; r < n_rows; ++r) {
        const float* gate = gate_up + r * 2 * width;
        const float* up = gate + width;
        float* row = out + r * width;
        for (std::size_t i = 0; i < width; ++i) row[i] = -gate[i];
        exp_polynomial(row, width, row);  // e^-gate; saturates at e^88.38, where silu is 0 anyway
        for (std::size_t i = 0; i < width; ++i) row[i] = gate[i] / (1.0f + row[i]) * up[i];
    }
}

}  // namespace kvbench
