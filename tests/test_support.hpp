// Helpers shared by the engine tests: a model in one struct, seeded vectors, divisors.
#pragma once

#include "kvbench/engine/config.hpp"
#include "kvbench/engine/linear.hpp"
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

// y = x · W^T + beta · y0 by the naive twin (linear_naive), for comparing with a kernel's output.
inline std::vector<float> expected_product(const std::vector<float>& x, std::size_t n_rows, std::size_t in_dim,
                                           const std::vector<float>& w, std::size_t out_dim, float beta,
                                           const std::vector<float>& y0) {
    std::vector<float> y(n_rows * out_dim);
    linear_naive(x.data(), n_rows, in_dim, w.data(), out_dim, 0.0f, y.data());
    if (beta != 0.0f) {
        for (std::size_t i = 0; i < y.size(); ++i) y[i] += y0[i];
    }
    return y;
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
