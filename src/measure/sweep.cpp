// The cartesian product of a SweepSpec, skipping combinations that break the rules of docs/model.md#configuration.
#include "kvbench/measure/sweep.hpp"

#include "kvbench/engine/cost_model.hpp"
#include "kvbench/engine/decoder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

namespace kvbench {

namespace {

// The shape outermost: every value of an axis that sets the weights.
struct Shape {
    std::size_t dim, heads, head_dim, kv_heads, layers;
    BlockKind block;
    std::size_t ffn_dim;
    WeightDtype weight_dtype;
};

template <typename Visit>
void for_each_shape(const SweepSpec& spec, Visit visit) {
    for (std::size_t dim : spec.dim) {
        for (std::size_t heads : spec.heads) {
            for (std::size_t head_dim : spec.head_dim) {
                for (std::size_t kv_heads : spec.kv_heads) {
                    for (std::size_t layers : spec.layers) {
                        for (BlockKind block : spec.blocks) {
                            // The attention block has no MLP: one point, not one per --ffn-dim.
                            const std::vector<std::size_t> no_mlp{0};
                            const std::vector<std::size_t>& widths = block == BlockKind::full ? spec.ffn_dim : no_mlp;
                            for (std::size_t ffn_dim : widths) {
                                for (WeightDtype weight_dtype : spec.weight_dtypes) {
                                    visit(Shape{dim, heads, head_dim, kv_heads, layers, block, ffn_dim, weight_dtype});
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

ModelConfig config_of(const SweepSpec& spec, const Shape& s) {
    ModelConfig shape = spec.base;
    shape.model_dim = s.dim;
    shape.n_heads = s.heads;
    shape.explicit_head_dim = s.head_dim;
    shape.n_kv_heads = s.kv_heads;
    shape.n_layers = s.layers;
    shape.block = s.block;
    // A model's experts replace the full layer's MLP; its attention block has none.
    if (s.block == BlockKind::attention) shape.moe = MoeShape{};
    // A model's first L layers: all of them dense when L is within its dense first layers (DeepSeek-V3's 3).
    shape.moe.n_dense_layers = std::min(shape.moe.n_dense_layers, s.layers);
    shape.ffn_dim = s.ffn_dim;
    shape.weight_dtype = s.weight_dtype;
    shape.layer_windows = layer_windows_for(spec.window, spec.window_layers, s.layers);
    return shape;
}

// The contexts of the points of `batch` sequences: one uniform batch per --seq value, or the
// ragged batch of --seq-lens or --seq-dist; empty seq_lens for a uniform one.
std::vector<std::vector<std::uint32_t>> contexts_for(const SweepSpec& spec, std::size_t batch) {
    std::vector<std::uint32_t> seq_lens;
    if (!spec.seq_lens.empty()) seq_lens = repeat_seq_lens(spec.seq_lens, batch);
    if (spec.seq_dist) seq_lens = draw_seq_lens(*spec.seq_dist, batch, spec.seq_dist_seed);
    if (seq_lens.empty()) {
        std::vector<std::vector<std::uint32_t>> uniform;
        for (const std::size_t seq : spec.seq) uniform.push_back({static_cast<std::uint32_t>(seq)});
        return uniform;
    }
    return {seq_lens};
}

}  // namespace

Grid expand(const SweepSpec& spec) {
    Grid grid;
    for_each_shape(spec, [&](const Shape& s) {
        ModelConfig shape = config_of(spec, s);
        try {
            validate(shape);
        } catch (const ConfigError& error) {
            // A shape breaks its rule whatever the batch and context; say it once.
            if (s.layers == spec.layers.front()) {
                const std::string dh = s.head_dim == 0 ? "" : fmt::format(" dh={}", s.head_dim);
                grid.skipped.push_back(
                    fmt::format("D={} H={}{} G={}: {}", s.dim, s.heads, dh, s.kv_heads, error.what()));
            }
            return;
        }
        require_measurable(shape);
        for (std::size_t batch : spec.batch) {
            for (const std::vector<std::uint32_t>& contexts : contexts_for(spec, batch)) {
                for (const std::size_t query_tokens : spec.query_tokens) {
                    for (const SharedPrefixLength& shared_prefix : spec.shared_prefixes) {
                        for (std::size_t threads : spec.threads) {
                            for (std::size_t i = 0; i < spec.kv_dtypes.size(); ++i) {
                                for (std::size_t j = 0; j < spec.kv_blocks.size(); ++j) {
                                    ModelConfig config = shape;
                                    config.n_batch = batch;
                                    config.n_query_tokens = query_tokens;
                                    config.seq_len = *std::max_element(contexts.begin(), contexts.end());
                                    // One context for all (a --seq value, or a ragged batch that is not) keeps
                                    // the uniform batch's path.
                                    if (std::adjacent_find(contexts.begin(), contexts.end(), std::not_equal_to<>()) !=
                                        contexts.end()) {
                                        config.seq_lens = contexts;
                                    }
                                    // A percentage is of the shortest context: every sequence holds the prefix.
                                    config.shared_prefix = shared_prefix.positions_at(config.shortest_seq_len());
                                    config.set_kv_dtypes(spec.kv_dtypes[i].key, spec.kv_dtypes[i].value);
                                    config.kv_block = spec.kv_blocks[j];
                                    validate(config);
                                    require_countable(config);
                                    if (config.is_ragged() || query_tokens != 1) require_measurable(config);
                                    // The uncached path has no cache, so no blocks either: timed once per point.
                                    grid.points.push_back({config, threads, i == 0 && j == 0});
                                }
                            }
                        }
                    }
                }
            }
        }
    });
    if (grid.points.empty()) {
        // The rule names its own options (--heads, --experts-active, --kv-lora-rank, ...): the
        // line leads with it rather than guessing which option the user got wrong.
        throw ConfigError(fmt::format(
            "the grid is empty: every shape of it breaks a rule ({})",
            grid.skipped.empty() ? std::string("no values") : grid.skipped.front()));
    }
    return grid;
}

}  // namespace kvbench
