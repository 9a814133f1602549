// check_kernels(): every fast kernel against its naive twin on one point's own data (llm.c's discipline).
#pragma once

#include "kvbench/engine/config.hpp"
#include "kvbench/engine/kv_cache.hpp"
#include "kvbench/engine/weights.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace kvbench {

// A fast kernel and its naive twin disagree when their relative error (relative_error in
// reference.hpp: max |fast - naive| / max |naive|) reaches this: the equivalence tolerance of
// docs/model.md, which fp32 kernels meet with two orders of magnitude to spare.
inline constexpr double kernel_check_tolerance = 1e-4;

struct KernelCheck {
    std::string kernel;  // what ran, e.g. "linear (1 row)", "attend_decode"
    double rel_error = 0;
};

// What a point's kernels are checked on. The naive twins run on one thread in double, so the
// expensive shapes are cut down: the many-row projection to its first 256 outputs, the causal
// attention to the first 128 positions of every sequence.
struct KernelCheckInputs {
    const float* step_in = nullptr;  // (n_batch, model_dim) floats: the new token of every sequence
    // (n_batch, seq_len, model_dim) floats: every position's input, for the uncached path's
    // kernels; null when that path does not run.
    const float* prompt = nullptr;
    // Holds positions [0, seq_len - 1) of every layer; the new token's k and v are written at
    // seq_len - 1 (as a decode step would) without changing its length. Null: attend_decode is
    // not checked.
    KvCache* cache = nullptr;
    std::size_t n_threads = 1;
};

// Runs linear (the step's rows, and the prompt's rows when given), attend_decode (with a cache)
// and attend_causal (with a prompt) and their naive twins on layer 0's weights; returns each
// kernel's relative error. Allocates its own scratch: a few MiB at most.
// Requires: config validated; buffers shaped as above for config.
std::vector<KernelCheck> check_kernels(const ModelConfig& config, const ModelWeights& weights,
                                       const KernelCheckInputs& inputs);

}  // namespace kvbench
