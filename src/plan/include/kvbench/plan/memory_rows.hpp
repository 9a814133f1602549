// The rows of `kvbench memory`: one per model, KV dtype, grouping, context and batch, with the
// capacity answers when a budget is given (docs/memory.md).
#pragma once

#include "kvbench/engine/kv_dtype.hpp"
#include "kvbench/engine/shared_prefix_length.hpp"
#include "kvbench/plan/memory_plan.hpp"
#include "kvbench/plan/model_preset.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kvbench {

struct MemoryRequest {
    std::vector<ModelPreset> models;
    std::vector<std::uint64_t> seq;    // contexts N
    std::vector<std::uint64_t> batch;  // batch sizes B
    std::vector<KvDtype> kv_dtypes;
    KvDtype weight_dtype = KvDtype::f16;
    // Unset: each model's own window. Set: this one for every model (nullopt inside: none).
    std::optional<std::optional<std::uint64_t>> window;
    std::uint64_t block_size = 1;
    // Tokens the batch's sequences share (a system prompt), cached once: positions, or a
    // percentage of each N. Requires: each less than every N.
    std::vector<SharedPrefixLength> shared_prefixes{SharedPrefixLength{}};
    std::optional<std::uint64_t> budget_bytes;
    bool twins = true;  // add the MHA and MQA twins of each model (those differing from it)
};

struct MemoryRow {
    std::string model;
    std::string grouping;      // "GQA-8", "MLA"; a twin's reads "MHA" or "MQA"
    bool twin = false;         // a what-if variant, not the published model
    std::uint64_t n_layers = 0;
    std::uint64_t n_heads = 0;
    std::uint64_t n_kv_heads = 0;
    std::uint64_t head_dim = 0;
    KvDtype kv_dtype = KvDtype::f16;
    std::optional<std::uint64_t> window;  // the largest window of any layer
    std::string window_layers;            // "4096" on every layer, "4096:LG" on some; "" none
    std::uint64_t block_size = 1;
    std::uint64_t seq_len = 0;
    std::uint64_t shared_prefix = 0;  // P: tokens every sequence shares, cached once
    std::uint64_t batch = 0;
    std::uint64_t kv_bytes_per_token = 0;
    SequenceBill prefix;               // the shared prefix's one copy (empty without one)
    SequenceBill sequence;             // one sequence's cache, its own past the prefix
    std::uint64_t kv_bytes_total = 0;  // prefix.kv_bytes + batch * sequence.kv_bytes
    KvDtype weight_dtype = KvDtype::f16;
    std::uint64_t n_params = 0;        // 0: unknown (weights not counted)
    std::uint64_t weight_bytes = 0;
    std::optional<std::uint64_t> total_bytes;  // weights + KV; unset when the weights are unknown
    // N*: the context at which the cached step of this batch reads as many KV bytes as weight
    // bytes (kv_weight_crossover, docs/counting.md): its decoder layers at the weight dtype, the
    // embeddings aside. Unset when it cannot be counted (n_star_never false: the MLP is unknown
    // or the weight dtype is one the step has no kernel for) or is never reached (n_star_never).
    std::optional<std::uint64_t> n_star;
    bool n_star_never = false;
    // With a budget and known weights (an answer that left the weights out would flatter):
    std::optional<std::uint64_t> budget_bytes;
    bool fits = false;                        // total_bytes <= budget
    std::optional<std::uint64_t> max_batch;   // at seq_len
    std::optional<std::uint64_t> max_seq;     // at batch; unset with a budget: every length fits
    bool max_seq_unlimited = false;           // the window caps the cache below the budget
};

// The cached step of `model` whose N* the row reports: its full layer at batch B with the given
// cache and weight types. Unset when the model's MLP is unknown (a config without
// intermediate_size, or an MLP of two matrices) or the weight type has no step kernel (fp8, int4).
std::optional<ModelConfig> step_config(const ModelPreset& model, KvDtype kv_dtype, KvDtype weight_dtype,
                                       std::uint64_t batch);

// Order: model, KV dtype, grouping (published, then MHA and MQA twins), context, shared
// prefix, batch.
// A model whose parameter count is unknown (n_params 0) gets no weights+KV total and no
// capacity answers. Requires: non-empty lists, block_size >= 1. Throws SizeOverflow past 2^64
// bytes.
std::vector<MemoryRow> plan_memory(const MemoryRequest& request);

// One line per model whose longest requested context passes the positions it was trained for
// (ModelPreset::max_position_embeddings): the bill stays exact, but is memory, not a context
// the model handles. Empty when every context is within them, or they are unknown.
std::vector<std::string> context_warnings(const MemoryRequest& request);

}  // namespace kvbench
