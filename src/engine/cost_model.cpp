// The counting formulas of docs/counting.md, written once: every count is a sum over layers,
// each layer attending to n_l = attended_positions(l, N) positions, and in a ragged batch a sum
// over sequences of their own N_b. Requires a validated config.
#include "kvbench/engine/cost_model.hpp"

#include "kvbench/engine/config.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace kvbench {

namespace {

std::uint64_t u64(std::size_t v) { return static_cast<std::uint64_t>(v); }

// The query width of an MLA head: its position-free part and its RoPE part.
std::uint64_t mla_qk_dim(const MlaShape& mla) { return u64(mla.nope_dim + mla.rope_dim); }

bool has_experts_at(const ModelConfig& c, std::size_t layer) {
    return c.block == BlockKind::full && c.has_experts() && layer >= c.moe.n_dense_layers;
}

std::uint64_t moe_layer_count(const ModelConfig& c) {
    if (c.block != BlockKind::full || !c.has_experts()) return 0;
    return u64(c.n_layers - c.moe.n_dense_layers);
}

// Bytes of one (n_out, n_in) weight matrix of the config's type.
std::uint64_t matrix_bytes(const ModelConfig& c, std::uint64_t n_out, std::uint64_t n_in) {
    return weight_matrix_bytes(c.weight_dtype, n_out, n_in);
}

// One SwiGLU MLP of width f: Wg and Wu (f outputs each), Wd (D outputs).
std::uint64_t swiglu_bytes(const ModelConfig& c, std::uint64_t f) {
    const std::uint64_t d = u64(c.model_dim);
    return 2 * matrix_bytes(c, f, d) + matrix_bytes(c, d, f);
}

std::uint64_t attention_weight_bytes(const ModelConfig& c) {
    const std::uint64_t d = u64(c.model_dim);
    if (!c.is_latent()) {
        return matrix_bytes(c, u64(c.q_dim()), d) + 2 * matrix_bytes(c, u64(c.kv_dim()), d) +
               matrix_bytes(c, d, u64(c.q_dim()));
    }
    const MlaShape& m = c.mla;
    const std::uint64_t h = u64(c.n_heads);
    const std::uint64_t r = u64(m.kv_lora_rank);
    const std::uint64_t q = m.q_lora_rank != 0
                                ? matrix_bytes(c, u64(m.q_lora_rank), d) + matrix_bytes(c, h * mla_qk_dim(m), u64(m.q_lora_rank))
                                : matrix_bytes(c, h * mla_qk_dim(m), d);
    // W_uk as stored, head by head (r, d_n): its int8 scales are H·r, one per stored row.
    return q + matrix_bytes(c, r + u64(m.rope_dim), d) + matrix_bytes(c, h * r, u64(m.nope_dim)) +
           matrix_bytes(c, h * u64(m.v_head_dim), r) + matrix_bytes(c, d, h * u64(m.v_head_dim));
}

// Weight bytes of `layer` apart from its routed experts: attention, norms, dense MLP or router
// and shared experts.
std::uint64_t fixed_weight_bytes_of_layer(const ModelConfig& c, std::size_t layer) {
    std::uint64_t bytes = attention_weight_bytes(c);
    // Sink logits: one f32 per query head, read by every step's softmax.
    if (c.attention_sinks) bytes += u64(c.n_heads) * sink_elem_bytes;
    if (c.block != BlockKind::full) return bytes;
    bytes += 2 * u64(c.model_dim) * norm_elem_bytes;
    // Latent attention's own norms, on the q latent and on c (DeepSeek's q_a_ and kv_a_layernorm).
    if (c.is_latent()) bytes += u64(c.mla.q_lora_rank + c.mla.kv_lora_rank) * norm_elem_bytes;
    if (!has_experts_at(c, layer)) return bytes + swiglu_bytes(c, u64(c.ffn_dim));
    // The S shared experts are one MLP of width S·F_e (as stored): with int8, 2·S·F_e + D scales.
    bytes += matrix_bytes(c, u64(c.moe.n_experts), u64(c.model_dim));
    return c.moe.n_shared == 0 ? bytes : bytes + swiglu_bytes(c, u64(c.moe.n_shared) * u64(c.moe.expert_dim));
}

// Σ_{i=1..N} min(i, W): the (query, key) pairs of a causal forward of N tokens through a window
// of W (0: none), the triangle N·(N+1)/2 when no window binds.
std::uint64_t causal_pairs(std::uint64_t n, std::uint64_t window) {
    if (window == 0 || window >= n) return n * (n + 1) / 2;
    return window * (window + 1) / 2 + (n - window) * window;
}

// FLOPs per (query, key) pair of one layer's attention: scores and the weighted values.
std::uint64_t flops_per_pair(const ModelConfig& c, DecodePath path) {
    const std::uint64_t h = u64(c.n_heads);
    if (!c.is_latent()) return 4 * h * u64(c.head_dim());
    const MlaShape& m = c.mla;
    // Cached (absorbed): scores over the latent and the RoPE key, values over the latent.
    // Uncached (expanded): scores over d_n + d_r, values over d_v.
    if (path == DecodePath::cached) return 2 * h * (2 * u64(m.kv_lora_rank) + u64(m.rope_dim));
    return 2 * h * (mla_qk_dim(m) + u64(m.v_head_dim));
}

// Σ_b f(N_b): B·f(N) for a uniform batch, one term per sequence for a ragged one.
template <typename PerSequence>
std::uint64_t sum_over_sequences(const ModelConfig& c, PerSequence per_sequence) {
    if (!c.is_ragged()) return u64(c.n_batch) * per_sequence(u64(c.seq_len));
    std::uint64_t total = 0;
    for (const std::uint32_t n : c.seq_lens) total += per_sequence(u64(n));
    return total;
}

}  // namespace

const char* path_name(DecodePath path) {
    return path == DecodePath::cached ? "cached" : "uncached";
}

std::uint64_t weights_per_layer(const ModelConfig& c) {
    const std::uint64_t d = u64(c.model_dim);
    if (!c.is_latent()) return 2 * d * u64(c.q_dim()) + 2 * d * u64(c.kv_dim());  // Wq, Wo; Wk, Wv
    const MlaShape& m = c.mla;
    const std::uint64_t h = u64(c.n_heads);
    const std::uint64_t r = u64(m.kv_lora_rank);
    const std::uint64_t q = m.q_lora_rank != 0 ? u64(m.q_lora_rank) * (d + h * mla_qk_dim(m)) : d * h * mla_qk_dim(m);
    return q + d * (r + u64(m.rope_dim)) + h * r * (u64(m.nope_dim) + u64(m.v_head_dim)) + h * u64(m.v_head_dim) * d;
}

std::uint64_t mlp_weights_of_layer(const ModelConfig& c, std::size_t layer) {
    if (c.block != BlockKind::full) return 0;
    const std::uint64_t d = u64(c.model_dim);
    if (!has_experts_at(c, layer)) return 3 * d * u64(c.ffn_dim);
    const MoeShape& moe = c.moe;
    return d * u64(moe.n_experts) + u64(moe.n_experts + moe.n_shared) * 3 * d * u64(moe.expert_dim);
}

std::uint64_t most_experts_read(const ModelConfig& c, DecodePath path) {
    const std::uint64_t tokens =
        path == DecodePath::cached ? u64(c.n_query_tokens) * u64(c.n_batch) : u64(c.total_tokens());
    return moe_layer_count(c) * std::min(u64(c.moe.n_experts), tokens * u64(c.moe.n_active));
}

std::uint64_t kv_head_position_bytes(const ModelConfig& c) {
    if (c.is_latent()) return kv_vector_bytes(c.kv_dtype, u64(c.mla.kv_lora_rank + c.mla.rope_dim));
    return kv_vector_bytes(c.key_dtype(), u64(c.head_dim())) + kv_vector_bytes(c.value_dtype(), u64(c.head_dim()));
}

std::uint64_t kv_bytes_per_position(const ModelConfig& c) {
    const std::uint64_t heads = c.is_latent() ? 1 : u64(c.n_kv_heads);
    return u64(c.n_layers) * heads * kv_head_position_bytes(c);
}

std::uint64_t step_flops(const ModelConfig& c, DecodePath path) {
    return sum_over_sequences(c, [&c, path](std::uint64_t n) { return sequence_flops(c, path, n); });
}

std::uint64_t sequence_flops(const ModelConfig& c, DecodePath path, std::uint64_t n) {
    const std::uint64_t pair = flops_per_pair(c, path);
    const std::uint64_t projections = weights_per_layer(c);
    const std::uint64_t q = u64(c.n_query_tokens);
    std::uint64_t per_sequence = 0;
    for (std::size_t layer = 0; layer < c.n_layers; ++layer) {
        // Experts: the router and the K routed plus S shared experts each token runs.
        std::uint64_t per_token = projections;
        if (has_experts_at(c, layer)) {
            const MoeShape& moe = c.moe;
            per_token += u64(c.model_dim) * (u64(moe.n_experts) + u64(moe.n_active + moe.n_shared) * 3 * u64(moe.expert_dim));
        } else {
            per_token += mlp_weights_of_layer(c, layer);
        }
        const std::uint64_t window = u64(c.window_of(layer));
        // A cached step's Q tokens see N - Q + 1, ..., N positions (docs/counting.md).
        std::uint64_t cached_pairs = 0;
        for (std::uint64_t i = n - q + 1; i <= n; ++i) cached_pairs += u64(c.attended_positions(layer, static_cast<std::size_t>(i)));
        per_sequence += path == DecodePath::cached ? 2 * q * per_token + pair * cached_pairs
                                                   : 2 * n * per_token + pair * causal_pairs(n, window);
    }
    return per_sequence;
}

std::uint64_t step_bytes(const ModelConfig& c, DecodePath path, std::optional<std::uint64_t> experts_read) {
    const std::uint64_t tokens = u64(c.total_tokens());  // Σ_b N_b, B·N in a uniform batch
    const std::uint64_t rows =  // activations read and written
        path == DecodePath::cached ? u64(c.n_query_tokens) * u64(c.n_batch) : tokens;
    std::uint64_t bytes = u64(c.n_layers) * 2 * rows * u64(c.model_dim) * activation_elem_bytes;
    for (std::size_t layer = 0; layer < c.n_layers; ++layer) bytes += fixed_weight_bytes_of_layer(c, layer);
    bytes += experts_read.value_or(most_experts_read(c, path)) * swiglu_bytes(c, u64(c.moe.expert_dim));
    // The step reads every cached position once, and a paged cache's block tables once: not the
    // empty slots of its last blocks, which kv_cache_bytes counts (docs/counting.md, "Paged caches").
    const std::uint64_t heads = c.is_latent() ? 1 : u64(c.n_kv_heads);
    if (path == DecodePath::cached) {
        return bytes + cached_positions(c) * heads * kv_head_position_bytes(c) + kv_block_table_bytes(c);
    }
    // The uncached path keeps no cache: its K and V (MLA: expanded per head) are f32
    // activations of all N positions, whatever kv_dtype says.
    const std::uint64_t kv_width = c.is_latent() ? u64(c.n_heads) * (mla_qk_dim(c.mla) + u64(c.mla.v_head_dim))
                                                 : 2 * u64(c.kv_dim());
    return bytes + u64(c.n_layers) * tokens * kv_width * activation_elem_bytes;
}

std::uint64_t cached_positions(const ModelConfig& c) {
    // A shared prefix is cached once per global layer, each sequence's own positions after it
    // (docs/counting.md, "Shared prefixes"). A window layer caches, and a step of Q tokens
    // reads, the union of their windows: W + Q - 1 positions (docs/counting.md, "Multi-token
    // queries"), a prefix's among them.
    std::uint64_t positions = 0;
    for (std::size_t layer = 0; layer < c.n_layers; ++layer) positions += u64(c.shared_prefix_of(layer));
    return positions + sum_over_sequences(c, [&c](std::uint64_t n) {
               std::uint64_t own = 0;
               for (std::size_t layer = 0; layer < c.n_layers; ++layer) {
                   own += u64(c.ring_positions(layer, static_cast<std::size_t>(n)) - c.shared_prefix_of(layer));
               }
               return own;
           });
}

std::uint64_t kv_blocks_per_head(const ModelConfig& c) {
    if (!c.is_paged()) return 0;
    const std::uint64_t block = u64(c.kv_block);
    const auto blocks_of = [block](std::uint64_t positions) { return (positions + block - 1) / block; };
    // A shared prefix's blocks once per global layer, each sequence's own positions in blocks
    // after it.
    std::uint64_t blocks = 0;
    for (std::size_t layer = 0; layer < c.n_layers; ++layer) blocks += blocks_of(u64(c.shared_prefix_of(layer)));
    return blocks + sum_over_sequences(c, [&c, &blocks_of](std::uint64_t n) {
               std::uint64_t own = 0;
               for (std::size_t layer = 0; layer < c.n_layers; ++layer) {
                   own += blocks_of(u64(c.ring_positions(layer, static_cast<std::size_t>(n)) - c.shared_prefix_of(layer)));
               }
               return own;
           });
}

std::uint64_t kv_block_table_bytes(const ModelConfig& c) {
    const std::uint64_t heads = c.is_latent() ? 1 : u64(c.n_kv_heads);
    return kv_blocks_per_head(c) * heads * kv_block_table_entry_bytes;
}

std::uint64_t kv_cache_bytes(const ModelConfig& c) {
    const std::uint64_t heads = c.is_latent() ? 1 : u64(c.n_kv_heads);
    // Paged: whole blocks, the last of each ring partly empty, and the tables that find them.
    const std::uint64_t slots = c.is_paged() ? kv_blocks_per_head(c) * u64(c.kv_block) : cached_positions(c);
    return slots * heads * kv_head_position_bytes(c) + kv_block_table_bytes(c);
}

std::uint64_t kv_cache_bytes_as_mha(const ModelConfig& c) {
    if (!c.is_latent()) return kv_cache_bytes(c) / u64(c.n_kv_heads) * u64(c.n_heads);  // kv_bytes holds a factor G
    const std::uint64_t per_head =
        kv_vector_bytes(c.kv_dtype, mla_qk_dim(c.mla)) + kv_vector_bytes(c.kv_dtype, u64(c.mla.v_head_dim));
    return cached_positions(c) * u64(c.n_heads) * per_head;
}

namespace {

long double count_bound(const ModelConfig& c) {
    using Real = long double;
    const MlaShape& m = c.mla;
    const Real d = static_cast<Real>(c.model_dim);
    const Real widths = d + static_cast<Real>(c.n_heads) * static_cast<Real>(c.head_dim() + m.nope_dim + m.rope_dim + m.v_head_dim) +
                        2 * static_cast<Real>(c.n_kv_heads) * static_cast<Real>(c.head_dim()) +
                        static_cast<Real>(m.kv_lora_rank + m.q_lora_rank + m.rope_dim);
    const Real experts = static_cast<Real>(c.moe.n_experts + c.moe.n_shared + 1);
    const Real mlp = 3 * d * (static_cast<Real>(c.ffn_dim) + experts * static_cast<Real>(c.moe.expert_dim)) +
                     d * static_cast<Real>(c.moe.n_experts);
    const Real per_token = widths * widths + mlp;  // a layer's weight elements
    const Real tokens = static_cast<Real>(c.n_batch) * static_cast<Real>(c.seq_len);  // N bounds every N_b
    const Real layers = static_cast<Real>(c.n_layers);
    const Real flops = layers * (2 * tokens * per_token + 4 * widths * tokens * static_cast<Real>(c.seq_len));
    // f32 weights with a scale per row at most, activations, K and V of every position.
    const Real bytes = layers * (8 * per_token + 16 * tokens * widths);
    return std::max(flops, bytes);
}

constexpr long double two_to_64 = 18446744073709551616.0L;

}  // namespace

bool countable(const ModelConfig& c) { return count_bound(c) < two_to_64; }

void require_countable(const ModelConfig& c) {
    const long double bound = count_bound(c);
    if (bound < two_to_64) return;
    throw ConfigError(fmt::format("B={} N={} D={} L={}: its counts could pass what 64 bits hold (up to {:.1e} FLOPs "
                                  "or bytes a step): lower --seq or --batch",
                                  c.n_batch, c.seq_len, c.model_dim, c.n_layers, static_cast<double>(bound)));
}

ModelConfig uncached_counting_config(const ModelConfig& config) {
    ModelConfig forward = config;
    forward.set_kv_dtypes(KvDtype::f32, KvDtype::f32);
    forward.kv_block = 0;
    forward.shared_prefix = 0;
    return forward;
}

StepCost step_cost(const ModelConfig& config, DecodePath path, std::optional<std::uint64_t> experts_read) {
    return {step_flops(config, path), step_bytes(config, path, experts_read), kv_cache_bytes(config)};
}

std::uint64_t step_weight_bytes(const ModelConfig& c) {
    std::uint64_t bytes = most_experts_read(c, DecodePath::cached) * swiglu_bytes(c, u64(c.moe.expert_dim));
    for (std::size_t layer = 0; layer < c.n_layers; ++layer) bytes += fixed_weight_bytes_of_layer(c, layer);
    return bytes;
}

std::optional<std::uint64_t> kv_weight_crossover(const ModelConfig& config) {
    ModelConfig at = config;
    at.seq_lens.clear();  // the crossover is a uniform batch's context, one token a step
    at.n_query_tokens = 1;
    at.shared_prefix = 0;  // and of sequences that share nothing
    // The weights of that step too: B tokens, not Q·B, reach min(E, B·K) experts.
    const std::uint64_t weights = step_weight_bytes(at);
    const auto kv_at = [&at](std::uint64_t n) {
        at.seq_len = static_cast<std::size_t>(n);
        return kv_cache_bytes(at);
    };
    // The cache grows with N until every window binds: past the largest window only the global
    // layers grow, and with none the cache is capped.
    std::uint64_t high = 1;
    while (kv_at(high) < weights) {
        if (high >= (std::uint64_t{1} << 48)) return std::nullopt;
        const std::uint64_t before = kv_at(high);
        high *= 2;
        if (kv_at(high) == before) return std::nullopt;  // capped: no layer grows past here
    }
    std::uint64_t low = 0;  // kv_at(low) < weights, or low = 0
    while (high - low > 1) {
        const std::uint64_t mid = low + (high - low) / 2;
        (kv_at(mid) < weights ? low : high) = mid;
    }
    return high;
}

}  // namespace kvbench
