// The cartesian product of a SweepSpec, skipping combinations that break the rules of docs/model.md#configuration.
#include "kvbench/measure/sweep.hpp"

#include <fmt/format.h>

namespace kvbench {

Grid expand(const SweepSpec& spec) {
    Grid grid;
    for (std::size_t dim : spec.dim) {
        for (std::size_t heads : spec.heads) {
            for (std::size_t head_dim : spec.head_dim) {
                for (std::size_t kv_heads : spec.kv_heads) {
                    for (std::size_t layers : spec.layers) {
                        ModelConfig shape;
                        shape.model_dim = dim;
                        shape.n_heads = heads;
                        shape.explicit_head_dim = head_dim;
                        shape.n_kv_heads = kv_heads;
                        shape.n_layers = layers;
                        try {
                            validate(shape);
                        } catch (const ConfigError& error) {
                            // A shape breaks its rule whatever the batch and context; say it once.
                            if (layers == spec.layers.front()) {
                                const std::string dh = head_dim == 0 ? "" : fmt::format(" dh={}", head_dim);
                                grid.skipped.push_back(
                                    fmt::format("D={} H={}{} G={}: {}", dim, heads, dh, kv_heads, error.what()));
                            }
                            continue;
                        }
                        for (std::size_t batch : spec.batch) {
                            for (std::size_t seq : spec.seq) {
                                for (std::size_t threads : spec.threads) {
                                    for (std::size_t i = 0; i < spec.kv_dtypes.size(); ++i) {
                                        ModelConfig config = shape;
                                        config.n_batch = batch;
                                        config.seq_len = seq;
                                        config.kv_dtype = spec.kv_dtypes[i];
                                        validate(config);
                                        grid.points.push_back({config, threads, i == 0});
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    if (grid.points.empty()) {
        throw ConfigError(fmt::format(
            "the grid is empty: every combination of --dim, --heads and --kv-heads breaks a rule ({})",
            grid.skipped.empty() ? std::string("no values") : grid.skipped.front()));
    }
    return grid;
}

}  // namespace kvbench
