// ModelConfig: the shape of one decode step (docs/model.md) and the rules it must obey.
#pragma once

#include "kvbench/engine/kv_dtype.hpp"
#include "kvbench/engine/weight_dtype.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace kvbench {

// A configuration that breaks a rule. The message names the CLI option, the
// value and the rule, plus a hint where one helps.
class ConfigError : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

// Largest --kv-block validate() accepts: a block is a unit of allocation, and a block of more
// positions than any context here is the contiguous layout in all but name.
inline constexpr std::size_t max_kv_block = 65536;

// Largest H·dh validate() accepts, the CLI's largest --dim.
inline constexpr std::size_t max_q_dim = std::size_t{1} << 30;
// Most layers, experts and the widest MLP validate() accepts: far past any model, they keep
// every count of docs/counting.md within 64 bits and guard against typos (a config.json's
// num_hidden_layers of 99999999999 would otherwise be a loop of that many layers).
inline constexpr std::size_t max_layers = std::size_t{1} << 16;
inline constexpr std::size_t max_experts = std::size_t{1} << 16;
inline constexpr std::size_t max_ffn_dim = std::size_t{1} << 20;

// What one layer is (docs/model.md): the attention block (docs/model.md#attention-block) alone, or the whole
// pre-norm decoder layer real models run (RMSNorm, RoPE, attention, RMSNorm, SwiGLU MLP).
enum class BlockKind { attention, full };

// A mixture of experts in place of the dense MLP of a full layer (docs/model.md, "The full
// layer"; its counts docs/counting.md, "Mixtures of experts"). n_experts == 0: the layer's MLP is dense, of width ffn_dim.
struct MoeShape {
    std::size_t n_experts = 0;       // E routed experts, --experts
    std::size_t n_active = 0;        // K experts each token is routed to, --experts-active
    std::size_t n_shared = 0;        // S experts every token runs, --shared-experts
    std::size_t expert_dim = 0;      // F_e, each expert's SwiGLU width, --expert-dim
    std::size_t n_dense_layers = 0;  // the first layers keep a dense MLP of ffn_dim (DeepSeek)

    bool operator==(const MoeShape&) const = default;
};

// Multi-head latent attention (DeepSeek-V2/V3; docs/model.md, "Latent attention"): each layer
// caches one latent of kv_lora_rank values and one shared RoPE key of rope_dim values per
// position. kv_lora_rank == 0: the layer's attention is the multi-head kind of docs/model.md#attention-block.
struct MlaShape {
    std::size_t kv_lora_rank = 0;  // r, --kv-lora-rank
    std::size_t rope_dim = 0;      // d_r, --rope-dim (qk_rope_head_dim)
    std::size_t nope_dim = 0;      // d_n, --nope-dim (qk_nope_head_dim)
    std::size_t v_head_dim = 0;    // d_v, --v-head-dim
    std::size_t q_lora_rank = 0;   // --q-lora-rank; 0: q projected from x directly

    bool operator==(const MlaShape&) const = default;
};

// RoPE's base where a model does not name one: Hugging Face's LlamaConfig default.
inline constexpr double default_rope_theta = 10000.0;

struct ModelConfig {
    std::size_t n_batch = 1;     // B, --batch
    std::size_t seq_len = 1;     // N, --seq: positions the new token attends to, itself included
    // A ragged batch (docs/model.md, "Ragged batches"): sequence b's own context N_b, n_batch
    // values whose largest is seq_len, --seq-lens or --seq-dist. Empty: every sequence at
    // seq_len. Read it through seq_len_of().
    std::vector<std::uint32_t> seq_lens;
    // Q, --query-tokens: tokens each sequence adds in one cached step, causal among themselves
    // (docs/model.md, "Multi-token queries"); the newest is at position N - 1, the first at N - Q.
    std::size_t n_query_tokens = 1;
    // P, --shared-prefix: the batch's sequences share their first P positions, a system prompt
    // (docs/model.md, "Shared prefixes"): the cache keeps one copy of them and the cached step
    // reads it once for all sequences. 0: nothing shared. Requires P <= N - Q.
    std::size_t shared_prefix = 0;
    std::size_t model_dim = 64;  // D, --dim
    std::size_t n_heads = 4;     // H, --heads
    std::size_t n_kv_heads = 4;  // G, --kv-heads
    std::size_t n_layers = 1;    // L, --layers
    // dh, --head-dim, when a model sets it apart from D/H (Gemma-7B: D=3072, H=16, dh=256);
    // 0 means dh = D/H. Read it through head_dim().
    std::size_t explicit_head_dim = 0;
    // --kv-dtype: the element type the cached path stores K and V in; activations are f32
    // whatever it says (docs/model.md, "KV-cache element types").
    KvDtype kv_dtype = KvDtype::f32;
    // --kv-dtype K/V: the values' type where it differs from the keys' (kv_dtype then the keys'
    // alone); empty, values as keys. Read both through key_dtype() and value_dtype().
    std::optional<KvDtype> v_dtype;
    // --kv-block P: the cached path's K and V in blocks of P positions reached through a block
    // table, the blocks placed out of order by a seeded allocator (docs/model.md, "Paged caches");
    // 0, one contiguous array per KV head.
    std::size_t kv_block = 0;
    BlockKind block = BlockKind::attention;  // --block
    std::size_t ffn_dim = 0;                 // F, --ffn-dim: the dense MLP's width (full block)
    WeightDtype weight_dtype = WeightDtype::f32;  // --weight-dtype, every weight matrix's element type
    MoeShape moe;                            // experts in place of the dense MLP (full block)
    MlaShape mla;                            // latent attention on every layer when kv_lora_rank > 0
    // Per layer: 0 for global attention, W for a sliding window of the last W positions (the
    // layer's cache a ring of min(N, W)). Empty: every layer global. --window, --window-layers.
    std::vector<std::uint32_t> layer_windows;
    bool attention_sinks = false;            // --sinks: a learned sink logit per query head (GPT-OSS)
    // RoPE's base (a full block's rotary embedding, docs/model.md): the model's (a preset's or
    // --model-config's rope_theta), else default_rope_theta. It changes no count, so operator== leaves it out, as a
    // report's rows, which do not state it, must still equal the point they were measured at.
    double rope_theta = default_rope_theta;

    KvDtype key_dtype() const { return kv_dtype; }
    KvDtype value_dtype() const { return v_dtype.value_or(kv_dtype); }
    // Keys or values in a type other than f32.
    bool has_reduced_cache() const { return key_dtype() != KvDtype::f32 || value_dtype() != KvDtype::f32; }
    // Both of the cache's types at once, as an f32 reference copy of a point sets them.
    void set_kv_dtypes(KvDtype keys, KvDtype values) {
        kv_dtype = keys;
        v_dtype = keys == values ? std::nullopt : std::optional<KvDtype>(values);
    }

    std::size_t head_dim() const { return explicit_head_dim != 0 ? explicit_head_dim : model_dim / n_heads; }
    // H·dh: the width of q and of the concatenated head outputs, D only when dh = D/H.
    std::size_t q_dim() const { return n_heads * head_dim(); }
    std::size_t kv_dim() const { return n_kv_heads * head_dim(); }
    // Query heads sharing one KV head (llama2.c's kv_mul).
    std::size_t group_size() const { return n_heads / n_kv_heads; }
    // Width of the fused q|k|v projection output.
    std::size_t qkv_dim() const { return q_dim() + 2 * kv_dim(); }
    bool is_latent() const { return mla.kv_lora_rank != 0; }
    bool is_ragged() const { return !seq_lens.empty(); }
    bool has_shared_prefix() const { return shared_prefix != 0; }
    bool is_paged() const { return kv_block != 0; }
    // N_b: sequence b's context at this step. Requires: b < n_batch.
    std::size_t seq_len_of(std::size_t b) const { return seq_lens.empty() ? seq_len : seq_lens[b]; }
    // min_b N_b: the shortest sequence's context, N in a uniform batch.
    std::size_t shortest_seq_len() const {
        return seq_lens.empty() ? seq_len : *std::min_element(seq_lens.begin(), seq_lens.end());
    }
    // N - N_b: how many positions sequence b is behind the longest; 0 in a uniform batch.
    std::size_t seq_lag_of(std::size_t b) const { return seq_len - seq_len_of(b); }
    // Σ_b N_b, the rows of an uncached forward (B·N in a uniform batch).
    std::size_t total_tokens() const {
        std::size_t total = 0;
        for (std::size_t b = 0; b < n_batch; ++b) total += seq_len_of(b);
        return total;
    }
    // Σ_{b' < b} N_b': sequence b's first row in an uncached forward's packed rows (b·N uniform).
    std::size_t first_token(std::size_t b) const {
        if (seq_lens.empty()) return b * seq_len;
        std::size_t first = 0;
        for (std::size_t i = 0; i < b; ++i) first += seq_lens[i];
        return first;
    }
    bool has_experts() const { return moe.n_experts != 0; }
    // 0 (global) or the layer's window. Requires: layer < n_layers.
    std::size_t window_of(std::size_t layer) const { return layer_windows.empty() ? 0 : layer_windows[layer]; }
    // Positions `layer` keeps once for every sequence: the shared prefix P on a global layer, 0
    // on a window layer, whose ring keeps each sequence's own last positions (docs/model.md,
    // "Shared prefixes").
    std::size_t shared_prefix_of(std::size_t layer) const { return window_of(layer) == 0 ? shared_prefix : 0; }
    // Positions a new token of `layer` attends to at context n, itself included: min(n, W).
    std::size_t attended_positions(std::size_t layer, std::size_t n) const {
        const std::size_t window = window_of(layer);
        return window != 0 && window < n ? window : n;
    }
    // Positions `layer` caches at context n, its ring's slots: min(n, W + Q - 1) on a window
    // layer, so that every one of a step's Q tokens finds its own W positions and no token's
    // write overwrites one an earlier token of the step reads (docs/model.md, "Multi-token
    // queries"); n on a global layer. With Q = 1 it is attended_positions.
    std::size_t ring_positions(std::size_t layer, std::size_t n) const {
        const std::size_t window = window_of(layer);
        if (window == 0) return n;
        const std::size_t ring = window + n_query_tokens - 1;
        return ring < n ? ring : n;
    }

    // The same shape whether dh is explicit or D/H: a row read back from a report, which only
    // states head_dim, equals the point it was measured at.
    bool operator==(const ModelConfig& other) const {
        return n_batch == other.n_batch && seq_len == other.seq_len && seq_lens == other.seq_lens &&
               n_query_tokens == other.n_query_tokens && shared_prefix == other.shared_prefix &&
               model_dim == other.model_dim &&
               n_heads == other.n_heads && n_kv_heads == other.n_kv_heads && n_layers == other.n_layers &&
               head_dim() == other.head_dim() && kv_dtype == other.kv_dtype &&
               value_dtype() == other.value_dtype() && kv_block == other.kv_block && block == other.block &&
               ffn_dim == other.ffn_dim && weight_dtype == other.weight_dtype && moe == other.moe &&
               mla == other.mla && layer_windows == other.layer_windows && attention_sinks == other.attention_sinks;
    }
};

// Throws ConfigError on the first broken rule: every field positive, --dim divisible by
// --heads unless --head-dim is given, H·dh at most max_q_dim, --heads divisible by --kv-heads,
// a --kv-dtype the engine stores, an MLP and experts only in a full block and shaped whole, one
// window per layer, a latent attention with every width given, a ragged batch of one
// context per sequence whose largest is seq_len, a shared prefix of at most N - Q positions in a
// uniform batch of global multi-head (not latent) attention, and a --kv-block of at most
// max_kv_block positions on a multi-head cache.
void validate(const ModelConfig& config);

// One window per layer: `pattern` ("all", or a unit of 'L' local and 'G' global letters,
// repeated and cut at n_layers) with W on its local layers; empty when window is 0.
// Throws ConfigError naming --window-layers for another letter or an empty pattern.
std::vector<std::uint32_t> layer_windows_for(std::uint32_t window, const std::string& pattern, std::size_t n_layers);

// The --window-layers spelling of a config's windows: "all" when every layer has the same
// window, else the shortest unit of L (local) and G (global) that, repeated and cut at the last
// layer, gives the layers ("LG"; "LLLLLG" for Gemma 3's 62 layers), else one letter per layer.
// Empty when no layer has a window.
std::string window_pattern(const ModelConfig& config);

// "MHA", "MQA" or "GQA-<G>".
std::string grouping_label(std::size_t n_heads, std::size_t n_kv_heads);
// A config's grouping: "MLA" for latent attention, else grouping_label of its heads.
std::string grouping_name(const ModelConfig& config);

// "B=1 N=1024 D=1024 H=16 G=4 L=1": how a point is named in messages; " dh=256" follows H
// when the head dimension is explicit, and what differs from the attention block of f32
// weights and cache follows L: " ragged=200..30000" (a ragged batch's shortest and longest
// context; N is the longest), " Q=4" (query tokens), " P=2048" (a shared prefix), " full F=14336", " E=8/2 S=0 Fe=14336", " mla r=512 dr=64",
// " W=4096:LG" (the window and its layer pattern), " sinks", " w=bf16", " kv=f16", " kv-block=16".
std::string describe(const ModelConfig& config);

// The same batch when its longest sequence holds seq_len positions: every sequence of a ragged
// batch as many positions behind it as in `config`, as when all of them generate one token per
// step. Throws std::invalid_argument when a sequence would hold no position.
ModelConfig with_longest_context(const ModelConfig& config, std::size_t seq_len);

// The seq_lens column of a ragged batch: its contexts joined by ' ' ("200 30000 512"); empty
// for a uniform batch. parse_seq_lens reads it back; throws ConfigError on anything else.
std::string format_seq_lens(const std::vector<std::uint32_t>& seq_lens);
std::vector<std::uint32_t> parse_seq_lens(const std::string& text);

}  // namespace kvbench
