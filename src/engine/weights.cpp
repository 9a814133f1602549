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
// fill_cache_seeded of a latent cache: one vector of r + d_r per position, no values of their own.
void fill_latent_cache(const ModelConfig& config, KvCache& cache, std::size_t length, Rng& rng,
                       const std::atomic<bool>* stop) {
    const float bound = uniform_bound_for_variance(1.0);
    const std::size_t width = cache.head_dim();
    std::vector<float> vector(width);  // (r + d_r) floats: one position's c | k_rope
    for (std::size_t layer = 0; layer < config.n_layers; ++layer) {
        const std::size_t n_slots = std::min(length, cache.capacity(layer));
        for (std::size_t b = 0; b < config.n_batch; ++b) {
            if (stop != nullptr && stop->load(std::memory_order_relaxed)) return;
            for (std::size_t t = 0; t < n_slots; ++t) {
                fill_uniform(rng, vector, bound);
                cache.store(layer, b, 0, t, vector.data(), nullptr);
            }
        }
    }
    cache.extend_to(length);
}

}  // namespace

std::size_t LayerWeights::wqkv_floats(const ModelConfig& config) {
    return checked_mul(config.qkv_dim(), config.model_dim);
}

std::size_t LayerWeights::wo_floats(const ModelConfig& config) { return checked_mul(config.model_dim, config.q_dim()); }

std::size_t ModelWeights::bytes_for(const ModelConfig& config) {
    if (config.is_latent()) return checked_product({config.n_layers, LatentWeights::floats_for(config), sizeof(float)});
    const std::size_t per_layer = checked_add(checked_add(LayerWeights::wqkv_floats(config), LayerWeights::wo_floats(config)),
                                              config.attention_sinks ? config.n_heads : 0);
    return checked_product({config.n_layers, per_layer, sizeof(float)});
}

std::size_t input_bytes_for(const ModelConfig& config, std::size_t n_positions) {
    return checked_product({config.n_batch, n_positions, config.model_dim, sizeof(float)});
}

std::size_t ModelWeights::bytes() const {
    std::size_t total = 0;
    for (const LayerWeights& layer : layers) {
        total += (layer.wqkv.size() + layer.wo.size() + layer.sinks.size() + layer.latent.floats()) * sizeof(float);
    }
    return total;
}

ModelWeights make_weights(const ModelConfig& config, std::uint64_t seed) {
    Rng rng(seed);
    // Variance 1/fan-in: D inputs to Wq, Wk, Wv; H·dh inputs to Wo.
    const float projection_bound = uniform_bound_for_variance(1.0 / static_cast<double>(config.model_dim));
    const float output_bound = uniform_bound_for_variance(
        1.0 / (static_cast<double>(config.q_dim()) * static_cast<double>(config.n_layers)));
    ModelWeights weights;
    weights.layers.resize(config.n_layers);
    for (LayerWeights& layer : weights.layers) {
        if (config.is_latent()) {
            layer.latent = make_latent_weights(config, rng);
            continue;
        }
        layer.wqkv.resize(LayerWeights::wqkv_floats(config));
        layer.wo.resize(LayerWeights::wo_floats(config));
        fill_uniform(rng, layer.wqkv, projection_bound);
        fill_uniform(rng, layer.wo, output_bound);
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
    return make_input_positions(config, seed, 0, config.seq_len);
}

std::vector<float> make_input_positions(const ModelConfig& config, std::uint64_t seed, std::size_t first_pos,
                                        std::size_t n_positions) {
    std::vector<float> inputs(input_bytes_for(config, n_positions) / sizeof(float));
    const std::size_t dim = config.model_dim;
    for (std::size_t b = 0; b < config.n_batch; ++b) {
        // The draws of one stream in (batch row, position, dim) order, whatever is kept of them.
        Rng rng(seed ^ input_stream);
        rng.discard((b * config.seq_len + first_pos) * dim);
        fill_uniform(rng, {inputs.data() + b * n_positions * dim, n_positions * dim}, uniform_bound_for_variance(1.0));
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
    if (cache.values_in_keys()) {
        fill_latent_cache(config, cache, length, rng, stop);
        return;
    }
    const std::size_t head_dim = config.head_dim();
    // A cache of another type gets the values an f32 cache of the same seed holds, converted:
    // drawn a few positions at a time, keys then values, in the order the f32 fill draws them.
    constexpr std::size_t positions_per_draw = 64;
    std::vector<float> keys, values;
    if (cache.dtype() != KvDtype::f32) {
        keys.resize(positions_per_draw * head_dim);
        values.resize(keys.size());
    }
    for (std::size_t layer = 0; layer < config.n_layers; ++layer) {
        // A ring layer keeps only its last capacity positions: fill its slots, whose values
        // are as seeded as the positions they stand for.
        const std::size_t n_slots = std::min(length, cache.capacity(layer));
        for (std::size_t b = 0; b < config.n_batch; ++b) {
            if (stop != nullptr && stop->load(std::memory_order_relaxed)) return;
            for (std::size_t g = 0; g < config.n_kv_heads; ++g) {
                if (cache.dtype() == KvDtype::f32) {
                    fill_uniform(rng, {cache.keys(layer, b, g), n_slots * head_dim}, bound);
                    fill_uniform(rng, {cache.values(layer, b, g), n_slots * head_dim}, bound);
                    continue;
                }
                // The f32 fill draws all of a block's keys before its values: two streams.
                Rng value_rng = rng;
                value_rng.discard(n_slots * head_dim);
                for (std::size_t t0 = 0; t0 < n_slots; t0 += positions_per_draw) {
                    const std::size_t n = std::min(positions_per_draw, n_slots - t0);
                    fill_uniform(rng, {keys.data(), n * head_dim}, bound);
                    fill_uniform(value_rng, {values.data(), n * head_dim}, bound);
                    for (std::size_t t = 0; t < n; ++t) {
                        cache.store(layer, b, g, t0 + t, keys.data() + t * head_dim, values.data() + t * head_dim);
                    }
                }
                rng = value_rng;
            }
        }
    }
    cache.extend_to(length);
}

}  // namespace kvbench
