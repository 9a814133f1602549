// run_point(): allocate once, fill the cache, warm up, then time each path of one grid point.
#pragma once

#include "kvbench/measure/cache_flush.hpp"
#include "kvbench/engine/flop_count.hpp"
#include "kvbench/measure/roofline.hpp"
#include "kvbench/measure/sweep.hpp"
#include "kvbench/engine/weights.hpp"

#include <atomic>
#include <cstdint>
#include <optional>
#include <vector>

namespace kvbench {

struct RunOptions {
    bool run_cached = true;
    bool run_uncached = true;
    std::size_t n_reps = 20;
    std::size_t n_warmup = 3;
    bool cold_cache = true;  // evict the LLC before every timed repetition (SPEC §3)
    bool verify = false;     // check SPEC §1's equivalence at this point
    bool check = false;      // compare each fast kernel with its naive twin before timing (kernel_check.hpp)
    std::uint64_t seed = 1;
};

struct PathMeasurement {
    std::vector<std::int64_t> samples_ns;  // one per timed repetition, steady_clock
    FlopCount flops;                       // what the kernels executed in one step
};

struct PointMeasurement {
    std::optional<PathMeasurement> cached;
    std::optional<PathMeasurement> uncached;
    std::optional<double> verify_rel_error;  // SPEC §1's measure, when options.verify
    std::optional<double> check_rel_error;   // worst kernel against its naive twin, when options.check
    bool interrupted = false;                // stop was raised: the point is incomplete, discard it
};

// The uncached forward runs when its path is timed or to prefill the cache for --verify.
inline bool needs_prefill(const RunOptions& options) { return options.run_uncached || options.verify; }
// The cache and a decode step exist when the cached path is timed or --verify compares it.
inline bool needs_cache(const RunOptions& options) { return options.run_cached || options.verify; }

// Rough wall time of run(point, options) in seconds, for --dry-run and the progress line:
// each repetition at half its roofline time (decode kernels rarely do better), plus the
// prefill and the cache flushes. Without a measured roofline, assumes 100 GFLOP/s and 20 GB/s.
double estimate_point_seconds(const GridPoint& point, const RunOptions& options,
                              const Roofline* roofline, std::uint64_t flush_bytes);

// Owns what outlives one point: the cache flusher, and the weights of the last model shape
// (points of one shape are adjacent in a grid, so weights are drawn once per shape).
class PointRunner {
public:
    // Requires: flusher outlives the runner when options ask for a cold cache.
    explicit PointRunner(CacheFlusher* flusher) : flusher_(flusher) {}

    // Sets the compute threads to point.n_threads, then measures the requested paths.
    // A cached repetition always measures context N: the cache is filled to N-1 once and
    // rolled back to N-1 after every step. The fill is a real prefill (the uncached forward)
    // when the uncached path or verify runs anyway, else seeded values: timing does not
    // depend on them, and a prefill at long contexts would cost O(N²) for nothing.
    // Checks `stop` between repetitions and returns early, marked interrupted, once it is set.
    PointMeasurement run(const GridPoint& point, const RunOptions& options,
                         const std::atomic<bool>& stop);

private:
    const ModelWeights& weights_for(const ModelConfig& config, std::uint64_t seed);

    CacheFlusher* flusher_;
    std::optional<ModelConfig> weights_shape_;
    std::uint64_t weights_seed_ = 0;
    ModelWeights weights_;
};

}  // namespace kvbench
