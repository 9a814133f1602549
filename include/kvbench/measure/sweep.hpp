// SweepSpec (a list per axis) -> the grid of configurations, in a stable, documented order.
#pragma once

#include "kvbench/engine/config.hpp"

#include <cstddef>
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
};

struct GridPoint {
    ModelConfig config;
    std::size_t n_threads = 1;
};

struct Grid {
    std::vector<GridPoint> points;
    // One line per combination that breaks a rule: "D=100 H=8: --heads 8 must divide --dim 100 (...)".
    std::vector<std::string> skipped;
};

// Cartesian product with the model shape outermost (dim, heads, head_dim, kv_heads, layers), so points
// sharing weights are adjacent, then batch, seq and threads. Invalid combinations are skipped
// (each shape named once in Grid::skipped). Throws ConfigError if no point is left.
Grid expand(const SweepSpec& spec);

}  // namespace kvbench
