// Helpers shared by the engine tests: a model in one struct, seeded vectors, divisors.
#pragma once

#include "kvbench/engine/config.hpp"
#include "kvbench/engine/rng.hpp"
#include "kvbench/engine/weights.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace kvbench::test {

// Threads of the engine tests: two, so that every parallel split is taken on any machine.
inline constexpr std::size_t test_threads = 2;
// The cached step against the uncached forward on f32 caches (docs/model.md).
inline constexpr double spec_tolerance = 1e-4;

// Seeded uniform values in [-scale, scale).
inline std::vector<float> random_vector(std::size_t n, std::uint64_t seed, float scale = 1.0f) {
    Rng rng(seed);
    std::vector<float> v(n);
    fill_uniform(rng, v, scale);
    return v;
}

inline ModelConfig make_config(std::size_t n_batch, std::size_t seq_len, std::size_t model_dim,
                               std::size_t n_heads, std::size_t n_kv_heads, std::size_t n_layers) {
    ModelConfig config;
    config.n_batch = n_batch;
    config.seq_len = seq_len;
    config.model_dim = model_dim;
    config.n_heads = n_heads;
    config.n_kv_heads = n_kv_heads;
    config.n_layers = n_layers;
    return config;
}

// make_config with an explicit head dimension (--head-dim), which need not be D/H.
inline ModelConfig make_config(std::size_t n_batch, std::size_t seq_len, std::size_t model_dim,
                               std::size_t n_heads, std::size_t n_kv_heads, std::size_t n_layers,
                               std::size_t head_dim) {
    ModelConfig config = make_config(n_batch, seq_len, model_dim, n_heads, n_kv_heads, n_layers);
    config.explicit_head_dim = head_dim;
    return config;
}

// A ragged batch of these contexts (docs/model.md, "Ragged batches"): B and the longest N
// from them, not validated (a caller may add a prefix, blocks or windows first).
inline ModelConfig ragged_batch(ModelConfig config, std::vector<std::uint32_t> seq_lens) {
    config.n_batch = seq_lens.size();
    config.seq_len = *std::max_element(seq_lens.begin(), seq_lens.end());
    config.seq_lens = std::move(seq_lens);
    return config;
}

// Rows [first, first + count) of every sequence of a (n_batch, seq_len, dim) tensor.
using kvbench::gather_positions;

inline std::vector<std::size_t> divisors(std::size_t n) {
    std::vector<std::size_t> result;
    for (std::size_t d = 1; d <= n; ++d) {
        if (n % d == 0) result.push_back(d);
    }
    return result;
}

}  // namespace kvbench::test
