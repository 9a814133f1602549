// Seeded weights of every layer and seeded input tokens.
#pragma once

#include "kvbench/engine/config.hpp"
#include "kvbench/engine/kv_cache.hpp"
#include "kvbench/engine/latent_weights.hpp"
#include "kvbench/engine/page_aligned.hpp"

#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

namespace kvbench {

// docs/model.md writes q = x·Wq with Wq (D×H·dh). We store each W transposed, (out, in) row-major
// as llama2.c does, so one output is a contiguous dot product and a projection of B rows
// is x (B, in) · W^T: every weight row is streamed once for all B rows.
struct LayerWeights {
    // (qkv_dim, model_dim): rows [0, q_dim) are Wq^T, [q_dim, q_dim + kv_dim) Wk^T,
    // [q_dim + kv_dim, qkv_dim) Wv^T.
    // Fused so the three projections of a step are one matrix product.
    PageAlignedVector<float> wqkv;
    PageAlignedVector<float> wo;  // (model_dim, q_dim): Wo^T
    // A latent attention layer's matrices (MLA), in place of wqkv and wo, which it leaves empty.
    LatentWeights latent;
    // (n_heads) learned sink logits, one per query head, with --sinks (docs/model.md,
    // "Attention sinks"); empty without.
    std::vector<float> sinks;
    // The sinks of this layer for the attention kernels: null when it has none.
    const float* sink_logits() const { return sinks.empty() ? nullptr : sinks.data(); }

    static std::size_t wqkv_floats(const ModelConfig& config);  // qkv_dim · model_dim
    static std::size_t wo_floats(const ModelConfig& config);    // model_dim · q_dim
};

struct ModelWeights {
    std::vector<LayerWeights> layers;  // n_layers entries
    std::size_t bytes() const;
    // bytes() of make_weights(config, ·), without drawing them. Throws SizeOverflow.
    static std::size_t bytes_for(const ModelConfig& config);
};

// Uniform weights with variance 1/fan-in (1/D, 1/(H·dh) for Wo), so q, k, v and y keep the
// scale of x; Wo is further scaled by 1/sqrt(L) so the residual stream's variance grows to about 2, not 2^L,
// through L layers. Requires: config validated.
ModelWeights make_weights(const ModelConfig& config, std::uint64_t seed);

// Token embeddings for every position: (n_batch, seq_len, model_dim), uniform with variance 1.
std::vector<float> make_inputs(const ModelConfig& config, std::uint64_t seed);
// Positions [first_pos, first_pos + n_positions) of make_inputs(config, seed), as (n_batch,
// n_positions, model_dim) floats, drawn without drawing the others: a cached step's input is
// one position, and the prompt of a long context would not fit.
// Requires: first_pos + n_positions <= config.seq_len.
std::vector<float> make_input_positions(const ModelConfig& config, std::uint64_t seed, std::size_t first_pos,
                                        std::size_t n_positions);

// Positions [first_pos, first_pos + n_positions) of every sequence of a (n_batch, seq_len, dim)
// tensor, as (n_batch, n_positions, dim) floats: a step's rows out of a whole-prompt tensor.
// Requires: tensor.size() == n_batch · seq_len · dim, first_pos + n_positions <= seq_len.
std::vector<float> gather_positions(std::span<const float> tensor, std::size_t n_batch, std::size_t seq_len,
                                    std::size_t dim, std::size_t first_pos, std::size_t n_positions);
// Bytes of n_positions positions of input (or output) of every sequence: (n_batch, n_positions,
// model_dim) floats. Throws SizeOverflow.
std::size_t input_bytes_for(const ModelConfig& config, std::size_t n_positions);

// Seeded keys and values of the scale real ones have (variance 1) at positions [0, length)
// of every layer, batch row and KV head; the cache's length becomes `length`. For runs
// that only time the cached step, whose speed does not depend on the values.
// `stop`, when given, is read before each (layer, batch row): once it is set the fill returns
// with the cache at length 0.
// Requires: length <= cache.max_seq_len(); cache built for config.
void fill_cache_seeded(const ModelConfig& config, KvCache& cache, std::size_t length, std::uint64_t seed,
                       const std::atomic<bool>* stop = nullptr);

}  // namespace kvbench
