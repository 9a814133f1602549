// ModelConfig: the shape of one decode step (docs/model.md) and the rules it must obey.
#pragma once

#include "kvbench/engine/kv_dtype.hpp"

#include <cstddef>
#include <stdexcept>
#include <string>

namespace kvbench {

// A configuration that breaks a rule. The message names the CLI option, the
// value and the rule, plus a hint where one helps.
class ConfigError : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

// Largest H·dh validate() accepts, the CLI's largest --dim.
inline constexpr std::size_t max_q_dim = std::size_t{1} << 30;

struct ModelConfig {
    std::size_t n_batch = 1;     // B, --batch
    std::size_t seq_len = 1;     // N, --seq: positions the new token attends to, itself included
    std::size_t model_dim = 64;  // D, --dim
    std::size_t n_heads = 4;     // H, --heads
    std::size_t n_kv_heads = 4;  // G, --kv-heads
    std::size_t n_layers = 1;    // L, --layers
    // dh, --head-dim, when a model sets it apart from D/H (Gemma-7B: D=3072, H=16, dh=256);
    // 0 means dh = D/H. Read it through head_dim().
    std::size_t explicit_head_dim = 0;
    // --kv-dtype: the element type the cached path stores K and V in; weights and activations
    // are f32 whatever it says (docs/model.md, "KV-cache element types").
    KvDtype kv_dtype = KvDtype::f32;

    std::size_t head_dim() const { return explicit_head_dim != 0 ? explicit_head_dim : model_dim / n_heads; }
    // H·dh: the width of q and of the concatenated head outputs, D only when dh = D/H.
    std::size_t q_dim() const { return n_heads * head_dim(); }
    std::size_t kv_dim() const { return n_kv_heads * head_dim(); }
    // Query heads sharing one KV head (llama2.c's kv_mul).
    std::size_t group_size() const { return n_heads / n_kv_heads; }
    // Width of the fused q|k|v projection output.
    std::size_t qkv_dim() const { return q_dim() + 2 * kv_dim(); }

    // The same shape whether dh is explicit or D/H: a row read back from a report, which only
    // states head_dim, equals the point it was measured at.
    bool operator==(const ModelConfig& other) const {
        return n_batch == other.n_batch && seq_len == other.seq_len && model_dim == other.model_dim &&
               n_heads == other.n_heads && n_kv_heads == other.n_kv_heads && n_layers == other.n_layers &&
               head_dim() == other.head_dim() && kv_dtype == other.kv_dtype;
    }
};

// Throws ConfigError on the first broken rule: every field positive, --dim divisible by
// --heads unless --head-dim is given, H·dh at most max_q_dim, --heads divisible by --kv-heads,
// and a --kv-dtype the engine stores.
void validate(const ModelConfig& config);

// "MHA", "MQA" or "GQA-<G>".
std::string grouping_label(std::size_t n_heads, std::size_t n_kv_heads);

// "B=1 N=1024 D=1024 H=16 G=4 L=1": how a point is named in messages; " dh=256" follows H
// when the head dimension is explicit, and " kv=f16" ends it when the cache is not f32.
std::string describe(const ModelConfig& config);

}  // namespace kvbench
