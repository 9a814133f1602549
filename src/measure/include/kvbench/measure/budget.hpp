// point_memory(): what one grid point allocates, by owner, summed from each owner's bytes_for.
#pragma once

#include "kvbench/measure/runner.hpp"
#include "kvbench/measure/sweep.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace kvbench {

// The bytes PointRunner::run allocates for a point, computed without allocating, so a sweep can
// refuse a point that would not fit and say which part is large.
struct MemoryBudget {
    // KvCache: K and V of every layer at context N; for a reduced --kv-dtype, plus the f32 cache
    // of the same values that kv_rel_error is measured against, held while the point is set up.
    std::uint64_t kv_cache_bytes = 0;
    std::uint64_t weights_bytes = 0;   // ModelWeights: every layer's Wqkv and Wo
    std::uint64_t scratch_bytes = 0;   // DecodeScratch and ForwardScratch: activations and attention buffers
    std::uint64_t inputs_bytes = 0;    // inputs and outputs of the steps (the whole prompt for the uncached path)
    // What the run holds beside the point, filled by the sweep (it depends on the machine):
    std::uint64_t flush_bytes = 0;     // the stream method's cold-cache buffer (0 for clflush or warm)
    std::uint64_t probe_bytes = 0;     // the bandwidth probe of the roofline and drift check

    // Throws SizeOverflow.
    std::uint64_t total_bytes() const;
};

// One line of a budget: its name, its size and the options that shrink it.
struct MemoryTerm {
    std::string name;   // "the KV cache", "the weights", ...
    std::uint64_t bytes = 0;
    std::string hint;   // e.g. "lower --seq or --batch, or use fewer --kv-heads"
};

// The budget's terms in a fixed order: KV cache, weights, scratch, inputs, flush, probe.
std::vector<MemoryTerm> memory_terms(const MemoryBudget& budget);
// The largest of memory_terms (the first of equals).
MemoryTerm largest_term(const MemoryBudget& budget);

// Throws ConfigError naming the point when a size overflows 64 bits.
MemoryBudget point_memory(const GridPoint& point, const RunOptions& options);
// point_memory(point, options).total_bytes(), with the same ConfigError on overflow.
std::uint64_t point_memory_bytes(const GridPoint& point, const RunOptions& options);

}  // namespace kvbench
