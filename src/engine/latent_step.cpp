// latent_decode_step and latent_forward_full: latent attention's layer loop, cache writes and
// the up-projections, absorbed on the cached path and expanded on the uncached one.
#include "kvbench/engine/latent_step.hpp"

#include "kvbench/engine/checked_size.hpp"
#include "kvbench/engine/latent_projections.hpp"
#include "kvbench/engine/weights.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace kvbench {

ModelConfig decode_attention_view(const ModelConfig& config) {
    if (!config.is_latent()) return config;
    ModelConfig view = config;
    view.mla = {};
    view.n_kv_heads = 1;
    view.explicit_head_dim = LatentDims(config).latent_dim();
    view.attention_sinks = false;
    return view;
}

ModelConfig causal_attention_view(const ModelConfig& config) {
    const LatentDims dims(config);
    ModelConfig view = config;
    view.mla = {};
    view.n_kv_heads = config.n_heads;
    view.explicit_head_dim = std::max(dims.qk_dim(), dims.v_head_dim);
    view.attention_sinks = false;
    return view;
}

namespace {

std::size_t latent_forward_rows(const ModelConfig& config) { return checked_mul(config.n_batch, config.seq_len); }

std::size_t floats_of(std::initializer_list<const std::vector<float>*> buffers) {
    std::size_t total = 0;
    for (const std::vector<float>* buffer : buffers) total += buffer->size();
    return total;
}

// The kernels scale q·k by 1/sqrt of their head width; latent attention's logits are scaled by
// 1/sqrt(d_n + d_r), the expanded head's, so the query carries the difference.
float query_rescale(std::size_t kernel_head_dim, std::size_t qk_dim) {
    return static_cast<float>(std::sqrt(static_cast<double>(kernel_head_dim) / static_cast<double>(qk_dim)));
}

// q of n_rows rows, through q_lora_rank when the model has it. Returns the FLOPs executed.
std::uint64_t project_query(const StepKernels& kernels, const LatentDims& dims, const LatentWeights& w,
                            const float* x, std::size_t n_rows, std::size_t model_dim, float* q_down, float* q) {
    if (dims.q_lora_rank == 0) return kernels.linear(x, n_rows, model_dim, w.wq.data(), dims.q_width(), 0.0f, q);
    const std::uint64_t down = kernels.linear(x, n_rows, model_dim, w.wq_down.data(), dims.q_lora_rank, 0.0f, q_down);
    return down + kernels.linear(q_down, n_rows, dims.q_lora_rank, w.wq.data(), dims.q_width(), 0.0f, q);
}

// Copies layer `layer`'s head outputs of one row per sequence (rows first_row + b·row_stride of
// head_outputs, H·d_v floats each) into the trace, when there is one.
void record_attention(const ModelConfig& config, std::span<float> trace, std::size_t layer, const float* head_outputs,
                      std::size_t first_row, std::size_t row_stride) {
    if (trace.empty()) return;
    const std::size_t width = LatentDims(config).out_width();
    if (trace.size() != config.n_layers * config.n_batch * width) {
        throw std::invalid_argument("attention trace is not (n_layers, n_batch, H·d_v) floats");
    }
    for (std::size_t b = 0; b < config.n_batch; ++b) {
        std::copy_n(head_outputs + (first_row + b * row_stride) * width, width,
                    trace.begin() + static_cast<std::ptrdiff_t>((layer * config.n_batch + b) * width));
    }
}

}  // namespace

LatentDecodeBuffers::LatentDecodeBuffers(const ModelConfig& config) {
    if (!config.is_latent()) return;
    const LatentDims d(config);
    const std::size_t n = config.n_batch;
    q_down.resize(checked_mul(n, d.q_lora_rank));
    q.resize(checked_mul(n, d.q_width()));
    kv_down.resize(checked_mul(n, d.latent_dim()));
    q_latent.resize(checked_product({n, d.n_heads, d.latent_dim()}));
    latent_out.resize(q_latent.size());
    head_outputs.resize(checked_mul(n, d.out_width()));
}

std::size_t LatentDecodeBuffers::bytes() const {
    return floats_of({&q_down, &q, &kv_down, &q_latent, &latent_out, &head_outputs}) * sizeof(float);
}

std::size_t LatentDecodeBuffers::bytes_for(const ModelConfig& config) {
    if (!config.is_latent()) return 0;
    const LatentDims d(config);
    const std::size_t per_row = checked_add(
        checked_add(checked_add(d.q_lora_rank, d.q_width()), d.latent_dim()),
        checked_add(checked_mul(2 * d.n_heads, d.latent_dim()), d.out_width()));
    return checked_product({config.n_batch, per_row, sizeof(float)});
}

LatentForwardBuffers::LatentForwardBuffers(const ModelConfig& config) {
    if (!config.is_latent()) return;
    const LatentDims d(config);
    const std::size_t rows = latent_forward_rows(config);
    const std::size_t head_dim = causal_attention_view(config).head_dim();
    q_down.resize(checked_mul(rows, d.q_lora_rank));
    q.resize(checked_mul(rows, d.q_width()));
    kv_down.resize(checked_mul(rows, d.latent_dim()));
    latent.resize(checked_mul(rows, d.rank));
    k_nope.resize(checked_mul(rows, d.n_heads * d.nope_dim));
    values.resize(checked_mul(rows, d.out_width()));
    qkv.resize(checked_mul(rows, checked_product({std::size_t{3}, d.n_heads, head_dim})));
    padded_out.resize(checked_mul(rows, checked_mul(d.n_heads, head_dim)));
    head_outputs.resize(checked_mul(rows, d.out_width()));
}

std::size_t LatentForwardBuffers::bytes() const {
    return floats_of({&q_down, &q, &kv_down, &latent, &k_nope, &values, &qkv, &padded_out, &head_outputs}) *
           sizeof(float);
}

std::size_t LatentForwardBuffers::bytes_for(const ModelConfig& config) {
    if (!config.is_latent()) return 0;
    const LatentDims d(config);
    const std::size_t head_dim = causal_attention_view(config).head_dim();
    const std::size_t per_row = checked_add(
        checked_add(checked_add(d.q_lora_rank, d.q_width()), checked_add(d.latent_dim(), d.rank)),
        checked_add(checked_add(d.n_heads * d.nope_dim, 2 * d.out_width()), checked_product({std::size_t{4}, d.n_heads, head_dim})));
    return checked_product({latent_forward_rows(config), per_row, sizeof(float)});
}

FlopCount latent_decode_step(const ModelConfig& config, const ModelWeights& weights, KvCache& cache,
                             const float* x_in, float* x_out, LatentDecodeBuffers& buffers,
                             DecodeAttentionScratch& attention_scratch, const StepKernels& kernels,
                             std::span<float> attention_trace) {
    const std::size_t pos = cache.length();
    cache.require_writable(pos);
    const LatentDims d(config);
    const ModelConfig view = decode_attention_view(config);
    const std::size_t n_batch = config.n_batch;
    const std::size_t model_dim = config.model_dim;
    const float query_scale = query_rescale(view.head_dim(), d.qk_dim());

    std::copy_n(x_in, n_batch * model_dim, x_out);
    FlopCount count;
    for (std::size_t layer = 0; layer < config.n_layers; ++layer) {
        const LatentWeights& w = weights.layers[layer].latent;
        std::uint64_t products =
            project_query(kernels, d, w, x_out, n_batch, model_dim, buffers.q_down.data(), buffers.q.data());
        products +=
            kernels.linear(x_out, n_batch, model_dim, w.wkv_down.data(), d.latent_dim(), 0.0f, buffers.kv_down.data());
        for (std::size_t b = 0; b < n_batch; ++b) {
            cache.store(layer, b, 0, pos, buffers.kv_down.data() + b * d.latent_dim(), nullptr);
        }
        products += absorb_query(d, buffers.q.data(), n_batch, w.wuk.data(), query_scale, buffers.q_latent.data());
        const FlopCount attention =
            kernels.attend_decode(view, buffers.q_latent.data(), view.q_dim(), cache, layer, pos + 1,
                                  buffers.latent_out.data(), attention_scratch, nullptr);
        products += unabsorb_output(d, buffers.latent_out.data(), d.latent_dim(), n_batch, w.wuv.data(),
                                    buffers.head_outputs.data());
        record_attention(config, attention_trace, layer, buffers.head_outputs.data(), 0, 1);
        // beta = 1: the residual add rides on the output projection.
        products += kernels.linear(buffers.head_outputs.data(), n_batch, d.out_width(), w.wo.data(), model_dim, 1.0f,
                                   x_out);
        // Scores over r + d_r, values over r (docs/counting.md, "Latent attention"); the kernel
        // also carries each position's d_r RoPE values through p·V, which executed counts.
        const std::uint64_t n_attended = config.attended_positions(layer, pos + 1);
        const std::uint64_t attention_useful = 2ull * n_batch * d.n_heads * n_attended * (2 * d.rank + d.rope_dim);
        count += FlopCount{products + attention_useful, products + attention.executed};
    }
    cache.extend_to(pos + 1);
    return count;
}

namespace {

// Row by row, what attend_causal reads: q (rescaled), K = [c·W_uk | k_rope] and V = c·W_uv of
// every head, each padded with zeros to the view's head_dim.
void expand_heads(const LatentDims& d, std::size_t head_dim, std::size_t n_rows, float query_scale,
                  LatentForwardBuffers& buffers) {
    const std::size_t h_count = d.n_heads;
    const std::size_t row_width = 3 * h_count * head_dim;
    for (std::size_t row = 0; row < n_rows; ++row) {
        float* q_row = buffers.qkv.data() + row * row_width;
        float* k_row = q_row + h_count * head_dim;
        float* v_row = k_row + h_count * head_dim;
        std::fill(q_row, q_row + row_width, 0.0f);
        const float* q_src = buffers.q.data() + row * d.q_width();
        const float* rope = buffers.kv_down.data() + row * d.latent_dim() + d.rank;
        const float* nope = buffers.k_nope.data() + row * h_count * d.nope_dim;
        const float* value = buffers.values.data() + row * d.out_width();
        for (std::size_t h = 0; h < h_count; ++h) {
            for (std::size_t i = 0; i < d.qk_dim(); ++i) q_row[h * head_dim + i] = query_scale * q_src[h * d.qk_dim() + i];
            std::copy_n(nope + h * d.nope_dim, d.nope_dim, k_row + h * head_dim);
            std::copy_n(rope, d.rope_dim, k_row + h * head_dim + d.nope_dim);
            std::copy_n(value + h * d.v_head_dim, d.v_head_dim, v_row + h * head_dim);
        }
    }
}

}  // namespace

FlopCount latent_forward_full(const ModelConfig& config, const ModelWeights& weights, const float* x_in,
                              float* x_out, LatentForwardBuffers& buffers, CausalAttentionScratch& attention_scratch,
                              KvCache* prefill, const std::atomic<bool>* stop, const StepKernels& kernels,
                              std::span<float> attention_trace) {
    auto stopped = [stop] { return stop != nullptr && stop->load(std::memory_order_relaxed); };
    const LatentDims d(config);
    const ModelConfig view = causal_attention_view(config);
    const std::size_t head_dim = view.head_dim();
    const std::size_t seq_len = config.seq_len;
    const std::size_t n_rows = config.n_batch * seq_len;
    const std::size_t model_dim = config.model_dim;
    const float query_scale = query_rescale(head_dim, d.qk_dim());
    if (prefill != nullptr) {
        if (prefill->max_seq_len() < seq_len) throw std::out_of_range("prefill cache is shorter than the sequence");
        prefill->roll_back(0);
    }

    std::copy_n(x_in, n_rows * model_dim, x_out);
    FlopCount count;
    for (std::size_t layer = 0; layer < config.n_layers; ++layer) {
        if (stopped()) return count;
        const LatentWeights& w = weights.layers[layer].latent;
        std::uint64_t products =
            project_query(kernels, d, w, x_out, n_rows, model_dim, buffers.q_down.data(), buffers.q.data());
        products +=
            kernels.linear(x_out, n_rows, model_dim, w.wkv_down.data(), d.latent_dim(), 0.0f, buffers.kv_down.data());
        for (std::size_t row = 0; row < n_rows; ++row) {
            const float* cached = buffers.kv_down.data() + row * d.latent_dim();
            if (prefill != nullptr) prefill->store(layer, row / seq_len, 0, row % seq_len, cached, nullptr);
            std::copy_n(cached, d.rank, buffers.latent.data() + row * d.rank);
        }
        products += kernels.linear(buffers.latent.data(), n_rows, d.rank, w.wuk.data(), d.n_heads * d.nope_dim, 0.0f,
                                   buffers.k_nope.data());
        products +=
            kernels.linear(buffers.latent.data(), n_rows, d.rank, w.wuv.data(), d.out_width(), 0.0f, buffers.values.data());
        expand_heads(d, head_dim, n_rows, query_scale, buffers);
        const FlopCount attention = kernels.attend_causal(view, layer, buffers.qkv.data(), buffers.padded_out.data(),
                                                          attention_scratch, stop, nullptr);
        for (std::size_t row = 0; row < n_rows; ++row) {
            for (std::size_t h = 0; h < d.n_heads; ++h) {
                std::copy_n(buffers.padded_out.data() + (row * d.n_heads + h) * head_dim, d.v_head_dim,
                            buffers.head_outputs.data() + row * d.out_width() + h * d.v_head_dim);
            }
        }
        record_attention(config, attention_trace, layer, buffers.head_outputs.data(), seq_len - 1, seq_len);
        products += kernels.linear(buffers.head_outputs.data(), n_rows, d.out_width(), w.wo.data(), model_dim, 1.0f,
                                   x_out);
        // Scores over d_n + d_r and values over d_v for every (query, key) pair the causal mask
        // and the layer's window leave (docs/counting.md); the kernel's zero padding is executed only.
        std::uint64_t pairs = 0;
        for (std::size_t i = 1; i <= seq_len; ++i) pairs += config.attended_positions(layer, i);
        const std::uint64_t attention_useful =
            2ull * config.n_batch * d.n_heads * (d.qk_dim() + d.v_head_dim) * pairs;
        count += FlopCount{products + attention_useful, products + attention.executed};
    }
    if (prefill != nullptr && !stopped()) prefill->extend_to(seq_len);
    return count;
}

}  // namespace kvbench
