// decode_step and forward_full: the layer loop, residual stream and cache writes.
#include "kvbench/engine/decoder.hpp"

#include "kvbench/engine/attention_shape.hpp"
#include "kvbench/engine/checked_size.hpp"
#include "kvbench/engine/linear.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace kvbench {

namespace {

// Rows of activations each scratch holds: the new token of every sequence, or every position;
// none for a latent config, whose paths use their own buffers.
// The cached step's rows are token-major, (Q, n_batch): token i of sequence b is row i·B + b.
std::size_t decode_rows(const ModelConfig& config) {
    return config.is_latent() ? 0 : checked_mul(config.n_query_tokens, config.n_batch);
}
std::size_t forward_rows(const ModelConfig& config) {
    return config.is_latent() ? 0 : config.total_tokens();
}
// Rows of a full block's scratch, latent or not: the step's tokens, or every position.
std::size_t full_block_rows(const ModelConfig& config, bool forward) {
    return forward ? config.total_tokens() : checked_mul(config.n_query_tokens, config.n_batch);
}

// What linear() keeps to convert reduced-type weights for sgemm and to transpose x for the
// rows-in-lanes kernels, over `rows` rows (linear.hpp): buffers per thread, not the scratch's
// own, but held while the scratch is in use.
std::size_t weight_conversion_bytes(const ModelConfig& config, std::size_t rows) {
    const std::size_t longest_in = std::max({config.model_dim, config.q_dim(), config.ffn_dim, config.moe.expert_dim,
                                             config.n_heads * config.mla.v_head_dim, config.mla.q_lora_rank,
                                             config.mla.kv_lora_rank});
    const std::size_t lanes = linear_lanes_bytes(rows, longest_in, config.weight_dtype);
    if (config.weight_dtype == WeightDtype::f32) return lanes;
    const std::size_t tiles = config.weight_dtype == WeightDtype::int8 ? linear_int8_tile_bytes(longest_in) : 0;
    return checked_add(checked_add(linear_conversion_bytes(rows, longest_in), tiles), lanes);
}

}  // namespace

void require_measurable(const ModelConfig& config) {
    auto refuse = [](const char* part) {
        throw ConfigError(fmt::format("{}: kvbench memory plans it, but the decode step does not compute it yet", part));
    };
    // The latent attention has no sink logits, and runs uniform batches only.
    if (config.is_latent() && config.attention_sinks) refuse("--sinks with --kv-lora-rank (latent attention)");
    if (config.is_latent() && config.is_ragged()) refuse("--seq-lens or --seq-dist with --kv-lora-rank (latent attention)");
}

DecodeScratch::DecodeScratch(const ModelConfig& config, std::size_t max_seq_len, std::size_t n_threads)
    : qkv(checked_mul(decode_rows(config), config.qkv_dim())),
      head_outputs(checked_mul(decode_rows(config), config.q_dim())),
      attention_scratch(decode_attention_view(config), max_seq_len, n_threads), block(config, full_block_rows(config, false)),
      latent(config), weight_conversion(weight_conversion_bytes(config, full_block_rows(config, false))) {}

std::size_t DecodeScratch::bytes() const {
    return (qkv.size() + head_outputs.size()) * sizeof(float) + attention_scratch.bytes() + block.bytes() +
           latent.bytes() + weight_conversion;
}

std::size_t DecodeScratch::bytes_for(const ModelConfig& config, std::size_t max_seq_len, std::size_t n_threads) {
    const std::size_t floats = checked_mul(decode_rows(config), checked_add(config.qkv_dim(), config.q_dim()));
    return checked_add(checked_add(checked_add(checked_mul(floats, sizeof(float)), LatentDecodeBuffers::bytes_for(config)),
                                   DecodeAttentionScratch::bytes_for(decode_attention_view(config), max_seq_len, n_threads)),
                       checked_add(FullBlockScratch::bytes_for(config, full_block_rows(config, false)),
                                   weight_conversion_bytes(config, full_block_rows(config, false))));
}

ForwardScratch::ForwardScratch(const ModelConfig& config, std::size_t n_threads,
                               std::size_t block_rows)
    : qkv(checked_mul(forward_rows(config), config.qkv_dim())),
      head_outputs(checked_mul(forward_rows(config), config.q_dim())),
      attention_scratch(config.seq_len, n_threads, block_rows), block(config, full_block_rows(config, true)),
      latent(config), weight_conversion(weight_conversion_bytes(config, full_block_rows(config, true))) {}

std::size_t ForwardScratch::bytes() const {
    return (qkv.size() + head_outputs.size()) * sizeof(float) + attention_scratch.bytes() + block.bytes() +
           latent.bytes() + weight_conversion;
}

std::size_t ForwardScratch::bytes_for(const ModelConfig& config, std::size_t n_threads, std::size_t block_rows) {
    const std::size_t floats = checked_mul(forward_rows(config), checked_add(config.qkv_dim(), config.q_dim()));
    return checked_add(checked_add(checked_add(checked_mul(floats, sizeof(float)), LatentForwardBuffers::bytes_for(config)),
                                   CausalAttentionScratch::bytes_for(config.seq_len, n_threads, block_rows)),
                       checked_add(FullBlockScratch::bytes_for(config, full_block_rows(config, true)),
                                   weight_conversion_bytes(config, full_block_rows(config, true))));
}

std::size_t attention_trace_size(const ModelConfig& config) {
    return checked_mul(checked_mul(config.n_layers, config.n_batch), attention_output_dim(config));
}

std::size_t mlp_trace_size(const ModelConfig& config) {
    if (config.block != BlockKind::full) return 0;
    return checked_mul(checked_mul(config.n_layers, config.n_batch), config.model_dim);
}

namespace {

void require_trace_size(const ModelConfig& config, const PathOptions& options) {
    if (!options.attention_trace.empty() && options.attention_trace.size() != attention_trace_size(config)) {
        throw std::invalid_argument("attention trace is not (n_layers, n_batch, q_dim) floats");
    }
    if (!options.mlp_trace.empty() && options.mlp_trace.size() != mlp_trace_size(config)) {
        throw std::invalid_argument("MLP trace is not (n_layers, n_batch, model_dim) floats of a full block");
    }
}

// The row of sequence b's newest position: (Q - 1)·B + b in the cached step's token-major rows,
// the last of its N_b rows in the uncached forward's.
std::size_t newest_row(const ModelConfig& config, std::size_t b, bool forward) {
    return forward ? config.first_token(b) + config.seq_len_of(b) - 1 : (config.n_query_tokens - 1) * config.n_batch + b;
}

// The MLP trace of `layer`: the residual stream's rows of the newest positions before the MLP
// (before == true), then what the MLP added to them. The difference costs the trace a rounding
// of the stream's scale, far below --verify's tolerance, and leaves the timed path's fused
// residual add as it is.
void record_mlp(const ModelConfig& config, const PathOptions& options, std::size_t layer, const float* stream,
                bool forward, bool before) {
    if (options.mlp_trace.empty()) return;
    const std::size_t dim = config.model_dim;
    for (std::size_t b = 0; b < config.n_batch; ++b) {
        const float* row = stream + newest_row(config, b, forward) * dim;
        float* traced = options.mlp_trace.data() + (layer * config.n_batch + b) * dim;
        for (std::size_t d = 0; d < dim; ++d) traced[d] = before ? row[d] : row[d] - traced[d];
    }
}

// The second half of a full block: x (n_rows, model_dim) += MLP(RMSNorm(x)), or the experts'.
// Returns the FLOPs of its products; adds the experts it read to *experts_read.
std::uint64_t add_feed_forward(const ModelConfig& config, const LayerWeights& w, std::size_t layer,
                               const StepKernels& kernels, float* x, std::size_t n_rows, FullBlockScratch& scratch,
                               std::size_t& experts_read) {
    kernels.rmsnorm(x, n_rows, config.model_dim, w.mlp_norm.data(), scratch.normed.data());
    if (!layer_has_experts(config, layer)) {
        return add_mlp(kernels, w.mlp, scratch.normed.data(), n_rows, config.model_dim, scratch, x);
    }
    const ExpertsResult experts = add_experts(kernels, config, w, scratch.normed.data(), n_rows, scratch, x);
    experts_read += experts.experts_read;
    return experts.flops;
}

// Copies layer `layer`'s attention output of each sequence's newest position into the trace,
// from the rows of head_outputs (q_dim floats each) of the cached step or of the forward.
void record_attention(const ModelConfig& config, std::span<float> attention_trace, std::size_t layer,
                      const float* head_outputs, bool forward) {
    if (attention_trace.empty()) return;
    const std::size_t q_dim = config.q_dim();
    for (std::size_t b = 0; b < config.n_batch; ++b) {
        std::copy_n(head_outputs + newest_row(config, b, forward) * q_dim, q_dim,
                    attention_trace.begin() + static_cast<std::ptrdiff_t>((layer * config.n_batch + b) * q_dim));
    }
}

// Stores the k and v of `n_positions` rows of one sequence (row stride qkv_dim) in the
// cache at positions [first_pos, first_pos + n_positions), converted to its element type.
void store_kv(const ModelConfig& config, const float* qkv_rows, std::size_t n_positions,
              KvCache& cache, std::size_t layer, std::size_t b, std::size_t first_pos) {
    const std::size_t head_dim = config.head_dim();
    const std::size_t qkv_dim = config.qkv_dim();
    for (std::size_t kv_head = 0; kv_head < config.n_kv_heads; ++kv_head) {
        const float* k_src = qkv_rows + config.q_dim() + kv_head * head_dim;
        const float* v_src = k_src + config.kv_dim();
        for (std::size_t t = 0; t < n_positions; ++t) {
            cache.store(layer, b, kv_head, first_pos + t, k_src + t * qkv_dim, v_src + t * qkv_dim);
        }
    }
}

// One multi-head layer of the cached step: q, k, v of the step's tokens from block_in (n_rows,
// model_dim), k and v stored at their positions (turned by RoPE in a full block), attention, and
// x_out += heads·Wo. Returns its FLOPs.
FlopCount add_attention_step(const ModelConfig& config, const LayerWeights& w, const StepKernels& kernels,
                             KvCache& cache, std::size_t pos, const float* block_in, float* x_out, DecodeScratch& scratch,
                             std::span<float> attention_trace, std::size_t layer) {
    const std::size_t n_tokens = config.n_query_tokens;
    const std::size_t n_batch = config.n_batch;
    const std::size_t n_rows = n_tokens * n_batch;
    const std::size_t model_dim = config.model_dim;
    const std::size_t qkv_dim = config.qkv_dim();
    const bool full = config.block == BlockKind::full;
    FlopCount count;
    const std::uint64_t qkv_flops =
        kernels.linear(block_in, n_rows, model_dim, w.wqkv.view(), qkv_dim, 0.0f, scratch.qkv.data());
    // Every token's k and v go into the cache before any attends: token i sees positions up
    // to its own, the step's earlier tokens included (causal among themselves).
    for (std::size_t i = 0; i < n_tokens; ++i) {
        float* token_qkv = scratch.qkv.data() + i * n_batch * qkv_dim;  // (n_batch, qkv_dim) floats
        // The cache holds keys after RoPE, as a model's does: a step turns only its own.
        if (full && !config.is_ragged()) kernels.rope(config, token_qkv, n_batch, 1, pos + i);
        for (std::size_t b = 0; b < n_batch; ++b) {
            const std::size_t row_pos = pos + i - config.seq_lag_of(b);
            if (full && config.is_ragged()) kernels.rope(config, token_qkv + b * qkv_dim, 1, 1, row_pos);
            store_kv(config, token_qkv + b * qkv_dim, 1, cache, layer, b, row_pos);
        }
    }
    // The step's tokens in one call, which reads the cache once for all of them (docs/model.md,
    // "Multi-token queries"), or one attend_decode per token where the table has no such kernel.
    count += kernels.attend_decode_tokens != nullptr
                 ? kernels.attend_decode_tokens(config, scratch.qkv.data(), qkv_dim, cache, layer, pos + n_tokens,
                                                scratch.head_outputs.data(), scratch.attention_scratch, w.sink_logits())
                 : attend_each_token(kernels.attend_decode, config, scratch.qkv.data(), qkv_dim, cache, layer,
                                     pos + n_tokens, scratch.head_outputs.data(), scratch.attention_scratch,
                                     w.sink_logits());
    record_attention(config, attention_trace, layer, scratch.head_outputs.data(), false);
    // beta = 1: the residual add rides on the output projection.
    const std::uint64_t out_flops = kernels.linear(scratch.head_outputs.data(), n_rows, config.q_dim(),
                                                   w.wo.view(), model_dim, 1.0f, x_out);
    count += FlopCount{qkv_flops + out_flops, qkv_flops + out_flops};
    return count;
}

// One multi-head layer of the uncached forward: q, k, v of every position from block_in
// (total_tokens, model_dim), turned by RoPE in a full block and stored in `prefill` when given,
// causal attention, and x_out += heads·Wo. Returns its FLOPs.
FlopCount add_attention_forward(const ModelConfig& config, const LayerWeights& w, const StepKernels& kernels,
                                const float* block_in, float* x_out, ForwardScratch& scratch, KvCache* prefill,
                                const std::atomic<bool>* stop, std::span<float> attention_trace, std::size_t layer) {
    const std::size_t n_rows = config.total_tokens();
    const std::size_t model_dim = config.model_dim;
    const std::size_t qkv_dim = config.qkv_dim();
    const bool full = config.block == BlockKind::full;
    // A ragged batch's attention runs one sequence at a time, each a batch of one at its own
    // context (docs/model.md, "Ragged batches"); its projections run on all packed rows at once.
    ModelConfig sequence_config;
    if (config.is_ragged()) {
        sequence_config = config;
        sequence_config.n_batch = 1;
        sequence_config.seq_lens.clear();
    }
    FlopCount count;
    const std::uint64_t qkv_flops =
        kernels.linear(block_in, n_rows, model_dim, w.wqkv.view(), qkv_dim, 0.0f, scratch.qkv.data());
    if (full && !config.is_ragged()) kernels.rope(config, scratch.qkv.data(), n_rows, config.seq_len, 0);
    if (full && config.is_ragged()) {
        for (std::size_t b = 0; b < config.n_batch; ++b) {
            kernels.rope(config, scratch.qkv.data() + config.first_token(b) * qkv_dim, config.seq_len_of(b),
                         config.seq_len_of(b), 0);
        }
    }
    if (prefill != nullptr) {
        for (std::size_t b = 0; b < config.n_batch; ++b) {
            store_kv(config, scratch.qkv.data() + config.first_token(b) * qkv_dim, config.seq_len_of(b),
                     *prefill, layer, b, 0);
        }
    }
    if (!config.is_ragged()) {
        count += kernels.attend_causal(config, layer, scratch.qkv.data(), scratch.head_outputs.data(),
                                       scratch.attention_scratch, stop, w.sink_logits());
    } else {
        for (std::size_t b = 0; b < config.n_batch; ++b) {
            sequence_config.seq_len = config.seq_len_of(b);
            const std::size_t first = config.first_token(b);
            count += kernels.attend_causal(sequence_config, layer, scratch.qkv.data() + first * qkv_dim,
                                           scratch.head_outputs.data() + first * config.q_dim(),
                                           scratch.attention_scratch, stop, w.sink_logits());
        }
    }
    record_attention(config, attention_trace, layer, scratch.head_outputs.data(), true);
    const std::uint64_t out_flops = kernels.linear(scratch.head_outputs.data(), n_rows, config.q_dim(),
                                                   w.wo.view(), model_dim, 1.0f, x_out);
    count += FlopCount{qkv_flops + out_flops, qkv_flops + out_flops};
    return count;
}

}  // namespace

FlopCount decode_step(const ModelConfig& config, const ModelWeights& weights, KvCache& cache,
                      const float* x_in, float* x_out, DecodeScratch& scratch, const PathOptions& options) {
    if (config.is_latent()) require_measurable(config);  // the latent step has no ragged rows
    // The step's Q tokens take positions [pos, pos + Q) of the longest rows.
    const std::size_t pos = cache.length();
    const std::size_t n_tokens = config.n_query_tokens;
    cache.require_writable(pos);
    if (pos + n_tokens > cache.max_seq_len()) {
        throw std::out_of_range(fmt::format("KV cache holds at most {} positions; cannot add {} to {}",
                                            cache.max_seq_len(), n_tokens, pos));
    }
    // A ragged batch's row b is at its own position pos - lag (docs/model.md, "Ragged batches"),
    // so every row must have started.
    for (std::size_t b = 0; b < config.n_batch; ++b) {
        if (pos < config.seq_lag_of(b)) {
            throw std::out_of_range(fmt::format("KV cache of length {}: row {} of the ragged batch starts at {}", pos, b,
                                                config.seq_lag_of(b)));
        }
    }
    require_trace_size(config, options);
    const StepKernels& kernels = *options.kernels;
    const std::size_t n_batch = config.n_batch;
    const std::size_t n_rows = n_tokens * n_batch;
    const std::size_t model_dim = config.model_dim;

    const bool full = config.block == BlockKind::full;
    std::copy_n(x_in, n_rows * model_dim, x_out);
    FlopCount count;
    std::size_t experts_read = 0;
    for (std::size_t layer = 0; layer < config.n_layers; ++layer) {
        const LayerWeights& w = weights.layers[layer];
        const float* block_in = x_out;
        if (full) {
            kernels.rmsnorm(x_out, n_rows, model_dim, w.attention_norm.data(), scratch.block.normed.data());
            block_in = scratch.block.normed.data();
        }
        if (config.is_latent()) {
            count += latent_attention_step(config, layer, w.latent, cache, block_in, x_out, scratch.latent,
                                           scratch.attention_scratch, kernels, options.attention_trace);
        } else {
            count += add_attention_step(config, w, kernels, cache, pos, block_in, x_out, scratch, options.attention_trace,
                                        layer);
        }
        if (full) {
            record_mlp(config, options, layer, x_out, false, true);
            const std::uint64_t mlp_flops =
                add_feed_forward(config, w, layer, kernels, x_out, n_rows, scratch.block, experts_read);
            record_mlp(config, options, layer, x_out, false, false);
            count += FlopCount{mlp_flops, mlp_flops};
        }
    }
    cache.extend_to(pos + n_tokens);
    if (options.experts_read != nullptr) *options.experts_read = experts_read;
    return count;
}

FlopCount forward_full(const ModelConfig& config, const ModelWeights& weights, const float* x_in,
                       float* x_out, ForwardScratch& scratch, KvCache* prefill, const std::atomic<bool>* stop,
                       const PathOptions& options) {
    if (config.is_latent()) require_measurable(config);
    require_trace_size(config, options);
    const StepKernels& kernels = *options.kernels;
    auto stopped = [stop] { return stop != nullptr && stop->load(std::memory_order_relaxed); };
    const std::size_t n_rows = config.total_tokens();
    const std::size_t model_dim = config.model_dim;
    if (prefill != nullptr) {
        if (prefill->max_seq_len() < config.seq_len) {
            throw std::out_of_range("prefill cache is shorter than the sequence");
        }
        prefill->roll_back(0);
    }

    const bool full = config.block == BlockKind::full;
    std::copy_n(x_in, n_rows * model_dim, x_out);
    FlopCount count;
    std::size_t experts_read = 0;
    for (std::size_t layer = 0; layer < config.n_layers; ++layer) {
        if (stopped()) return count;
        const LayerWeights& w = weights.layers[layer];
        const float* block_in = x_out;
        if (full) {
            kernels.rmsnorm(x_out, n_rows, model_dim, w.attention_norm.data(), scratch.block.normed.data());
            block_in = scratch.block.normed.data();
        }
        if (config.is_latent()) {
            count += latent_attention_forward(config, layer, w.latent, block_in, x_out, scratch.latent,
                                              scratch.attention_scratch, prefill, stop, kernels, options.attention_trace);
        } else {
            count += add_attention_forward(config, w, kernels, block_in, x_out, scratch, prefill, stop,
                                           options.attention_trace, layer);
        }
        if (full) {
            if (stopped()) return count;
            record_mlp(config, options, layer, x_out, true, true);
            const std::uint64_t mlp_flops =
                add_feed_forward(config, w, layer, kernels, x_out, n_rows, scratch.block, experts_read);
            record_mlp(config, options, layer, x_out, true, false);
            count += FlopCount{mlp_flops, mlp_flops};
        }
    }
    if (prefill != nullptr && !stopped()) prefill->extend_to(config.seq_len);
    if (options.experts_read != nullptr) *options.experts_read = experts_read;
    return count;
}

}  // namespace kvbench
