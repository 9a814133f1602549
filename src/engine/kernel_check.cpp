// check_kernels: run each fast kernel and its naive twin on the same data and compare.
#include "kvbench/engine/kernel_check.hpp"

#include "kvbench/engine/feed_forward.hpp"
#include "kvbench/engine/layer_ops.hpp"
#include "kvbench/engine/latent_check.hpp"
#include "kvbench/engine/reference.hpp"
#include "check_sample.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>

namespace kvbench {

namespace {

// Multiply-adds the naive causal attention may spend on its sample (about a second in double
// on one core): past it, fewer blocks are sampled.
constexpr std::size_t causal_check_budget = std::size_t{1} << 28;

std::string rows_label(std::size_t n_rows) { return fmt::format("{} row{}", n_rows, n_rows == 1 ? "" : "s"); }

// kernels.linear and linear_naive on x (n_rows, in_dim) against W's first out_dim rows, onto
// y_in (n_rows, out_dim) with beta = 1, or from zero without y_in. Returns the fast result in `fast`.
KernelCheck check_linear(StepKernels::Linear linear_fast, std::string label, const float* x, std::size_t n_rows,
                         std::size_t in_dim, WeightView w, std::size_t out_dim, const float* y_in,
                         std::vector<float>& fast) {
    const float beta = y_in != nullptr ? 1.0f : 0.0f;
    fast.assign(n_rows * out_dim, 0.0f);
    std::vector<float> naive(n_rows * out_dim, 0.0f);  // (n_rows, out_dim) floats
    if (y_in != nullptr) {
        std::copy_n(y_in, fast.size(), fast.begin());
        std::copy_n(y_in, naive.size(), naive.begin());
    }
    linear_fast(x, n_rows, in_dim, w, out_dim, beta, fast.data());
    linear_naive(x, n_rows, in_dim, w, out_dim, beta, naive.data());
    return {fmt::format("linear ({}{})", rows_label(n_rows), label), relative_error(fast, naive)};
}

// Columns [0, n_cols) of `n_rows` rows of a row-major matrix with row stride `stride`.
std::vector<float> columns(const float* rows, std::size_t n_rows, std::size_t stride, std::size_t n_cols) {
    std::vector<float> out(n_rows * n_cols);  // (n_rows, n_cols) floats
    for (std::size_t r = 0; r < n_rows; ++r) std::copy_n(rows + r * stride, n_cols, out.begin() + static_cast<std::ptrdiff_t>(r * n_cols));
    return out;
}

}  // namespace

KernelCheck check_causal_attention(const ModelConfig& config, const float* qkv, const float* fast_out,
                                   const float* sinks) {
    const std::size_t n = config.seq_len;
    const std::size_t head_dim = config.head_dim();
    const std::size_t qkv_dim = config.qkv_dim();
    const std::size_t q_dim = config.q_dim();
    const std::size_t per_block = 2 * config.n_batch * n * head_dim * 2;  // two rows, q·K and p·V
    const std::size_t max_blocks = std::max<std::size_t>(4, causal_check_budget / std::max<std::size_t>(per_block, 1));
    const std::vector<std::size_t> rows = sampled_causal_rows(n, CausalAttentionScratch::default_block_rows, max_blocks);

    std::vector<float> fast, naive;         // the sampled (row, head) outputs, head_dim floats each
    std::vector<float> keys(n * head_dim);  // (seq_len, head_dim) floats: one KV head's keys
    std::vector<float> values(keys.size());  // (seq_len, head_dim) floats
    std::vector<float> out(head_dim);
    for (std::size_t b = 0; b < config.n_batch; ++b) {
        const float* sequence = qkv + b * n * qkv_dim;
        for (std::size_t g = 0; g < config.n_kv_heads; ++g) {
            for (std::size_t t = 0; t < n; ++t) {
                const float* k = sequence + t * qkv_dim + q_dim + g * head_dim;
                std::copy_n(k, head_dim, keys.begin() + static_cast<std::ptrdiff_t>(t * head_dim));
                std::copy_n(k + config.kv_dim(), head_dim, values.begin() + static_cast<std::ptrdiff_t>(t * head_dim));
            }
            for (std::size_t j = 0; j < rows.size(); ++j) {
                // One head per row, turn by turn, so that every head is seen and the cost is one head's.
                const std::size_t h = (j + b) % config.n_heads;
                if (h / config.group_size() != g) continue;
                const std::size_t i = rows[j];
                // Layer 0's window, if it has one, as a loop bound: row i sees the last n_seen positions.
                const std::size_t n_seen = config.attended_positions(0, i + 1);
                const std::size_t first = i + 1 - n_seen;
                attention_reference(sequence + i * qkv_dim + h * head_dim, keys.data() + first * head_dim,
                                    values.data() + first * head_dim, n_seen, 1, head_dim, out.data(),
                                    sinks != nullptr ? sinks[h] : -std::numeric_limits<double>::infinity());
                naive.insert(naive.end(), out.begin(), out.end());
                const float* fast_row = fast_out + (b * n + i) * q_dim + h * head_dim;
                fast.insert(fast.end(), fast_row, fast_row + head_dim);
            }
        }
    }
    return {fmt::format("attend_causal ({} positions, {} rows sampled)", n, rows.size()), relative_error(fast, naive)};
}

namespace {

// A full block's parts on the step's rows: the two norms, RoPE at the step's position, the gate,
// and layer 0's MLP (or experts) whole, each against its naive twin.
void check_full_block(const ModelConfig& config, const LayerWeights& layer, const StepKernels& kernels,
                      const float* step_in, std::vector<KernelCheck>& checks) {
    const std::size_t n_batch = config.n_batch;
    const std::size_t dim = config.model_dim;
    std::vector<float> fast(n_batch * dim), naive(fast.size());  // (n_batch, model_dim) floats
    kernels.rmsnorm(step_in, n_batch, dim, layer.attention_norm.data(), fast.data());
    rmsnorm_naive(step_in, n_batch, dim, layer.attention_norm.data(), naive.data());
    checks.push_back({"rmsnorm", relative_error(fast, naive)});
    const std::vector<float> normed = naive;

    std::vector<float> qkv_fast(n_batch * config.qkv_dim());  // (n_batch, qkv_dim) floats
    linear_naive(normed.data(), n_batch, dim, layer.wqkv.view(), config.qkv_dim(), 0.0f, qkv_fast.data());
    std::vector<float> qkv_naive = qkv_fast;
    kernels.rope(config, qkv_fast.data(), n_batch, 1, config.seq_len - 1);
    apply_rope_naive(config, qkv_naive.data(), n_batch, 1, config.seq_len - 1);
    checks.push_back({"rope", relative_error(qkv_fast, qkv_naive)});

    check_feed_forward(config, layer, kernels, normed.data(), checks);
}

}  // namespace

void check_feed_forward(const ModelConfig& config, const LayerWeights& layer, const StepKernels& kernels,
                        const float* normed, std::vector<KernelCheck>& checks) {
    const std::size_t n_batch = config.n_batch;
    const std::size_t dim = config.model_dim;
    const std::size_t width = layer.has_experts() ? config.moe.expert_dim : config.ffn_dim;
    const MlpWeights& mlp = layer.has_experts() ? layer.experts.front() : layer.mlp;
    std::vector<float> gate_up(n_batch * 2 * width);  // (n_batch, 2·width) floats
    linear_naive(normed, n_batch, dim, mlp.gate_up.view(), 2 * width, 0.0f, gate_up.data());
    std::vector<float> hidden_fast(n_batch * width), hidden_naive(hidden_fast.size());  // (n_batch, width) floats
    kernels.silu_gate(gate_up.data(), n_batch, width, hidden_fast.data());
    silu_gate_naive(gate_up.data(), n_batch, width, hidden_naive.data());
    checks.push_back({"silu_gate", relative_error(hidden_fast, hidden_naive)});

    // What the MLP or experts add, from zero: on the residual the sum would hide them.
    FullBlockScratch scratch(config, n_batch);
    std::vector<float> fast(n_batch * dim, 0.0f), naive(fast.size(), 0.0f);  // (n_batch, model_dim) floats
    if (layer.has_experts()) {
        const std::size_t read = add_experts(kernels, config, layer, normed, n_batch, scratch, fast.data()).experts_read;
        const std::size_t read_naive = experts_naive(config, layer, normed, n_batch, naive.data());
        checks.push_back({fmt::format("experts ({} of {} read)", read, config.moe.n_experts),
                          read == read_naive ? relative_error(fast, naive) : std::numeric_limits<double>::infinity()});
    } else {
        add_mlp(kernels, layer.mlp, normed, n_batch, dim, scratch, fast.data());
        mlp_naive(layer.mlp, normed, n_batch, dim, naive.data());
        checks.push_back({"mlp", relative_error(fast, naive)});
    }
}

std::vector<std::size_t> sampled_causal_rows(std::size_t seq_len, std::size_t block_rows, std::size_t max_blocks) {
    const std::size_t n_blocks = (seq_len + block_rows - 1) / block_rows;
    std::set<std::size_t> blocks;
    if (n_blocks <= max_blocks) {
        for (std::size_t k = 0; k < n_blocks; ++k) blocks.insert(k);
    } else {
        // Blocks 1 and 2 hold the first diagonal blocks past the first one, and the rest spread
        // from the first block to the last.
        blocks.insert({1, 2});
        const std::size_t n_spread = max_blocks - 2;
        for (std::size_t i = 0; i < n_spread; ++i) blocks.insert(i * (n_blocks - 1) / (n_spread - 1));
    }
    std::vector<std::size_t> rows;
    for (const std::size_t k : blocks) {
        rows.push_back(k * block_rows);
        const std::size_t last = std::min(seq_len, (k + 1) * block_rows) - 1;
        if (last != rows.back()) rows.push_back(last);
    }
    return rows;
}

namespace {

// The uncached forward's kernels on config's prompt (n_batch, seq_len, model_dim) floats.
void check_prompt_kernels(const ModelConfig& config, const LayerWeights& layer, const StepKernels& kernels,
                          const float* prompt, const KernelCheckInputs& inputs, std::vector<KernelCheck>& checks);

}  // namespace

namespace {

// The step's Q tokens of layer 0 through kernels.attend_decode_tokens (attend_decode once per
// token when the table has none) against attend_decode_tokens_naive, after their k and v are
// stored at each row's positions N_b - Q to N_b - 1, as the step stores them.
KernelCheck check_query_tokens(const ModelConfig& config, const LayerWeights& layer, const StepKernels& kernels,
                               const KernelCheckInputs& inputs) {
    const std::size_t n_tokens = config.n_query_tokens;
    const std::size_t n_batch = config.n_batch;
    const std::size_t n_rows = n_tokens * n_batch;
    const std::size_t qkv_dim = config.qkv_dim();
    const std::size_t q_dim = config.q_dim();
    const std::size_t head_dim = config.head_dim();
    std::vector<float> qkv(n_rows * qkv_dim);  // (Q·n_batch, qkv_dim) floats, token-major
    linear_naive(inputs.step_in, n_rows, config.model_dim, layer.wqkv.view(), qkv_dim, 0.0f, qkv.data());
    KvCache& cache = *inputs.cache;
    for (std::size_t i = 0; i < n_tokens; ++i) {
        for (std::size_t b = 0; b < n_batch; ++b) {
            const std::size_t pos = config.seq_len_of(b) - n_tokens + i;
            for (std::size_t g = 0; g < config.n_kv_heads; ++g) {
                const float* k = qkv.data() + (i * n_batch + b) * qkv_dim + q_dim + g * head_dim;
                cache.store(0, b, g, pos, k, k + config.kv_dim());
            }
        }
    }
    DecodeAttentionScratch scratch(config, config.seq_len, inputs.n_threads);
    std::vector<float> fast(n_rows * q_dim), naive(fast.size());  // (Q·n_batch, q_dim) floats
    const float* sinks = layer.sink_logits();
    if (kernels.attend_decode_tokens != nullptr) {
        kernels.attend_decode_tokens(config, qkv.data(), qkv_dim, cache, 0, config.seq_len, fast.data(), scratch, sinks);
    } else {
        attend_each_token(kernels.attend_decode, config, qkv.data(), qkv_dim, cache, 0, config.seq_len, fast.data(),
                          scratch, sinks);
    }
    attend_decode_tokens_naive(config, qkv.data(), qkv_dim, cache, 0, config.seq_len, naive.data(), scratch, sinks);
    return {config.is_paged() ? fmt::format("attend_decode_tokens ({} tokens, paged, blocks of {})", n_tokens,
                                            config.kv_block)
                              : fmt::format("attend_decode_tokens ({} tokens)", n_tokens),
            relative_error(fast, naive)};
}

}  // namespace

std::vector<KernelCheck> check_kernels(const ModelConfig& config, const ModelWeights& weights,
                                       const KernelCheckInputs& inputs, const StepKernels& kernels) {
    if (inputs.step_in == nullptr) throw std::invalid_argument("check_kernels: no step inputs");
    if (config.is_latent()) return check_latent_kernels(config, weights, inputs, kernels);
    std::vector<KernelCheck> checks;
    const LayerWeights& layer = weights.layers.front();
    const std::size_t n_batch = config.n_batch;
    const std::size_t model_dim = config.model_dim;
    const std::size_t q_dim = config.q_dim();  // H·dh: width of the attention outputs
    const std::size_t qkv_dim = config.qkv_dim();
    const std::size_t head_dim = config.head_dim();

    std::vector<float> step_qkv;  // (n_batch, qkv_dim) floats: q | k | v of the new token
    checks.push_back(check_linear(kernels.linear, "", inputs.step_in, n_batch, model_dim, layer.wqkv.view(), qkv_dim,
                                  nullptr, step_qkv));

    // (n_batch, q_dim) floats: what the output projection reads, the attention output when there
    // is a cache to attend over, else the queries (any values of that shape exercise the kernel).
    std::vector<float> step_heads = columns(step_qkv.data(), n_batch, qkv_dim, q_dim);
    if (inputs.cache != nullptr) {
        KvCache& cache = *inputs.cache;
        for (std::size_t b = 0; b < n_batch; ++b) {
            const std::size_t pos = config.seq_len_of(b) - 1;  // the row's own newest position
            for (std::size_t g = 0; g < config.n_kv_heads; ++g) {
                const float* k = step_qkv.data() + b * qkv_dim + q_dim + g * head_dim;
                cache.store(0, b, g, pos, k, k + config.kv_dim());
            }
        }
        DecodeAttentionScratch scratch(config, config.seq_len, inputs.n_threads);
        std::vector<float> naive(n_batch * q_dim);  // (n_batch, q_dim) floats
        kernels.attend_decode(config, step_qkv.data(), qkv_dim, cache, 0, config.seq_len, step_heads.data(), scratch,
                              layer.sink_logits());
        attend_decode_naive(config, step_qkv.data(), qkv_dim, cache, 0, config.seq_len, naive.data(), scratch,
                            layer.sink_logits());
        // The naive twin looks each position up through the cache (load_key), so on a paged cache
        // it gathers through the block table with none of the kernel's arithmetic.
        checks.push_back({config.is_paged() ? fmt::format("attend_decode (paged, blocks of {})", config.kv_block)
                                            : std::string("attend_decode"),
                          relative_error(step_heads, naive)});
        if (config.n_query_tokens > 1) checks.push_back(check_query_tokens(config, layer, kernels, inputs));
    }
    std::vector<float> unused;
    checks.push_back(check_linear(kernels.linear, ", output projection", step_heads.data(), n_batch, q_dim,
                                  layer.wo.view(), model_dim, inputs.step_in, unused));
    if (config.block == BlockKind::full) check_full_block(config, layer, kernels, inputs.step_in, checks);

    if (inputs.prompt != nullptr) {
        // A ragged batch's prompt is checked on its longest sequence, a batch of one: each
        // sequence runs the same kernel at its own context (docs/model.md, "Ragged batches").
        const float* prompt = inputs.prompt;
        ModelConfig prompt_config = config;
        if (config.is_ragged()) {
            const auto longest = static_cast<std::size_t>(
                std::max_element(config.seq_lens.begin(), config.seq_lens.end()) - config.seq_lens.begin());
            prompt += config.first_token(longest) * model_dim;
            prompt_config.n_batch = 1;
            prompt_config.seq_lens.clear();
        }
        check_prompt_kernels(prompt_config, layer, kernels, prompt, inputs, checks);
    }
    return checks;
}

namespace {

void check_prompt_kernels(const ModelConfig& config, const LayerWeights& layer, const StepKernels& kernels,
                          const float* prompt, const KernelCheckInputs& inputs, std::vector<KernelCheck>& checks) {
    const std::size_t n_batch = config.n_batch;
    const std::size_t model_dim = config.model_dim;
    const std::size_t q_dim = config.q_dim();
    const std::size_t qkv_dim = config.qkv_dim();
    std::vector<float> unused;
    {
        const std::size_t n = config.seq_len;
        const std::size_t n_rows = n_batch * n;
        std::optional<ForwardScratch> own_scratch;
        if (inputs.forward_scratch == nullptr) own_scratch.emplace(config, inputs.n_threads);
        ForwardScratch& scratch = inputs.forward_scratch != nullptr ? *inputs.forward_scratch : *own_scratch;

        // The first rows of every sequence, for the many-row projections: (n_batch · prefix, ·) floats.
        const std::size_t prefix = std::min(n, checked_prefix_rows);
        const std::size_t n_prefix_rows = n_batch * prefix;
        std::vector<float> x(n_prefix_rows * model_dim);  // the prompt's inputs
        std::vector<float> heads(n_prefix_rows * q_dim);  // the fast attention's outputs
        for (std::size_t b = 0; b < n_batch; ++b) {
            std::copy_n(prompt + b * n * model_dim, prefix * model_dim,
                        x.begin() + static_cast<std::ptrdiff_t>(b * prefix * model_dim));
        }
        checks.push_back(check_linear(kernels.linear, "", x.data(), n_prefix_rows, model_dim, layer.wqkv.view(),
                                      std::min(qkv_dim, checked_outputs), nullptr, unused));

        kernels.linear(prompt, n_rows, model_dim, layer.wqkv.view(), qkv_dim, 0.0f, scratch.qkv.data());
        kernels.attend_causal(config, 0, scratch.qkv.data(), scratch.head_outputs.data(), scratch.attention_scratch, nullptr,
                              layer.sink_logits());
        checks.push_back(check_causal_attention(config, scratch.qkv.data(), scratch.head_outputs.data(), layer.sink_logits()));

        for (std::size_t b = 0; b < n_batch; ++b) {
            std::copy_n(scratch.head_outputs.data() + b * n * q_dim, prefix * q_dim,
                        heads.begin() + static_cast<std::ptrdiff_t>(b * prefix * q_dim));
        }
        const std::size_t out_dim = std::min(model_dim, checked_outputs);
        const std::vector<float> residual = columns(x.data(), n_prefix_rows, model_dim, out_dim);
        checks.push_back(check_linear(kernels.linear, ", output projection", heads.data(), n_prefix_rows, q_dim,
                                      layer.wo.view(), out_dim, residual.data(), unused));
    }
}

}  // namespace

}  // namespace kvbench
