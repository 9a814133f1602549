// check_latent_kernels: latent attention's kernels against their naive twins.
#include "kvbench/engine/latent_check.hpp"

#include "kvbench/engine/latent_projections.hpp"
#include "kvbench/engine/layer_ops.hpp"
#include "kvbench/engine/latent_step.hpp"
#include "kvbench/engine/reference.hpp"
#include "check_sample.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

namespace kvbench {

namespace {

// kernels.linear against linear_naive on x (n_rows, in_dim) and W's first out_dim rows, from zero.
// The fast result is left in `fast`.
KernelCheck check_projection(const StepKernels& kernels, const char* label, const float* x, std::size_t n_rows,
                             std::size_t in_dim, WeightView w, std::size_t out_dim, std::vector<float>& fast) {
    fast.assign(n_rows * out_dim, 0.0f);
    std::vector<float> naive(fast.size());  // (n_rows, out_dim) floats
    kernels.linear(x, n_rows, in_dim, w, out_dim, 0.0f, fast.data());
    linear_naive(x, n_rows, in_dim, w, out_dim, 0.0f, naive.data());
    return {fmt::format("linear ({} row{}, {})", n_rows, n_rows == 1 ? "" : "s", label), relative_error(fast, naive)};
}

// The first `width` of every `stride` floats of `rows` rows: each head's part that the step uses.
std::vector<float> head_prefixes(const std::vector<float>& rows, std::size_t stride, std::size_t width) {
    std::vector<float> out;
    for (std::size_t first = 0; first < rows.size(); first += stride) {
        out.insert(out.end(), rows.begin() + static_cast<std::ptrdiff_t>(first),
                   rows.begin() + static_cast<std::ptrdiff_t>(first + width));
    }
    return out;
}

// A full layer's RoPE on every head's q_rope and the shared k_rope at the step's position: the
// kernels' rope and apply_rope_naive on the packed rows a latent layer turns, from q and kv_down.
KernelCheck check_latent_rope(const ModelConfig& config, const StepKernels& kernels, const std::vector<float>& q,
                              const std::vector<float>& kv_down) {
    const LatentDims d(config);
    ModelConfig view;  // what latent_step.cpp's rope_view makes: H query heads and one key head of d_r
    view.model_dim = config.model_dim;
    view.n_heads = d.n_heads;
    view.n_kv_heads = 1;
    view.explicit_head_dim = d.rope_dim;
    view.rope_theta = config.rope_theta;
    const std::size_t width = view.qkv_dim();
    std::vector<float> fast(config.n_batch * width, 0.0f);  // (B, (H + 2)·d_r) floats
    for (std::size_t b = 0; b < config.n_batch; ++b) {
        for (std::size_t h = 0; h < d.n_heads; ++h) {
            std::copy_n(q.begin() + static_cast<std::ptrdiff_t>(b * d.q_width() + h * d.qk_dim() + d.nope_dim),
                        d.rope_dim, fast.begin() + static_cast<std::ptrdiff_t>(b * width + h * d.rope_dim));
        }
        std::copy_n(kv_down.begin() + static_cast<std::ptrdiff_t>(b * d.latent_dim() + d.rank), d.rope_dim,
                    fast.begin() + static_cast<std::ptrdiff_t>(b * width + d.n_heads * d.rope_dim));
    }
    std::vector<float> naive = fast;
    kernels.rope(view, fast.data(), config.n_batch, 1, config.seq_len - 1);
    apply_rope_naive(view, naive.data(), config.n_batch, 1, config.seq_len - 1);
    return {"rope (latent)", relative_error(fast, naive)};
}

// The step's Q tokens of layer 0 over the latent cache: kernels.attend_decode_tokens (one
// attend_decode per token when the table has none) against attend_decode_tokens_naive on the
// MQA view, after each token's c | k_rope is stored at position N - Q + i. The queries and
// latents are the step's own inputs through the naive projections and absorption, without a full
// layer's norms and RoPE: any values of that shape exercise the kernel.
KernelCheck check_latent_query_tokens(const ModelConfig& config, const LatentWeights& w, const StepKernels& kernels,
                                      const KernelCheckInputs& inputs) {
    const LatentDims d(config);
    const ModelConfig view = decode_attention_view(config);
    const std::size_t n_tokens = config.n_query_tokens;
    const std::size_t n_batch = config.n_batch;
    const std::size_t n_rows = n_tokens * n_batch;  // token-major, as the step's
    std::vector<float> q(n_rows * d.q_width());      // (Q·B, H·(d_n + d_r)) floats
    if (d.q_lora_rank != 0) {
        std::vector<float> q_down(n_rows * d.q_lora_rank);  // (Q·B, q_lora_rank) floats
        linear_naive(inputs.step_in, n_rows, config.model_dim, w.wq_down.view(), d.q_lora_rank, 0.0f, q_down.data());
        linear_naive(q_down.data(), n_rows, d.q_lora_rank, w.wq.view(), d.q_width(), 0.0f, q.data());
    } else {
        linear_naive(inputs.step_in, n_rows, config.model_dim, w.wq.view(), d.q_width(), 0.0f, q.data());
    }
    std::vector<float> kv_down(n_rows * d.latent_dim());  // (Q·B, r + d_r) floats
    linear_naive(inputs.step_in, n_rows, config.model_dim, w.wkv_down.view(), d.latent_dim(), 0.0f, kv_down.data());
    for (std::size_t i = 0; i < n_tokens; ++i) {
        for (std::size_t b = 0; b < n_batch; ++b) {
            inputs.cache->store(0, b, 0, config.seq_len - n_tokens + i,
                                kv_down.data() + (i * n_batch + b) * d.latent_dim(), nullptr);
        }
    }
    std::vector<float> q_latent(n_rows * view.q_dim());  // (Q·B, H·(r + d_r)) floats
    absorb_query_naive(d, q.data(), n_rows, w.wuk.view(), 1.0f, q_latent.data());
    DecodeAttentionScratch scratch(view, config.seq_len, inputs.n_threads);
    std::vector<float> fast(q_latent.size()), naive(q_latent.size());
    if (kernels.attend_decode_tokens != nullptr) {
        kernels.attend_decode_tokens(view, q_latent.data(), view.q_dim(), *inputs.cache, 0, config.seq_len, fast.data(),
                                     scratch, nullptr);
    } else {
        attend_each_token(kernels.attend_decode, view, q_latent.data(), view.q_dim(), *inputs.cache, 0, config.seq_len,
                          fast.data(), scratch, nullptr);
    }
    attend_decode_tokens_naive(view, q_latent.data(), view.q_dim(), *inputs.cache, 0, config.seq_len, naive.data(),
                               scratch, nullptr);
    return {fmt::format("attend_decode_tokens (latent, {} tokens)", n_tokens),
            relative_error(head_prefixes(fast, d.latent_dim(), d.rank), head_prefixes(naive, d.latent_dim(), d.rank))};
}

}  // namespace

std::vector<KernelCheck> check_latent_kernels(const ModelConfig& config, const ModelWeights& weights,
                                              const KernelCheckInputs& inputs, const StepKernels& kernels) {
    std::vector<KernelCheck> checks;
    const LatentWeights& w = weights.layers.front().latent;
    const LatentDims d(config);
    const std::size_t n_batch = config.n_batch;
    const std::size_t model_dim = config.model_dim;

    std::vector<float> q, kv_down, q_down;  // the step's q (B, H·(d_n + d_r)), c | k_rope (B, r + d_r)
    const bool full = config.block == BlockKind::full;
    // A full layer's input is the stream normalised (its naive norm: the fast one is checked here).
    std::vector<float> block_in(inputs.step_in, inputs.step_in + n_batch * model_dim);  // (B, D) floats
    if (full) {
        std::vector<float> fast(block_in.size());
        kernels.rmsnorm(inputs.step_in, n_batch, model_dim, weights.layers.front().attention_norm.data(), fast.data());
        rmsnorm_naive(inputs.step_in, n_batch, model_dim, weights.layers.front().attention_norm.data(), block_in.data());
        checks.push_back({"rmsnorm", relative_error(fast, block_in)});
    }
    if (d.q_lora_rank != 0) {
        checks.push_back(check_projection(kernels, "q down", block_in.data(), n_batch, model_dim, w.wq_down.view(),
                                          d.q_lora_rank, q_down));
        if (full) rmsnorm_naive(q_down.data(), n_batch, d.q_lora_rank, w.q_norm.data(), q_down.data());
        checks.push_back(
            check_projection(kernels, "q up", q_down.data(), n_batch, d.q_lora_rank, w.wq.view(), d.q_width(), q));
    } else {
        checks.push_back(
            check_projection(kernels, "q", block_in.data(), n_batch, model_dim, w.wq.view(), d.q_width(), q));
    }
    checks.push_back(check_projection(kernels, "KV down", block_in.data(), n_batch, model_dim, w.wkv_down.view(),
                                      d.latent_dim(), kv_down));
    if (full) checks.push_back(check_latent_rope(config, kernels, q, kv_down));

    const ModelConfig view = decode_attention_view(config);
    std::vector<float> q_latent(n_batch * view.q_dim()), naive_latent(q_latent.size());  // (B, H·(r + d_r))
    std::vector<float> head_rows(n_batch * (d.nope_dim + d.rank + d.v_head_dim));  // absorb's and un-absorb's scratch
    absorb_query(d, q.data(), n_batch, w.wuk.view(), 1.0f, q_latent.data(), head_rows.data());
    absorb_query_naive(d, q.data(), n_batch, w.wuk.view(), 1.0f, naive_latent.data());
    checks.push_back({"absorb_query", relative_error(q_latent, naive_latent)});

    // (B, H·(r + d_r)) floats: what unabsorb_output reads; the absorbed queries without a cache
    // (any values of that shape exercise it).
    std::vector<float> latent_out = q_latent;
    if (inputs.cache != nullptr) {
        const std::size_t pos = config.seq_len - 1;
        for (std::size_t b = 0; b < n_batch; ++b) {
            inputs.cache->store(0, b, 0, pos, kv_down.data() + b * d.latent_dim(), nullptr);
        }
        DecodeAttentionScratch scratch(view, config.seq_len, inputs.n_threads);
        std::vector<float> naive(latent_out.size());
        kernels.attend_decode(view, q_latent.data(), view.q_dim(), *inputs.cache, 0, config.seq_len,
                              latent_out.data(), scratch, nullptr);
        attend_decode_naive(view, q_latent.data(), view.q_dim(), *inputs.cache, 0, config.seq_len, naive.data(),
                            scratch, nullptr);
        // The naive twin reads a latent value as its r elements; the fast kernel also carries the
        // RoPE key's d_r, which the step drops.
        checks.push_back({"attend_decode (latent)", relative_error(head_prefixes(latent_out, d.latent_dim(), d.rank),
                                                                    head_prefixes(naive, d.latent_dim(), d.rank))});
        if (config.n_query_tokens > 1) checks.push_back(check_latent_query_tokens(config, w, kernels, inputs));
    }
    std::vector<float> head_outputs(n_batch * d.out_width()), naive_outputs(head_outputs.size());  // (B, H·d_v)
    unabsorb_output(d, latent_out.data(), d.latent_dim(), n_batch, w.wuv.view(), head_outputs.data(), head_rows.data());
    unabsorb_output_naive(d, latent_out.data(), d.latent_dim(), n_batch, w.wuv.view(), naive_outputs.data());
    checks.push_back({"unabsorb_output", relative_error(head_outputs, naive_outputs)});
    std::vector<float> unused;
    checks.push_back(check_projection(kernels, "output projection", head_outputs.data(), n_batch, d.out_width(),
                                      w.wo.view(), model_dim, unused));
    if (full) check_feed_forward(config, weights.layers.front(), kernels, block_in.data(), checks);

    if (inputs.prompt != nullptr) {
        const std::size_t n = config.seq_len;
        std::optional<ForwardScratch> own_scratch;
        if (inputs.forward_scratch == nullptr) own_scratch.emplace(config, inputs.n_threads);
        ForwardScratch& scratch = inputs.forward_scratch != nullptr ? *inputs.forward_scratch : *own_scratch;
        // Layer 0 of the uncached forward leaves its latents, expanded heads and attention output
        // in the buffers.
        ModelConfig first_layer = config;
        first_layer.n_layers = 1;
        std::vector<float> out(n_batch * n * model_dim);  // (B·N, D) floats
        forward_full(first_layer, weights, inputs.prompt, out.data(), scratch, nullptr, nullptr, {&kernels, {}});
        const std::size_t prefix_rows = std::min(n, checked_prefix_rows);  // of the first sequence
        const float* latent = scratch.latent.latent.data();
        std::vector<float> k_nope(prefix_rows * d.n_heads * d.nope_dim), naive_k_nope(k_nope.size());
        std::vector<float> converted(d.rank * d.nope_dim);  // (r, d_n) floats
        expand_keys(d, latent, prefix_rows, w.wuk.view(), k_nope.data(), converted.data());
        expand_keys_naive(d, latent, prefix_rows, w.wuk.view(), naive_k_nope.data());
        checks.push_back({fmt::format("expand_keys ({} rows)", prefix_rows), relative_error(k_nope, naive_k_nope)});
        checks.push_back(check_projection(kernels, "c·W_uv", latent, prefix_rows, d.rank, w.wuv.view(),
                                          std::min(d.out_width(), checked_outputs), unused));
        checks.push_back(check_causal_attention(causal_attention_view(first_layer), scratch.latent.qkv.data(),
                                                scratch.latent.padded_out.data(), nullptr));
    }
    return checks;
}

}  // namespace kvbench
