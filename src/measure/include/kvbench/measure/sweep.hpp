// SweepSpec (a list per axis) -> the grid of configurations, in a stable, documented order.
#pragma once

#include "kvbench/engine/config.hpp"
#include "kvbench/engine/kv_dtype.hpp"
#include "kvbench/engine/shared_prefix_length.hpp"
#include "kvbench/measure/seq_dist.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kvbench {

struct SweepSpec {
    std::vector<std::size_t> batch{1};
    std::vector<std::size_t> seq{1024};
    std::vector<std::size_t> dim{1024};
    std::vector<std::size_t> heads{16};
    std::vector<std::size_t> head_dim{0};  // --head-dim; 0: D/H
    std::vector<std::size_t> kv_heads{16};
    std::vector<std::size_t> layers{1};
    std::vector<std::size_t> threads{1};
    std::vector<KvDtypePair> kv_dtypes{KvDtype::f32};  // --kv-dtype: the cached path's element types
    std::vector<std::size_t> kv_blocks{0};  // --kv-block: positions per block of a paged cache; 0 contiguous
    std::vector<BlockKind> blocks{BlockKind::attention};  // --block
    std::vector<std::size_t> ffn_dim{0};                  // --ffn-dim; 0 with the attention block
    std::vector<WeightDtype> weight_dtypes{WeightDtype::f32};  // --weight-dtype
    // What every point shares and no axis sweeps: experts, latent attention, sinks (set by
    // --model, --model-config or their own options). Its axis fields are ignored.
    ModelConfig base;
    // --window W and --window-layers PATTERN, laid over each --layers value by layer_windows_for
    // (engine/config.hpp).
    std::uint32_t window = 0;
    std::string window_layers = "all";
    // A ragged batch in place of --seq (docs/model.md, "Ragged batches"): --seq-lens' pattern
    // repeated over each --batch value, or --seq-dist drawn for each from seq_dist_seed.
    std::vector<std::uint32_t> seq_lens;
    std::optional<SeqDist> seq_dist;
    // --query-tokens: Q tokens per sequence in each cached step, an axis after the contexts.
    std::vector<std::size_t> query_tokens{1};
    // --shared-prefix: the positions every sequence shares, an axis after query_tokens.
    std::vector<SharedPrefixLength> shared_prefixes{SharedPrefixLength{}};
    std::uint64_t seq_dist_seed = 0;
};

struct GridPoint {
    ModelConfig config;
    std::size_t n_threads = 1;
    // The uncached path keeps no cache, so its step is the same whatever config.kv_dtype says:
    // of the points that differ only in kv_dtype, the first times it (as f32, its K and V
    // being f32 activations) and the others leave it out (docs/model.md, "KV-cache element types").
    bool times_uncached = true;
};

struct Grid {
    std::vector<GridPoint> points;
    // One line per combination that breaks a rule: "D=100 H=8: --heads 8 must divide --dim 100 (...)".
    std::vector<std::string> skipped;
};

// Cartesian product with the model shape outermost (dim, heads, head_dim, kv_heads, layers, blocks,
// ffn_dim, weight_dtypes), so points sharing weights are adjacent, then batch, seq, query_tokens,
// shared_prefixes, threads, kv_dtypes and kv_blocks. With seq_lens or seq_dist each batch has one context per sequence, seq its longest
// (and a batch whose contexts are all equal is the uniform batch at that N). A point the engine cannot measure yet (require_measurable) is an error for the whole run. Invalid combinations are skipped
// (each shape named once in Grid::skipped). Throws ConfigError if no point is left.
Grid expand(const SweepSpec& spec);

}  // namespace kvbench
