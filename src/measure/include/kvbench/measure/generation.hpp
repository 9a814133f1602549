// run_generation(): a whole generation, timed step by step, on the cached and the uncached path (docs/generate.md).
#pragma once

#include "kvbench/engine/cost_model.hpp"
#include "kvbench/engine/flop_count.hpp"
#include "kvbench/measure/cache_flush.hpp"
#include "kvbench/measure/roofline.hpp"
#include "kvbench/measure/sweep.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace kvbench {

struct GenerationOptions {
    std::size_t prompt_len = 128;  // P: positions the prefill reads
    std::size_t n_new = 64;        // T: decode steps after the prefill
    bool run_cached = true;
    bool run_uncached = true;
    bool cold_cache = true;        // evict the LLC before every timed step (docs/measuring.md)
    bool verify = false;           // compare the two paths' outputs at every step; needs both paths
    std::uint64_t seed = 1;

    std::size_t n_steps() const { return n_new + 1; }
    // Context length N of step i: P for the prefill (i = 0), P + i for the i-th decode step.
    std::size_t context_of(std::size_t step) const { return prompt_len + step; }
};

struct GenerationStep {
    std::size_t index = 0;       // 0 is the prefill (time to first token), 1..T the decode steps
    std::size_t seq_len = 0;     // N of this step
    std::int64_t latency_ns = 0; // one timed run, steady_clock
    FlopCount flops;             // what the kernels executed
    std::optional<std::uint64_t> experts_read;  // routed experts the step read over its layers; empty without experts
};

struct GenerationRun {
    std::vector<GenerationStep> cached;    // empty unless options.run_cached
    std::vector<GenerationStep> uncached;  // empty unless options.run_uncached
    // One per step both paths finished, when options.verify: docs/model.md#equivalence's measure
    // between the cached output and the uncached forward's last row.
    std::vector<double> verify_rel_error;
    bool interrupted = false;  // stop was raised; the steps above are the finished ones
};

// The FLOPs, bytes and KV bytes of step i of a path, from the cost model (docs/counting.md).
// The cached path's prefill is the uncached forward of P positions, so it costs what that does.
// experts_read: the routed experts the step read (GenerationStep); unset: the most it may read.
StepCost generation_step_cost(const ModelConfig& model, const GenerationOptions& options, DecodePath path,
                              std::size_t step, std::optional<std::uint64_t> experts_read = std::nullopt);

// Bytes run_generation allocates for `point` (weights, inputs, KV cache, scratch, outputs),
// computed without allocating, so the command can refuse a configuration that would not fit.
std::uint64_t generation_memory_bytes(const GridPoint& point, const GenerationOptions& options);

// What the cold cache's flush before each step costs: one flush timed on this machine, or,
// where none was (a dry run allocates nothing), its buffer's bytes, estimated as a write and a
// read at the roofline's read bandwidth. That is a floor: the write pass also reads each line
// for ownership and writes it back, and on a 2-core Xeon guest a flush of 1.9 GB took 0.19 s
// alone and 0.21 s between a generation's steps, where the floor says 0.12 s (docs/generate.md).
struct FlushCost {
    std::uint64_t bytes = 0;
    std::optional<double> measured_seconds;
};

// Estimated wall time of each step of each requested path, in seconds: the step's roofline
// time at half speed (what decode kernels reach), plus the cache flush. Without a measured
// roofline, assumes roofline_or_assumed's peaks, as the sweep's estimate does.
// Result: cached steps then uncached steps, in the order run_generation runs them.
std::vector<double> estimate_generation_seconds(const GridPoint& point, const GenerationOptions& options,
                                                const Roofline* roofline, const FlushCost& flush);

// Called after every finished step, for progress lines.
using StepObserver = std::function<void(DecodePath path, const GenerationStep& step)>;

// Runs the generation of `point` (its seq_len is ignored: contexts run from P to P + T):
// the same seeded input sequence of P + T positions feeds both paths.
//   cached:   the prefill, forward_full over positions [0, P) storing K and V (step 0), then
//             T decode_step calls, each appending position P + i - 1 to the cache;
//   uncached: forward_full over positions [0, P + i) for every step i, keeping no cache.
// Each step is timed once, after one untimed warm-up of each path's kernels (first-call page
// faults and thread start-up are not the cache's doing); `stop` is checked before every step.
// Requires: point.config validated, options.prompt_len >= 1; flusher outlives the call when cold.
GenerationRun run_generation(const GridPoint& point, const GenerationOptions& options, CacheFlusher* flusher,
                             const std::atomic<bool>& stop, const StepObserver& observe = {});

}  // namespace kvbench
