// Plain loops, double accumulation, no BLAS and no threads: slow and obviously right.
#include "kvbench/engine/reference.hpp"

#include "kvbench/engine/attention.hpp"
#include "kvbench/engine/causal_attention.hpp"
#include "kvbench/engine/feed_forward.hpp"
#include "kvbench/engine/layer_ops.hpp"
#include "kvbench/engine/linear.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace kvbench {

namespace {

// The first position that position i of layer `layer` attends to: 0, or the start of its window.
std::size_t first_seen(const ModelConfig& config, std::size_t layer, std::size_t i) {
    const std::size_t window = config.window_of(layer);
    return window != 0 && i + 1 > window ? i + 1 - window : 0;
}

// Head h's sink logit, or minus infinity (no sink) when there are none.
double sink_of(const float* sinks, std::size_t h) {
    return sinks != nullptr ? sinks[h] : -std::numeric_limits<double>::infinity();
}

}  // namespace

std::uint64_t linear_naive(const float* x, std::size_t n_rows, std::size_t in_dim, WeightView w,
                           std::size_t out_dim, float beta, float* y) {
    std::uint64_t multiply_adds = 0;
    for (std::size_t r = 0; r < n_rows; ++r) {
        for (std::size_t o = 0; o < out_dim; ++o) {
            double acc = beta == 0.0f ? 0.0 : static_cast<double>(beta) * y[r * out_dim + o];
            for (std::size_t i = 0; i < in_dim; ++i) {
                acc += static_cast<double>(x[r * in_dim + i]) * static_cast<double>(w.at(o, i, in_dim));
                ++multiply_adds;
            }
            y[r * out_dim + o] = static_cast<float>(acc);
        }
    }
    return 2 * multiply_adds;
}

void rmsnorm_naive(const float* x, std::size_t n_rows, std::size_t dim, const float* gains, float* y) {
    for (std::size_t r = 0; r < n_rows; ++r) {
        double sum_squares = 0.0;
        for (std::size_t i = 0; i < dim; ++i) sum_squares += static_cast<double>(x[r * dim + i]) * x[r * dim + i];
        const double inverse_rms = 1.0 / std::sqrt(sum_squares / static_cast<double>(dim) + rms_norm_eps);
        for (std::size_t i = 0; i < dim; ++i) y[r * dim + i] = static_cast<float>(x[r * dim + i] * inverse_rms * gains[i]);
    }
}

void apply_rope_naive(const ModelConfig& config, float* qkv, std::size_t n_rows, std::size_t seq_len,
                      std::size_t first_pos) {
    const std::size_t head_dim = config.head_dim();
    const std::size_t half = head_dim / 2;
    for (std::size_t r = 0; r < n_rows; ++r) {
        const double pos = static_cast<double>(first_pos + r % seq_len);
        // The query heads, then the key heads: the first (H + G)·dh values of the row.
        for (std::size_t h = 0; h < config.n_heads + config.n_kv_heads; ++h) {
            float* head = qkv + r * config.qkv_dim() + h * head_dim;
            for (std::size_t i = 0; i < half; ++i) {
                const double frequency = 1.0 / std::pow(config.rope_theta, static_cast<double>(2 * i) / static_cast<double>(head_dim));
                const double c = std::cos(pos * frequency), s = std::sin(pos * frequency);
                const double a = head[i], b = head[i + half];
                head[i] = static_cast<float>(a * c - b * s);
                head[i + half] = static_cast<float>(b * c + a * s);
            }
        }
    }
}

void silu_gate_naive(const float* gate_up, std::size_t n_rows, std::size_t width, float* out) {
    for (std::size_t r = 0; r < n_rows; ++r) {
        for (std::size_t i = 0; i < width; ++i) {
            const double gate = gate_up[r * 2 * width + i];
            const double up = gate_up[r * 2 * width + width + i];
            out[r * width + i] = static_cast<float>(gate / (1.0 + std::exp(-gate)) * up);
        }
    }
}

void mlp_naive(const MlpWeights& mlp, const float* u, std::size_t n_rows, std::size_t model_dim, float* y) {
    const std::size_t width = mlp.width();
    std::vector<float> gate_up(2 * width), hidden(width);  // one row's
    for (std::size_t r = 0; r < n_rows; ++r) {
        linear_naive(u + r * model_dim, 1, model_dim, mlp.gate_up.view(), 2 * width, 0.0f, gate_up.data());
        silu_gate_naive(gate_up.data(), 1, width, hidden.data());
        linear_naive(hidden.data(), 1, width, mlp.down.view(), model_dim, 1.0f, y + r * model_dim);
    }
}

std::size_t experts_naive(const ModelConfig& config, const LayerWeights& layer, const float* u, std::size_t n_rows,
                          float* y) {
    const std::size_t dim = config.model_dim;
    const std::size_t n_experts = config.moe.n_experts;
    std::vector<float> logits(n_experts), expert_out(dim);
    std::vector<bool> read(n_experts, false);
    for (std::size_t r = 0; r < n_rows; ++r) {
        const float* row = u + r * dim;
        linear_naive(row, 1, dim, layer.router.view(), n_experts, 0.0f, logits.data());
        // The k largest logits, the lower index first among equals: a stable sort of the indices.
        std::vector<std::size_t> order(n_experts);
        for (std::size_t e = 0; e < n_experts; ++e) order[e] = e;
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return logits[a] > logits[b]; });
        double sum = 0.0;
        for (std::size_t j = 0; j < config.moe.n_active; ++j) sum += std::exp(static_cast<double>(logits[order[j]]) - logits[order[0]]);
        for (std::size_t j = 0; j < config.moe.n_active; ++j) {
            const std::size_t e = order[j];
            read[e] = true;
            const double weight = std::exp(static_cast<double>(logits[e]) - logits[order[0]]) / sum;
            std::fill(expert_out.begin(), expert_out.end(), 0.0f);
            mlp_naive(layer.experts[e], row, 1, dim, expert_out.data());
            for (std::size_t d = 0; d < dim; ++d) y[r * dim + d] = static_cast<float>(y[r * dim + d] + weight * expert_out[d]);
        }
    }
    if (!layer.shared_experts.gate_up.empty()) mlp_naive(layer.shared_experts, u, n_rows, dim, y);
    return static_cast<std::size_t>(std::count(read.begin(), read.end(), true));
}

std::uint64_t attention_reference(const float* q, const float* keys, const float* values, std::size_t n_ctx,
                                  std::size_t group_size, std::size_t head_dim, float* out, double sink_logit) {
    std::uint64_t multiply_adds = 0;
    const double scale = 1.0 / std::sqrt(static_cast<double>(head_dim));
    std::vector<double> weights(n_ctx);
    for (std::size_t i = 0; i < group_size; ++i) {
        double max_score = sink_logit;
        for (std::size_t t = 0; t < n_ctx; ++t) {
            double dot = 0.0;
            for (std::size_t d = 0; d < head_dim; ++d) {
                dot += static_cast<double>(q[i * head_dim + d]) *
                       static_cast<double>(keys[t * head_dim + d]);
                ++multiply_adds;
            }
            weights[t] = dot * scale;
            max_score = std::max(max_score, weights[t]);
        }
        double sum = std::exp(sink_logit - max_score);  // 0 without a sink
        for (double& weight : weights) {
            weight = std::exp(weight - max_score);
            sum += weight;
        }
        for (std::size_t d = 0; d < head_dim; ++d) {
            double acc = 0.0;
            for (std::size_t t = 0; t < n_ctx; ++t) {
                acc += weights[t] * static_cast<double>(values[t * head_dim + d]);
                ++multiply_adds;
            }
            out[i * head_dim + d] = static_cast<float>(acc / sum);
        }
    }
    return multiply_adds;
}

FlopCount attend_decode_naive(const ModelConfig& config, const float* q, std::size_t q_stride,
                              const KvCache& cache, std::size_t layer, std::size_t n_ctx, float* out,
                              DecodeAttentionScratch&, const float* sinks) {
    const std::size_t head_dim = config.head_dim();
    // One KV head's cached vectors decoded one at a time by the scalar definition
    // (kv_convert.hpp), so the naive twin shares no conversion code with the kernel.
    std::vector<float> keys(n_ctx * head_dim);    // (n_seen, head_dim) floats, n_seen <= n_ctx
    std::vector<float> values(n_ctx * head_dim);  // (n_seen, head_dim) floats
    std::uint64_t multiply_adds = 0;
    for (std::size_t b = 0; b < config.n_batch; ++b) {
        // Row b's own context (a ragged batch's is shorter by its lag), and the window as a loop
        // bound: positions [first, row_ctx), each looked up by its position (the cache finds its
        // ring slot), so the twin shares no slot arithmetic with the kernel.
        const std::size_t row_ctx = n_ctx - config.seq_lag_of(b);
        const std::size_t first = first_seen(config, layer, row_ctx - 1);
        const std::size_t n_seen = row_ctx - first;
        for (std::size_t h = 0; h < config.n_heads; ++h) {
            const std::size_t g = h / config.group_size();
            if (h % config.group_size() == 0) {
                for (std::size_t t = first; t < row_ctx; ++t) {
                    cache.load_key(layer, b, g, t, keys.data() + (t - first) * head_dim);
                    cache.load_value(layer, b, g, t, values.data() + (t - first) * head_dim);
                }
            }
            multiply_adds += attention_reference(q + b * q_stride + h * head_dim, keys.data(), values.data(), n_seen,
                                                 1, head_dim, out + b * config.q_dim() + h * head_dim, sink_of(sinks, h));
        }
    }
    return {2 * multiply_adds, 2 * multiply_adds};
}

FlopCount attend_decode_tokens_naive(const ModelConfig& config, const float* q, std::size_t q_stride,
                                     const KvCache& cache, std::size_t layer, std::size_t n_ctx, float* out,
                                     DecodeAttentionScratch& scratch, const float* sinks) {
    return attend_each_token(&attend_decode_naive, config, q, q_stride, cache, layer, n_ctx, out, scratch, sinks);
}

FlopCount attend_causal_naive(const ModelConfig& config, std::size_t layer, const float* qkv, float* out,
                              CausalAttentionScratch&, const std::atomic<bool>*, const float* sinks) {
    const std::size_t seq_len = config.seq_len;
    const std::size_t head_dim = config.head_dim();
    const std::size_t qkv_dim = config.qkv_dim();
    std::vector<float> keys(seq_len * head_dim);    // (seq_len, head_dim) floats: one KV head's keys
    std::vector<float> values(seq_len * head_dim);  // (seq_len, head_dim) floats: its values
    std::uint64_t multiply_adds = 0;
    for (std::size_t b = 0; b < config.n_batch; ++b) {
        const float* sequence = qkv + b * seq_len * qkv_dim;
        for (std::size_t h = 0; h < config.n_heads; ++h) {
            const std::size_t g = h / config.group_size();
            for (std::size_t t = 0; t < seq_len; ++t) {
                const float* k = sequence + t * qkv_dim + config.q_dim() + g * head_dim;
                std::copy_n(k, head_dim, keys.data() + t * head_dim);
                std::copy_n(k + config.kv_dim(), head_dim, values.data() + t * head_dim);
            }
            for (std::size_t i = 0; i < seq_len; ++i) {
                // Causal mask and window: position i sees positions first..i.
                const std::size_t first = first_seen(config, layer, i);
                multiply_adds += attention_reference(sequence + i * qkv_dim + h * head_dim,
                                                     keys.data() + first * head_dim, values.data() + first * head_dim,
                                                     i + 1 - first, 1, head_dim,
                                                     out + (b * seq_len + i) * config.q_dim() + h * head_dim,
                                                     sink_of(sinks, h));
            }
        }
    }
    return {2 * multiply_adds, 2 * multiply_adds};
}

std::vector<float> forward_reference(const ModelConfig& config, const ModelWeights& weights,
                                     std::span<const float> inputs) {
    const std::size_t dim = config.model_dim;
    const std::size_t q_dim = config.q_dim();
    const std::size_t kv_dim = config.kv_dim();
    const std::size_t head_dim = config.head_dim();
    const std::size_t max_seq_len = config.seq_len;  // the longest sequence, a ragged batch's too
    const bool full = config.block == BlockKind::full;
    std::vector<float> x(inputs.begin(), inputs.end());
    std::vector<float> normed(max_seq_len * dim);
    std::vector<float> q(max_seq_len * q_dim), k(max_seq_len * kv_dim), v(max_seq_len * kv_dim);
    std::vector<float> heads_out(max_seq_len * q_dim), y(max_seq_len * dim);
    std::vector<float> k_head(max_seq_len * head_dim), v_head(max_seq_len * head_dim);
    // RoPE's naive twin turns the q and k heads of rows laid out as q | k | v.
    ModelConfig one_row = config;
    std::vector<float> qk_row(config.qkv_dim());

    for (std::size_t layer = 0; layer < config.n_layers; ++layer) {
        const LayerWeights& w = weights.layers[layer];
        const WeightView wq = w.wqkv.view();
        const WeightView wk = w.wqkv.rows_from(q_dim);
        const WeightView wv = w.wqkv.rows_from(q_dim + kv_dim);
        for (std::size_t b = 0; b < config.n_batch; ++b) {
            // Sequence by sequence, each at its own context (a ragged batch's rows are packed).
            const std::size_t seq_len = config.seq_len_of(b);
            float* xb = x.data() + config.first_token(b) * dim;
            const float* block_in = xb;
            if (full) {
                rmsnorm_naive(xb, seq_len, dim, w.attention_norm.data(), normed.data());
                block_in = normed.data();
            }
            linear_naive(block_in, seq_len, dim, wq, q_dim, 0.0f, q.data());
            linear_naive(block_in, seq_len, dim, wk, kv_dim, 0.0f, k.data());
            linear_naive(block_in, seq_len, dim, wv, kv_dim, 0.0f, v.data());
            if (full) {
                for (std::size_t t = 0; t < seq_len; ++t) {
                    std::copy_n(q.data() + t * q_dim, q_dim, qk_row.begin());
                    std::copy_n(k.data() + t * kv_dim, kv_dim, qk_row.begin() + static_cast<std::ptrdiff_t>(q_dim));
                    apply_rope_naive(one_row, qk_row.data(), 1, 1, t);
                    std::copy_n(qk_row.begin(), q_dim, q.data() + t * q_dim);
                    std::copy_n(qk_row.begin() + static_cast<std::ptrdiff_t>(q_dim), kv_dim, k.data() + t * kv_dim);
                }
            }
            for (std::size_t h = 0; h < config.n_heads; ++h) {
                const std::size_t g = h / config.group_size();
                for (std::size_t t = 0; t < seq_len; ++t) {
                    std::copy_n(k.data() + t * kv_dim + g * head_dim, head_dim, k_head.data() + t * head_dim);
                    std::copy_n(v.data() + t * kv_dim + g * head_dim, head_dim, v_head.data() + t * head_dim);
                }
                for (std::size_t i = 0; i < seq_len; ++i) {
                    // Causal mask and window: position i sees positions first..i.
                    const std::size_t first = first_seen(config, layer, i);
                    attention_reference(q.data() + i * q_dim + h * head_dim, k_head.data() + first * head_dim,
                                        v_head.data() + first * head_dim, i + 1 - first, 1, head_dim,
                                        heads_out.data() + i * q_dim + h * head_dim,
                                        sink_of(weights.layers[layer].sink_logits(), h));
                }
            }
            linear_naive(heads_out.data(), seq_len, q_dim, w.wo.view(), dim, 0.0f, y.data());
            for (std::size_t i = 0; i < seq_len * dim; ++i) xb[i] += y[i];
            if (!full) continue;
            rmsnorm_naive(xb, seq_len, dim, w.mlp_norm.data(), normed.data());
            std::fill_n(y.begin(), seq_len * dim, 0.0f);
            if (layer_has_experts(config, layer)) {
                experts_naive(config, w, normed.data(), seq_len, y.data());
            } else {
                mlp_naive(w.mlp, normed.data(), seq_len, dim, y.data());
            }
            for (std::size_t i = 0; i < seq_len * dim; ++i) xb[i] += y[i];
        }
    }
    return x;
}

double relative_error(std::span<const float> actual, std::span<const float> expected) {
    constexpr double disagree = std::numeric_limits<double>::infinity();
    if (actual.size() != expected.size() || expected.empty()) return disagree;
    double max_diff = 0.0;
    double max_ref = 0.0;
    for (std::size_t i = 0; i < expected.size(); ++i) {
        // std::max would silently drop a NaN, on either side: a broken kernel (or a broken
        // expected side) must fail the comparison instead.
        if (!std::isfinite(actual[i]) || !std::isfinite(expected[i])) return disagree;
        max_diff = std::max(max_diff, std::abs(static_cast<double>(actual[i]) - expected[i]));
        max_ref = std::max(max_ref, std::abs(static_cast<double>(expected[i])));
    }
    if (max_ref == 0.0) return max_diff == 0.0 ? 0.0 : std::numeric_limits<double>::infinity();
    return max_diff / max_ref;
}

}  // namespace kvbench
