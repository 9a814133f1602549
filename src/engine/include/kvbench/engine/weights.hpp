// Seeded weights of every layer and seeded input tokens.
#pragma once

#include "kvbench/engine/config.hpp"
#include "kvbench/engine/kv_cache.hpp"
#include "kvbench/engine/latent_weights.hpp"
#include "kvbench/engine/page_aligned.hpp"
#include "kvbench/engine/weight_matrix.hpp"

#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

namespace kvbench {

// docs/model.md writes q = x·Wq with Wq (D×H·dh). We store each W transposed, (out, in) row-major
// as llama2.c does, so one output is a contiguous dot product and a projection of B rows
// is x (B, in) · W^T: every weight row is streamed once for all B rows. Every matrix is stored in
// config.weight_dtype; the norms' gains stay f32 (docs/counting.md).

// A SwiGLU MLP of width F (docs/model.md): (silu(u·Wg) ⊙ (u·Wu))·Wd.
struct MlpWeights {
    // (2F, model_dim): rows [0, F) Wg^T, [F, 2F) Wu^T, fused so both are one matrix product.
    WeightMatrix gate_up;
    WeightMatrix down;  // (model_dim, F): Wd^T
    std::size_t width() const { return down.n_in(); }  // F
    std::size_t bytes() const { return gate_up.bytes() + down.bytes(); }
};

struct LayerWeights {
    // (qkv_dim, model_dim): rows [0, q_dim) are Wq^T, [q_dim, q_dim + kv_dim) Wk^T,
    // [q_dim + kv_dim, qkv_dim) Wv^T.
    // Fused so the three projections of a step are one matrix product.
    WeightMatrix wqkv;
    WeightMatrix wo;  // (model_dim, q_dim): Wo^T
    // A latent attention layer's matrices (MLA), in place of wqkv and wo, which it leaves empty.
    LatentWeights latent;
    // (n_heads) learned sink logits, one per query head, with --sinks (docs/model.md,
    // "Attention sinks"); empty without.
    std::vector<float> sinks;
    // The sinks of this layer for the attention kernels: null when it has none.
    const float* sink_logits() const { return sinks.empty() ? nullptr : sinks.data(); }

    // A full block's parts (empty in an attention block).
    std::vector<float> attention_norm;  // (model_dim) floats: the RMSNorm gains before attention
    std::vector<float> mlp_norm;        // (model_dim) floats: the RMSNorm gains before the MLP
    MlpWeights mlp;                     // the dense MLP (empty in a layer of experts)
    WeightMatrix router;                // (n_experts, model_dim): a layer of experts' router
    std::vector<MlpWeights> experts;    // n_experts routed experts, each expert_dim wide
    MlpWeights shared_experts;          // the S shared experts as one MLP S·expert_dim wide; empty if S = 0

    bool has_experts() const { return !experts.empty(); }
    std::size_t bytes() const;
    static std::size_t wqkv_floats(const ModelConfig& config);  // qkv_dim · model_dim
    static std::size_t wo_floats(const ModelConfig& config);    // model_dim · q_dim
};

// Whether layer `layer` of config runs experts (a full block with --experts, past its dense layers).
bool layer_has_experts(const ModelConfig& config, std::size_t layer);

struct ModelWeights {
    std::vector<LayerWeights> layers;  // n_layers entries
    std::size_t bytes() const;
    // bytes() of make_weights(config, ·), without drawing them. Throws SizeOverflow.
    static std::size_t bytes_for(const ModelConfig& config);
};

// Uniform weights with variance 1/fan-in (1/D, 1/(H·dh) for Wo), so q, k, v and y keep the
// scale of x; Wo is further scaled by 1/sqrt(L) so the residual stream's variance grows to about 2, not 2^L,
// through L layers. A full block's MLPs take 1/D for Wg, Wu and the router and 1/(F·L) for Wd,
// so each adds a bounded share to the stream too, and its norm gains are drawn in [0.9, 1.1)
// (a kernel that ignored them would show). Every matrix is drawn in f32 and stored as
// config.weight_dtype: the same seed gives the same model in every type.
// Requires: config validated.
ModelWeights make_weights(const ModelConfig& config, std::uint64_t seed);

// Token embeddings for every position: (n_batch, seq_len, model_dim), uniform with variance 1;
// with a shared prefix, every sequence's first P rows are sequence 0's (docs/model.md).
// A ragged batch packs its sequences: (total_tokens, model_dim), sequence b's N_b rows from
// row first_token(b), each the row a uniform batch of N has at that position.
std::vector<float> make_inputs(const ModelConfig& config, std::uint64_t seed);
// The last Q = n_query_tokens positions of every sequence, N_b - Q .. N_b - 1, as token-major
// (Q, n_batch, model_dim) floats: the input of the cached step at context N (of a uniform
// batch and Q = 1, make_input_positions(config, seed, N - 1, 1)).
std::vector<float> make_step_inputs(const ModelConfig& config, std::uint64_t seed);
// The rows of those positions out of an uncached forward's (total_tokens, model_dim) tensor,
// as (Q, n_batch, model_dim) floats: what the cached step's output equals. Requires: tensor of
// that size.
std::vector<float> gather_newest(const ModelConfig& config, std::span<const float> tensor);
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
