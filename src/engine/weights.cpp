// Seeded weights and inputs.
#include "kvbench/engine/weights.hpp"

#include "kvbench/engine/checked_size.hpp"
#include "kvbench/engine/rng.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace kvbench {

namespace {
// Distinct streams for weights and inputs, so changing the context length does not
// change the weights drawn from the same seed.
constexpr std::uint64_t input_stream = 0x5EED'1A7E'0000'0001ull;
constexpr std::uint64_t cache_fill_stream = 0xCAC4'E000'0000'0003ull;
// Sinks have a stream of their own, so a model with them has the same matrices as without.
constexpr std::uint64_t sink_stream = 0x5141'C000'0000'0004ull;
// A uniform variable on [-a, a) has variance a²/3.
float uniform_bound_for_variance(double variance) {
    return static_cast<float>(std::sqrt(3.0 * variance));
}

}  // namespace

std::size_t LayerWeights::wqkv_floats(const ModelConfig& config) {
    return checked_mul(config.qkv_dim(), config.model_dim);
}

std::size_t LayerWeights::wo_floats(const ModelConfig& config) { return checked_mul(config.model_dim, config.q_dim()); }

std::size_t LayerWeights::bytes() const {
    std::size_t total = wqkv.bytes() + wo.bytes() + mlp.bytes() + router.bytes() + shared_experts.bytes();
    total += (attention_norm.size() + mlp_norm.size() + sinks.size()) * sizeof(float) + latent.bytes();
    for (const MlpWeights& expert : experts) total += expert.bytes();
    return total;
}

bool layer_has_experts(const ModelConfig& config, std::size_t layer) {
    return config.block == BlockKind::full && config.has_experts() && layer >= config.moe.n_dense_layers;
}

namespace {

std::size_t mlp_bytes_for(WeightDtype dtype, std::size_t model_dim, std::size_t width) {
    return checked_add(WeightMatrix::bytes_for(dtype, checked_mul(2, width), model_dim),
                       WeightMatrix::bytes_for(dtype, model_dim, width));
}

std::size_t layer_bytes_for(const ModelConfig& config, std::size_t layer) {
    const WeightDtype dtype = config.weight_dtype;
    const std::size_t dim = config.model_dim;
    std::size_t bytes = config.is_latent() ? LatentWeights::bytes_for(config)
                                           : checked_add(WeightMatrix::bytes_for(dtype, config.qkv_dim(), dim),
                                                         WeightMatrix::bytes_for(dtype, dim, config.q_dim()));
    if (config.attention_sinks) bytes = checked_add(bytes, checked_mul(config.n_heads, sizeof(float)));
    if (config.block != BlockKind::full) return bytes;
    bytes = checked_add(bytes, checked_product({2, dim, sizeof(float)}));
    if (!layer_has_experts(config, layer)) return checked_add(bytes, mlp_bytes_for(dtype, dim, config.ffn_dim));
    const MoeShape& moe = config.moe;
    bytes = checked_add(bytes, WeightMatrix::bytes_for(dtype, moe.n_experts, dim));
    bytes = checked_add(bytes, checked_mul(moe.n_experts, mlp_bytes_for(dtype, dim, moe.expert_dim)));
    if (moe.n_shared != 0) bytes = checked_add(bytes, mlp_bytes_for(dtype, dim, checked_mul(moe.n_shared, moe.expert_dim)));
    return bytes;
}

// n_out · n_in uniform draws of the given variance, stored as dtype.
WeightMatrix draw_matrix(Rng& rng, WeightDtype dtype, std::size_t n_out, std::size_t n_in, double variance,
                         std::vector<float>& values) {
    values.resize(checked_mul(n_out, n_in));
    fill_uniform(rng, values, uniform_bound_for_variance(variance));
    return WeightMatrix(dtype, n_out, n_in, values);
}

// An MLP of `width`: Wg and Wu of variance 1/D, Wd of 1/(width · L).
MlpWeights draw_mlp(Rng& rng, const ModelConfig& config, std::size_t width, std::vector<float>& values) {
    const double dim = static_cast<double>(config.model_dim);
    MlpWeights mlp;
    mlp.gate_up = draw_matrix(rng, config.weight_dtype, 2 * width, config.model_dim, 1.0 / dim, values);
    mlp.down = draw_matrix(rng, config.weight_dtype, config.model_dim, width,
                           1.0 / (static_cast<double>(width) * static_cast<double>(config.n_layers)), values);
    return mlp;
}

std::vector<float> draw_norm_gains(Rng& rng, std::size_t dim) {
    std::vector<float> gains(dim);
    fill_uniform(rng, gains, 0.1f);
    for (float& gain : gains) gain += 1.0f;
    return gains;
}

}  // namespace

std::size_t ModelWeights::bytes_for(const ModelConfig& config) {
    std::size_t total = 0;
    for (std::size_t layer = 0; layer < config.n_layers; ++layer) total = checked_add(total, layer_bytes_for(config, layer));
    return total;
}

std::size_t input_bytes_for(const ModelConfig& config, std::size_t n_positions) {
    return checked_product({config.n_batch, n_positions, config.model_dim, sizeof(float)});
}

std::size_t ModelWeights::bytes() const {
    std::size_t total = 0;
    for (const LayerWeights& layer : layers) total += layer.bytes();
    return total;
}

ModelWeights make_weights(const ModelConfig& config, std::uint64_t seed) {
    Rng rng(seed);
    const WeightDtype dtype = config.weight_dtype;
    const double dim = static_cast<double>(config.model_dim);
    // Variance 1/fan-in: D inputs to Wq, Wk, Wv; H·dh inputs to Wo.
    const double output_variance = 1.0 / (static_cast<double>(config.q_dim()) * static_cast<double>(config.n_layers));
    std::vector<float> values;  // one matrix's f32 draws, stored as dtype
    ModelWeights weights;
    weights.layers.resize(config.n_layers);
    for (std::size_t l = 0; l < config.n_layers; ++l) {
        LayerWeights& layer = weights.layers[l];
        if (config.is_latent()) {
            layer.latent = make_latent_weights(config, rng);
        } else {
            layer.wqkv = draw_matrix(rng, dtype, config.qkv_dim(), config.model_dim, 1.0 / dim, values);
            layer.wo = draw_matrix(rng, dtype, config.model_dim, config.q_dim(), output_variance, values);
        }
        if (config.block != BlockKind::full) continue;
        layer.attention_norm = draw_norm_gains(rng, config.model_dim);
        layer.mlp_norm = draw_norm_gains(rng, config.model_dim);
        if (!layer_has_experts(config, l)) {
            layer.mlp = draw_mlp(rng, config, config.ffn_dim, values);
            continue;
        }
        const MoeShape& moe = config.moe;
        layer.router = draw_matrix(rng, dtype, moe.n_experts, config.model_dim, 1.0 / dim, values);
        layer.experts.reserve(moe.n_experts);
        for (std::size_t e = 0; e < moe.n_experts; ++e) layer.experts.push_back(draw_mlp(rng, config, moe.expert_dim, values));
        if (moe.n_shared != 0) layer.shared_experts = draw_mlp(rng, config, moe.n_shared * moe.expert_dim, values);
    }
    if (config.attention_sinks) {
        // Variance 1, the scale of the logits q·k / sqrt(dh) they compete with.
        Rng sink_rng(seed ^ sink_stream);
        for (LayerWeights& layer : weights.layers) {
            layer.sinks.resize(config.n_heads);
            fill_uniform(sink_rng, layer.sinks, uniform_bound_for_variance(1.0));
        }
    }
    return weights;
}

std::vector<float> make_inputs(const ModelConfig& config, std::uint64_t seed) {
    if (!config.is_ragged()) return make_input_positions(config, seed, 0, config.seq_len);
    const std::size_t dim = config.model_dim;
    std::vector<float> inputs(checked_mul(config.total_tokens(), dim));
    // As make_input_positions: a shared prefix's positions are row 0's in every row, the rest
    // each row's own draws at their place in the stream.
    for (std::size_t b = 0; b < config.n_batch; ++b) {
        const std::size_t shared = std::min(config.shared_prefix, config.seq_len_of(b));
        float* row = inputs.data() + config.first_token(b) * dim;
        Rng shared_rng(seed ^ input_stream);
        fill_uniform(shared_rng, {row, shared * dim}, uniform_bound_for_variance(1.0));
        Rng rng(seed ^ input_stream);
        rng.discard((b * config.seq_len + shared) * dim);
        fill_uniform(rng, {row + shared * dim, (config.seq_len_of(b) - shared) * dim}, uniform_bound_for_variance(1.0));
    }
    return inputs;
}

std::vector<float> make_step_inputs(const ModelConfig& config, std::uint64_t seed) {
    const std::size_t n_tokens = config.n_query_tokens;
    if (!config.is_ragged() && n_tokens == 1) return make_input_positions(config, seed, config.seq_len - 1, 1);
    const std::size_t dim = config.model_dim;
    std::vector<float> inputs(checked_product({n_tokens, config.n_batch, dim}));
    for (std::size_t i = 0; i < n_tokens; ++i) {
        for (std::size_t b = 0; b < config.n_batch; ++b) {
            Rng rng(seed ^ input_stream);
            rng.discard((b * config.seq_len + config.seq_len_of(b) - n_tokens + i) * dim);
            fill_uniform(rng, {inputs.data() + (i * config.n_batch + b) * dim, dim}, uniform_bound_for_variance(1.0));
        }
    }
    return inputs;
}

std::vector<float> gather_newest(const ModelConfig& config, std::span<const float> tensor) {
    const std::size_t dim = config.model_dim;
    const std::size_t n_tokens = config.n_query_tokens;
    std::vector<float> rows(checked_product({n_tokens, config.n_batch, dim}));
    for (std::size_t i = 0; i < n_tokens; ++i) {
        for (std::size_t b = 0; b < config.n_batch; ++b) {
            const std::size_t row = config.first_token(b) + config.seq_len_of(b) - n_tokens + i;
            std::copy_n(tensor.data() + row * dim, dim, rows.data() + (i * config.n_batch + b) * dim);
        }
    }
    return rows;
}

std::vector<float> make_input_positions(const ModelConfig& config, std::uint64_t seed, std::size_t first_pos,
                                        std::size_t n_positions) {
    std::vector<float> inputs(input_bytes_for(config, n_positions) / sizeof(float));
    const std::size_t dim = config.model_dim;
    // A shared prefix's positions are row 0's in every row (docs/model.md, "Shared prefixes").
    const std::size_t end_pos = first_pos + n_positions;
    const std::size_t shared_end = std::clamp(config.shared_prefix, first_pos, end_pos);
    for (std::size_t b = 0; b < config.n_batch; ++b) {
        float* row = inputs.data() + b * n_positions * dim;
        // The draws of one stream in (batch row, position, dim) order, whatever is kept of them.
        Rng shared_rng(seed ^ input_stream);
        shared_rng.discard(first_pos * dim);
        fill_uniform(shared_rng, {row, (shared_end - first_pos) * dim}, uniform_bound_for_variance(1.0));
        Rng rng(seed ^ input_stream);
        rng.discard((b * config.seq_len + shared_end) * dim);
        fill_uniform(rng, {row + (shared_end - first_pos) * dim, (end_pos - shared_end) * dim},
                     uniform_bound_for_variance(1.0));
    }
    return inputs;
}

std::vector<float> gather_positions(std::span<const float> tensor, std::size_t n_batch, std::size_t seq_len,
                                    std::size_t dim, std::size_t first_pos, std::size_t n_positions) {
    std::vector<float> rows(checked_product({n_batch, n_positions, dim}));
    for (std::size_t b = 0; b < n_batch; ++b) {
        std::copy_n(tensor.data() + (b * seq_len + first_pos) * dim, n_positions * dim,
                    rows.data() + b * n_positions * dim);
    }
    return rows;
}

void fill_cache_seeded(const ModelConfig& config, KvCache& cache, std::size_t length, std::uint64_t seed,
                       const std::atomic<bool>* stop) {
    cache.roll_back(0);
    Rng rng(seed ^ cache_fill_stream);
    const float bound = uniform_bound_for_variance(1.0);
    // A latent cache's vectors are r + d_r wide, one KV head of no values of their own.
    const std::size_t width = cache.head_dim();
    const bool with_values = !cache.values_in_keys();
    // A contiguous f32 cache's rows are arrays, drawn into in place; every other cache (a paged
    // one's rings are not arrays, a shared prefix has none) gets the values an f32 cache of the
    // same seed holds, through store(), converted.
    const bool f32_arrays =
        with_values && cache.key_dtype() == KvDtype::f32 && cache.value_dtype() == KvDtype::f32 && !cache.paged();
    constexpr std::size_t positions_per_draw = 64;
    std::vector<float> keys(positions_per_draw * width), values(with_values ? keys.size() : 0);
    // Positions [first, first + n) of row b (row 0 stands for every row in a shared prefix) and
    // KV head g, drawn as the f32 arrays are: all of a block's keys, then its values (two streams).
    const auto fill_block = [&](std::size_t layer, std::size_t b, std::size_t g, std::size_t first, std::size_t n,
                                bool in_prefix) {
        if (f32_arrays && !in_prefix) {  // a row's own slots, from slot 0
            fill_uniform(rng, {cache.keys(layer, b, g), n * width}, bound);
            fill_uniform(rng, {cache.values(layer, b, g), n * width}, bound);
            return;
        }
        Rng value_rng = rng;
        if (with_values) value_rng.discard(n * width);
        for (std::size_t t0 = 0; t0 < n; t0 += positions_per_draw) {
            const std::size_t count = std::min(positions_per_draw, n - t0);
            fill_uniform(rng, {keys.data(), count * width}, bound);
            if (with_values) fill_uniform(value_rng, {values.data(), count * width}, bound);
            for (std::size_t t = 0; t < count; ++t) {
                cache.store(layer, b, g, first + t0 + t, keys.data() + t * width,
                            with_values ? values.data() + t * width : nullptr);
            }
        }
        if (with_values) rng = value_rng;
    };
    // Per layer, a shared prefix's one copy of positions [0, P) (none on a window layer or
    // without one, docs/model.md, "Shared prefixes"), then each row's own positions from P: a
    // ragged row holds `length` less its lag (docs/model.md, "Ragged batches"), and a ring keeps
    // only its last capacity positions, whose slots get values as seeded as the positions they
    // stand for.
    for (std::size_t layer = 0; layer < config.n_layers; ++layer) {
        if (stop != nullptr && stop->load(std::memory_order_relaxed)) return;
        const std::size_t prefix = std::min(length, cache.shared_prefix(layer));
        for (std::size_t g = 0; g < cache.n_kv_heads(); ++g) fill_block(layer, 0, g, 0, prefix, true);
        for (std::size_t b = 0; b < config.n_batch; ++b) {
            if (stop != nullptr && stop->load(std::memory_order_relaxed)) return;
            const std::size_t lag = config.seq_lag_of(b);
            const std::size_t end = std::min(length > lag ? length - lag : 0, prefix + cache.capacity(layer, b));
            for (std::size_t g = 0; g < cache.n_kv_heads(); ++g) {
                fill_block(layer, b, g, prefix, end > prefix ? end - prefix : 0, false);
            }
        }
    }
    cache.extend_to(length);
}

}  // namespace kvbench
