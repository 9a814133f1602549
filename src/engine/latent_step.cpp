// latent_attention_step and latent_attention_forward: one latent attention layer (MLA) of each
// path, its cache writes and up-projections, absorbed on the cached path and expanded on the
// uncached one.
#include "kvbench/engine/latent_step.hpp"

#include "kvbench/engine/checked_size.hpp"
#include "kvbench/engine/latent_projections.hpp"

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

bool is_full(const ModelConfig& config) { return config.block == BlockKind::full; }

// Floats per row of the packed RoPE buffer: H query heads of d_r, the shared key, and the d_r of
// the value head apply_rope's rows carry (rope_view).
std::size_t rope_row_width(const ModelConfig& config) {
    return is_full(config) ? checked_mul(config.n_heads + 2, config.mla.rope_dim) : 0;
}

// Floats per row of the gathered head rows: absorb_query's d_n + r, unabsorb_output's r + d_v.
std::size_t head_row_width(const LatentDims& d) { return std::max(d.nope_dim + d.rank, d.rank + d.v_head_dim); }

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

// q of n_rows rows, through q_lora_rank when the model has it (normalised in a full layer).
// Returns the FLOPs executed.
std::uint64_t project_query(const StepKernels& kernels, const LatentDims& dims, const LatentWeights& w,
                            const float* x, std::size_t n_rows, std::size_t model_dim, float* q_down, float* q) {
    if (dims.q_lora_rank == 0) return kernels.linear(x, n_rows, model_dim, w.wq.view(), dims.q_width(), 0.0f, q);
    const std::uint64_t down = kernels.linear(x, n_rows, model_dim, w.wq_down.view(), dims.q_lora_rank, 0.0f, q_down);
    if (!w.q_norm.empty()) kernels.rmsnorm(q_down, n_rows, dims.q_lora_rank, w.q_norm.data(), q_down);
    return down + kernels.linear(q_down, n_rows, dims.q_lora_rank, w.wq.view(), dims.q_width(), 0.0f, q);
}

// The rows apply_rope turns for a latent layer, in its multi-head layout: H query heads of d_r
// (each head's q_rope), one key head (the shared k_rope), and one value head it leaves alone.
ModelConfig rope_view(const ModelConfig& config) {
    ModelConfig view;
    view.model_dim = config.model_dim;
    view.n_heads = config.n_heads;
    view.n_kv_heads = 1;
    view.explicit_head_dim = config.mla.rope_dim;
    view.rope_theta = config.rope_theta;
    return view;
}

// A full layer's work on c | k_rope and q before the cache sees them (docs/model.md, "Latent
// attention"): c normalised by its gains, and every head's q_rope and the shared k_rope turned
// by RoPE, row r at position first_pos + r % seq_len, on a packed copy in `packed` so that the
// path's own rope kernel turns them. q: (n_rows, H·(d_n + d_r)); kv_down: (n_rows, r + d_r).
void prepare_full_layer(const StepKernels& kernels, const ModelConfig& config, const LatentWeights& w, float* q,
                        float* kv_down, std::size_t n_rows, std::size_t seq_len, std::size_t first_pos, float* packed) {
    const LatentDims d(config);
    for (std::size_t r = 0; r < n_rows; ++r) {
        float* c = kv_down + r * d.latent_dim();
        kernels.rmsnorm(c, 1, d.rank, w.kv_norm.data(), c);
    }
    const ModelConfig view = rope_view(config);
    const std::size_t width = view.qkv_dim();
    auto copy_rope = [&](bool to_packed) {
        for (std::size_t r = 0; r < n_rows; ++r) {
            float* row = packed + r * width;
            for (std::size_t h = 0; h <= d.n_heads; ++h) {
                float* rope = h < d.n_heads ? q + r * d.q_width() + h * d.qk_dim() + d.nope_dim
                                            : kv_down + r * d.latent_dim() + d.rank;
                if (to_packed) {
                    std::copy_n(rope, d.rope_dim, row + h * d.rope_dim);
                } else {
                    std::copy_n(row + h * d.rope_dim, d.rope_dim, rope);
                }
            }
        }
    };
    copy_rope(true);
    kernels.rope(view, packed, n_rows, seq_len, first_pos);
    copy_rope(false);
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
    const std::size_t n = checked_mul(config.n_query_tokens, config.n_batch);  // the step's rows, token-major
    q_down.resize(checked_mul(n, d.q_lora_rank));
    q.resize(checked_mul(n, d.q_width()));
    kv_down.resize(checked_mul(n, d.latent_dim()));
    q_latent.resize(checked_product({n, d.n_heads, d.latent_dim()}));
    latent_out.resize(q_latent.size());
    head_outputs.resize(checked_mul(n, d.out_width()));
    head_rows.resize(checked_mul(n, head_row_width(d)));
    rope.resize(checked_mul(n, rope_row_width(config)));
}

std::size_t LatentDecodeBuffers::bytes() const {
    return floats_of({&q_down, &q, &kv_down, &q_latent, &latent_out, &head_outputs, &head_rows, &rope}) * sizeof(float);
}

std::size_t LatentDecodeBuffers::bytes_for(const ModelConfig& config) {
    if (!config.is_latent()) return 0;
    const LatentDims d(config);
    const std::size_t per_row = checked_add(
        checked_add(checked_add(d.q_lora_rank, d.q_width()), d.latent_dim()),
        checked_add(checked_add(checked_mul(2 * d.n_heads, d.latent_dim()), d.out_width()),
                    checked_add(head_row_width(d), rope_row_width(config))));
    return checked_product({config.n_query_tokens, config.n_batch, per_row, sizeof(float)});
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
    if (config.weight_dtype != WeightDtype::f32) converted.resize(checked_mul(d.rank, d.nope_dim));
    rope.resize(checked_mul(rows, rope_row_width(config)));
}

std::size_t LatentForwardBuffers::bytes() const {
    return floats_of({&q_down, &q, &kv_down, &latent, &k_nope, &values, &qkv, &padded_out, &head_outputs, &converted,
                      &rope}) *
           sizeof(float);
}

std::size_t LatentForwardBuffers::bytes_for(const ModelConfig& config) {
    if (!config.is_latent()) return 0;
    const LatentDims d(config);
    const std::size_t head_dim = causal_attention_view(config).head_dim();
    const std::size_t per_row = checked_add(
        checked_add(checked_add(d.q_lora_rank, d.q_width()), checked_add(d.latent_dim(), d.rank)),
        checked_add(checked_add(d.n_heads * d.nope_dim, 2 * d.out_width()),
                    checked_add(checked_product({std::size_t{4}, d.n_heads, head_dim}), rope_row_width(config))));
    const std::size_t converted = config.weight_dtype != WeightDtype::f32 ? checked_mul(d.rank, d.nope_dim) : 0;
    return checked_mul(checked_add(checked_mul(latent_forward_rows(config), per_row), converted), sizeof(float));
}

FlopCount latent_attention_step(const ModelConfig& config, std::size_t layer, const LatentWeights& w, KvCache& cache,
                                const float* block_in, float* x_out, LatentDecodeBuffers& buffers,
                                DecodeAttentionScratch& attention_scratch, const StepKernels& kernels,
                                std::span<float> attention_trace) {
    const std::size_t pos = cache.length();
    const LatentDims d(config);
    const ModelConfig view = decode_attention_view(config);
    const std::size_t n_batch = config.n_batch;
    // The step's Q tokens of every sequence, token-major: token i of sequence b is row i·B + b,
    // at position pos + i (docs/model.md, "Multi-token queries").
    const std::size_t n_tokens = config.n_query_tokens;
    const std::size_t n_rows = n_tokens * n_batch;
    const std::size_t model_dim = config.model_dim;
    const float query_scale = query_rescale(view.head_dim(), d.qk_dim());

    std::uint64_t products =
        project_query(kernels, d, w, block_in, n_rows, model_dim, buffers.q_down.data(), buffers.q.data());
    products +=
        kernels.linear(block_in, n_rows, model_dim, w.wkv_down.view(), d.latent_dim(), 0.0f, buffers.kv_down.data());
    for (std::size_t i = 0; i < n_tokens; ++i) {
        float* token_q = buffers.q.data() + i * n_batch * d.q_width();
        float* token_kv = buffers.kv_down.data() + i * n_batch * d.latent_dim();
        if (is_full(config)) prepare_full_layer(kernels, config, w, token_q, token_kv, n_batch, 1, pos + i, buffers.rope.data());
        // Every token's c | k_rope is stored before any attends: token i sees the step's earlier ones.
        for (std::size_t b = 0; b < n_batch; ++b) {
            cache.store(layer, b, 0, pos + i, token_kv + b * d.latent_dim(), nullptr);
        }
    }
    products += absorb_query(d, buffers.q.data(), n_rows, w.wuk.view(), query_scale, buffers.q_latent.data(),
                             buffers.head_rows.data());
    // The Q tokens' absorbed queries against the latent cache in one pass, which reads it once
    // for all of them, or one attend_decode per token where the table has no such kernel.
    const FlopCount attention =
        kernels.attend_decode_tokens != nullptr
            ? kernels.attend_decode_tokens(view, buffers.q_latent.data(), view.q_dim(), cache, layer, pos + n_tokens,
                                           buffers.latent_out.data(), attention_scratch, nullptr)
            : attend_each_token(kernels.attend_decode, view, buffers.q_latent.data(), view.q_dim(), cache, layer,
                                pos + n_tokens, buffers.latent_out.data(), attention_scratch, nullptr);
    products += unabsorb_output(d, buffers.latent_out.data(), d.latent_dim(), n_rows, w.wuv.view(),
                                buffers.head_outputs.data(), buffers.head_rows.data());
    record_attention(config, attention_trace, layer, buffers.head_outputs.data(), (n_tokens - 1) * n_batch, 1);
    // beta = 1: the residual add rides on the output projection.
    products += kernels.linear(buffers.head_outputs.data(), n_rows, d.out_width(), w.wo.view(), model_dim, 1.0f, x_out);
    // Scores over r + d_r, values over r (docs/counting.md, "Latent attention (MLA)"), token i over
    // the positions up to its own; the kernel also carries each position's d_r RoPE values
    // through p·V, which executed counts.
    std::uint64_t n_attended = 0;
    for (std::size_t i = 0; i < n_tokens; ++i) n_attended += config.attended_positions(layer, pos + i + 1);
    const std::uint64_t attention_useful = 2ull * n_batch * d.n_heads * n_attended * (2 * d.rank + d.rope_dim);
    return FlopCount{products + attention_useful, products + attention.executed};
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

FlopCount latent_attention_forward(const ModelConfig& config, std::size_t layer, const LatentWeights& w,
                                   const float* block_in, float* x_out, LatentForwardBuffers& buffers,
                                   CausalAttentionScratch& attention_scratch, KvCache* prefill,
                                   const std::atomic<bool>* stop, const StepKernels& kernels,
                                   std::span<float> attention_trace) {
    const LatentDims d(config);
    const ModelConfig view = causal_attention_view(config);
    const std::size_t head_dim = view.head_dim();
    const std::size_t seq_len = config.seq_len;
    const std::size_t n_rows = config.n_batch * seq_len;
    const std::size_t model_dim = config.model_dim;
    const float query_scale = query_rescale(head_dim, d.qk_dim());

    std::uint64_t products =
        project_query(kernels, d, w, block_in, n_rows, model_dim, buffers.q_down.data(), buffers.q.data());
    products +=
        kernels.linear(block_in, n_rows, model_dim, w.wkv_down.view(), d.latent_dim(), 0.0f, buffers.kv_down.data());
    if (is_full(config)) {
        prepare_full_layer(kernels, config, w, buffers.q.data(), buffers.kv_down.data(), n_rows, seq_len, 0,
                           buffers.rope.data());
    }
    for (std::size_t row = 0; row < n_rows; ++row) {
        const float* cached = buffers.kv_down.data() + row * d.latent_dim();
        if (prefill != nullptr) prefill->store(layer, row / seq_len, 0, row % seq_len, cached, nullptr);
        std::copy_n(cached, d.rank, buffers.latent.data() + row * d.rank);
    }
    products += expand_keys(d, buffers.latent.data(), n_rows, w.wuk.view(), buffers.k_nope.data(),
                            buffers.converted.data());
    products += kernels.linear(buffers.latent.data(), n_rows, d.rank, w.wuv.view(), d.out_width(), 0.0f,
                               buffers.values.data());
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
    products += kernels.linear(buffers.head_outputs.data(), n_rows, d.out_width(), w.wo.view(), model_dim, 1.0f, x_out);
    // Scores over d_n + d_r and values over d_v for every (query, key) pair the causal mask
    // and the layer's window leave (docs/counting.md); the kernel's zero padding is executed only.
    std::uint64_t pairs = 0;
    for (std::size_t i = 1; i <= seq_len; ++i) pairs += config.attended_positions(layer, i);
    const std::uint64_t attention_useful = 2ull * config.n_batch * d.n_heads * (d.qk_dim() + d.v_head_dim) * pairs;
    return FlopCount{products + attention_useful, products + attention.executed};
}

}  // namespace kvbench
