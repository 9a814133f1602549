// Plain loops, double accumulation, no BLAS and no threads: slow and obviously right.
#include "kvbench/engine/reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kvbench {

void linear_reference(const float* x, std::size_t n_rows, std::size_t in_dim, const float* w,
                      std::size_t out_dim, float* y) {
    for (std::size_t r = 0; r < n_rows; ++r) {
        for (std::size_t o = 0; o < out_dim; ++o) {
            double acc = 0.0;
            for (std::size_t i = 0; i < in_dim; ++i) {
                acc += static_cast<double>(x[r * in_dim + i]) * static_cast<double>(w[o * in_dim + i]);
            }
            y[r * out_dim + o] = static_cast<float>(acc);
        }
    }
}

void attention_reference(const float* q, const float* keys, const float* values, std::size_t n_ctx,
                         std::size_t group_size, std::size_t head_dim, float* out) {
    const double scale = 1.0 / std::sqrt(static_cast<double>(head_dim));
    std::vector<double> weights(n_ctx);
    for (std::size_t i = 0; i < group_size; ++i) {
        double max_score = -std::numeric_limits<double>::infinity();
        for (std::size_t t = 0; t < n_ctx; ++t) {
            double dot = 0.0;
            for (std::size_t d = 0; d < head_dim; ++d) {
                dot += static_cast<double>(q[i * head_dim + d]) *
                       static_cast<double>(keys[t * head_dim + d]);
            }
            weights[t] = dot * scale;
            max_score = std::max(max_score, weights[t]);
        }
        double sum = 0.0;
        for (double& weight : weights) {
            weight = std::exp(weight - max_score);
            sum += weight;
        }
        for (std::size_t d = 0; d < head_dim; ++d) {
            double acc = 0.0;
            for (std::size_t t = 0; t < n_ctx; ++t) {
                acc += weights[t] * static_cast<double>(values[t * head_dim + d]);
            }
            out[i * head_dim + d] = static_cast<float>(acc / sum);
        }
    }
}

std::vector<float> forward_reference(const ModelConfig& config, const ModelWeights& weights,
                                     std::span<const float> inputs) {
    const std::size_t dim = config.model_dim;
    const std::size_t kv_dim = config.kv_dim();
    const std::size_t head_dim = config.head_dim();
    const std::size_t seq_len = config.seq_len;
    std::vector<float> x(inputs.begin(), inputs.end());
    std::vector<float> q(seq_len * dim), k(seq_len * kv_dim), v(seq_len * kv_dim);
    std::vector<float> heads_out(seq_len * dim), y(seq_len * dim);
    std::vector<float> k_head(seq_len * head_dim), v_head(seq_len * head_dim);

    for (std::size_t layer = 0; layer < config.n_layers; ++layer) {
        const float* wq = weights.layers[layer].wqkv.data();
        const float* wk = wq + dim * dim;
        const float* wv = wk + kv_dim * dim;
        const float* wo = weights.layers[layer].wo.data();
        for (std::size_t b = 0; b < config.n_batch; ++b) {
            float* xb = x.data() + b * seq_len * dim;
            linear_reference(xb, seq_len, dim, wq, dim, q.data());
            linear_reference(xb, seq_len, dim, wk, kv_dim, k.data());
            linear_reference(xb, seq_len, dim, wv, kv_dim, v.data());
            for (std::size_t h = 0; h < config.n_heads; ++h) {
                const std::size_t g = h / config.group_size();
                for (std::size_t t = 0; t < seq_len; ++t) {
                    std::copy_n(k.data() + t * kv_dim + g * head_dim, head_dim, k_head.data() + t * head_dim);
                    std::copy_n(v.data() + t * kv_dim + g * head_dim, head_dim, v_head.data() + t * head_dim);
                }
                for (std::size_t i = 0; i < seq_len; ++i) {
                    // Causal mask: position i sees positions 0..i.
                    attention_reference(q.data() + i * dim + h * head_dim, k_head.data(), v_head.data(),
                                        i + 1, 1, head_dim, heads_out.data() + i * dim + h * head_dim);
                }
            }
            linear_reference(heads_out.data(), seq_len, dim, wo, dim, y.data());
            for (std::size_t i = 0; i < seq_len * dim; ++i) xb[i] += y[i];
        }
    }
    return x;
}

double relative_error(std::span<const float> actual, std::span<const float> expected) {
    double max_diff = 0.0;
    double max_ref = 0.0;
    for (std::size_t i = 0; i < expected.size(); ++i) {
        // std::max would silently drop a NaN; a broken kernel must fail the check instead.
        if (!std::isfinite(actual[i])) return std::numeric_limits<double>::infinity();
        max_diff = std::max(max_diff, std::abs(static_cast<double>(actual[i]) - expected[i]));
        max_ref = std::max(max_ref, std::abs(static_cast<double>(expected[i])));
    }
    if (max_ref == 0.0) return max_diff == 0.0 ? 0.0 : std::numeric_limits<double>::infinity();
    return max_diff / max_ref;
}

}  // namespace kvbench
