// check_latent_kernels: latent attention's kernels against their naive twins.
#include "kvbench/engine/latent_check.hpp"

#include "kvbench/engine/latent_projections.hpp"
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
                             std::size_t in_dim, const float* w, std::size_t out_dim, std::vector<float>& fast) {
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

}  // namespace

std::vector<KernelCheck> check_latent_kernels(const ModelConfig& config, const ModelWeights& weights,
                                              const KernelCheckInputs& inputs, const StepKernels& kernels) {
    std::vector<KernelCheck> checks;
    const LatentWeights& w = weights.layers.front().latent;
    const LatentDims d(config);
    const std::size_t n_batch = config.n_batch;
    const std::size_t model_dim = config.model_dim;

    std::vector<float> q, kv_down, q_down;  // the step's q (B, H·(d_n + d_r)), c | k_rope (B, r + d_r)
    if (d.q_lora_rank != 0) {
        checks.push_back(check_projection(kernels, "q down", inputs.step_in, n_batch, model_dim, w.wq_down.data(),
                                          d.q_lora_rank, q_down));
        checks.push_back(
            check_projection(kernels, "q up", q_down.data(), n_batch, d.q_lora_rank, w.wq.data(), d.q_width(), q));
    } else {
        checks.push_back(
            check_projection(kernels, "q", inputs.step_in, n_batch, model_dim, w.wq.data(), d.q_width(), q));
    }
    checks.push_back(check_projection(kernels, "KV down", inputs.step_in, n_batch, model_dim, w.wkv_down.data(),
                                      d.latent_dim(), kv_down));

    const ModelConfig view = decode_attention_view(config);
    std::vector<float> q_latent(n_batch * view.q_dim()), naive_latent(q_latent.size());  // (B, H·(r + d_r))
    absorb_query(d, q.data(), n_batch, w.wuk.data(), 1.0f, q_latent.data());
    absorb_query_naive(d, q.data(), n_batch, w.wuk.data(), 1.0f, naive_latent.data());
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
    }
    std::vector<float> head_outputs(n_batch * d.out_width()), naive_outputs(head_outputs.size());  // (B, H·d_v)
    unabsorb_output(d, latent_out.data(), d.latent_dim(), n_batch, w.wuv.data(), head_outputs.data());
    unabsorb_output_naive(d, latent_out.data(), d.latent_dim(), n_batch, w.wuv.data(), naive_outputs.data());
    checks.push_back({"unabsorb_output", relative_error(head_outputs, naive_outputs)});
    std::vector<float> unused;
    checks.push_back(check_projection(kernels, "output projection", head_outputs.data(), n_batch, d.out_width(),
                                      w.wo.data(), model_dim, unused));

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
        latent_forward_full(first_layer, weights, inputs.prompt, out.data(), scratch.latent, scratch.attention_scratch,
                            nullptr, nullptr, kernels, {});
        const std::size_t prefix_rows = std::min(n, checked_prefix_rows);  // of the first sequence
        checks.push_back(check_projection(kernels, "c·W_uk", scratch.latent.latent.data(), prefix_rows, d.rank,
                                          w.wuk.data(), std::min(d.n_heads * d.nope_dim, checked_outputs), unused));
        checks.push_back(check_projection(kernels, "c·W_uv", scratch.latent.latent.data(), prefix_rows, d.rank,
                                          w.wuv.data(), std::min(d.out_width(), checked_outputs), unused));
        checks.push_back(check_causal_attention(causal_attention_view(first_layer), scratch.latent.qkv.data(),
                                                scratch.latent.padded_out.data(), nullptr));
    }
    return checks;
}

}  // namespace kvbench
