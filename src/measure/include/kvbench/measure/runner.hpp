// Measuring grid points: allocate once, fill the cache, warm up, then time each path, one point
// after another (PointRunner) or all points in shuffled rounds (run_interleaved).
#pragma once

#include "kvbench/measure/cache_flush.hpp"
#include "kvbench/measure/clock.hpp"
#include "kvbench/engine/cost_model.hpp"
#include "kvbench/engine/flop_count.hpp"
#include "kvbench/engine/step_kernels.hpp"
#include "kvbench/measure/roofline.hpp"
#include "kvbench/measure/sweep.hpp"
#include "kvbench/engine/weights.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <span>
#include <vector>

namespace kvbench {

struct RunOptions {
    bool run_cached = true;
    bool run_uncached = true;
    // Repetitions (docs/measuring.md). With min_time_s == 0, exactly n_reps. Otherwise each
    // path of a point repeats until its repetitions have taken min_time_s of wall time
    // (evictions included: that is what the user waits for), with at least min_reps and at
    // most max_reps; warm-up then also stops after its first repetition once it has taken
    // half of min_time_s, so a slow step is not warmed up three times.
    std::size_t n_reps = 20;
    double min_time_s = 0;
    std::size_t min_reps = 5;
    std::size_t max_reps = 1000;
    std::size_t n_warmup = 3;
    bool cold_cache = true;  // evict the LLC before every timed repetition (docs/measuring.md)
    bool verify = false;     // check the cached step against the uncached forward (docs/model.md)
    bool check = false;      // compare each fast kernel with its naive twin before timing (kernel_check.hpp)
    std::uint64_t seed = 1;
    // What both paths run; --check holds these to their naive twins, and --verify's uncached
    // forward projects with sgemm instead (step_kernels.hpp). Tests plant faults here.
    StepKernels kernels = fast_kernels;
    // What every sample and the time budget read (evictions included in the budget, never in a
    // sample). Tests give a fake clock.
    NowNs now_ns = steady_now_ns;
};

// "reps=20 warmup=3" or "min-time=0.1s reps=5..1000 warmup<=3": recorded in every row, and
// part of what --resume compares, because it changes what a median means.
std::string describe_reps_policy(const RunOptions& options);

// Whether a path that has taken n_done repetitions in elapsed_s has enough.
bool enough_repetitions(const RunOptions& options, std::size_t n_done, double elapsed_s);

struct PathMeasurement {
    std::vector<std::int64_t> samples_ns;  // one per timed repetition, steady_clock
    FlopCount flops;                       // what the kernels executed in one step
    // Routed experts one step read, summed over its layers of experts, as its seeded router
    // chose them (the same every repetition); empty without experts.
    std::optional<std::uint64_t> experts_read;
};

struct PointMeasurement {
    std::optional<PathMeasurement> cached;
    std::optional<PathMeasurement> uncached;
    std::optional<double> verify_rel_error;  // docs/model.md's measure, when options.verify
    std::optional<double> check_rel_error;   // worst kernel against its naive twin, when options.check
    // A reduced-type cache's step against the same step over an f32 cache of the same values
    // (docs/model.md's measure); empty for an f32 cache or without the cached path.
    std::optional<double> kv_rel_error;
    // Reduced weights' step against the same step with the f32 weights they were converted from,
    // over the same cache (docs/model.md's measure); empty for f32 weights or without the cached path.
    std::optional<double> weight_rel_error;
    bool interrupted = false;                // stop was raised: the point is incomplete, discard it
};

// The uncached path is timed at this point (GridPoint::times_uncached).
inline bool times_uncached(const GridPoint& point, const RunOptions& options) {
    return options.run_uncached && point.times_uncached;
}
// The uncached forward runs when its path is timed or to prefill the cache for --verify.
inline bool needs_prefill(const GridPoint& point, const RunOptions& options) {
    return times_uncached(point, options) || options.verify;
}
// The cache and a decode step exist when the cached path is timed or --verify compares it.
inline bool needs_cache(const RunOptions& options) { return options.run_cached || options.verify; }

// Rough wall time of measuring the point in seconds, for --dry-run and the progress line:
// each repetition at half its roofline time (decode kernels rarely do better), plus the
// prefill that fills a cache (none without one) and the evictions, under the repetition policy. Without a measured roofline,
// assumes roofline_or_assumed's peaks.
double estimate_point_seconds(const GridPoint& point, const RunOptions& options,
                              const Roofline* roofline, std::uint64_t flush_bytes);
// One step of `path` (the uncached: the whole forward) as estimate_point_seconds counts it: at
// half its roofline time on `roofline`.
double estimate_step_seconds(const ModelConfig& config, DecodePath path, const Roofline& roofline);

// What the runner calls before each timed repetition of a cold-cache run, outside the timer.
// It gets the buffers the coming step touches (the clflush method evicts exactly those).
using Evict = std::function<void(std::span<const ByteRegion> regions)>;

// What a sweep asks of a runner: one point measured. PointRunner measures it on this machine;
// a test gives the sweep's scheduler a fake one (a point that fails, say) instead.
class PointMeasurer {
public:
    virtual ~PointMeasurer() = default;
    // Measures the requested paths of `point`; returns early, marked interrupted, once `stop` is set.
    virtual PointMeasurement run(const GridPoint& point, const RunOptions& options, const std::atomic<bool>& stop) = 0;
};

// Owns what outlives one point: the eviction, and the weights of the last model shape
// (points of one shape are adjacent in a grid, so weights are drawn once per shape).
class PointRunner final : public PointMeasurer {
public:
    // Requires: flusher outlives the runner when options ask for a cold cache.
    explicit PointRunner(CacheFlusher* flusher);
    explicit PointRunner(Evict evict) : evict_(std::move(evict)) {}
    explicit PointRunner(std::nullptr_t) {}  // never evicts

    // Sets the compute threads to point.n_threads, then measures the requested paths.
    // A cached repetition always measures context N: the cache is filled to N-1 once and
    // rolled back to N-1 before every step. The fill is a real prefill (the uncached forward)
    // when the uncached path or verify runs anyway, else seeded values: timing does not
    // depend on them, and a prefill at long contexts would cost O(N²) for nothing. Verify
    // runs before timing. Checks `stop` between repetitions and returns early, marked
    // interrupted, once it is set.
    PointMeasurement run(const GridPoint& point, const RunOptions& options, const std::atomic<bool>& stop) override;

private:
    std::shared_ptr<const ModelWeights> weights_for(const ModelConfig& config, std::uint64_t seed);

    Evict evict_;
    std::optional<ModelConfig> weights_shape_;
    std::uint64_t weights_seed_ = 0;
    std::shared_ptr<const ModelWeights> weights_;
};

struct InterleaveOptions {
    std::uint64_t shuffle_seed = 1;  // the order of each round comes from it: runs are repeatable
    // Points stay allocated between rounds while their point_memory_bytes sum to at most
    // this; past it, the least recently used are freed and rebuilt (prefill, warm-up) when
    // their turn comes again.
    std::uint64_t resident_budget_bytes = ~std::uint64_t{0};
};

// A point's end: its measurement, or the exception that stopped it (then `measured` is empty).
using PointFinished = std::function<void(std::size_t index, const PointMeasurement* measured,
                                         std::exception_ptr error)>;
using PointStarted = std::function<void(std::size_t index)>;

// Google Benchmark's random interleaving for a whole grid: rounds in which every unfinished
// (point, path) takes one timed repetition, in an order shuffled anew each round, so drift of
// a shared host lands on every point alike. A path is finished under the same repetition
// policy as run(). A point is warmed up when it is (re)built; with a warm cache, each timed
// repetition follows one untimed one of the same path, since the point before it in the
// round left its own data in the caches. Calls `started` when a point is first built and
// `finished` when all its paths are done, then frees it. Returns when every point has
// finished or `stop` is set (unfinished points are dropped).
void run_interleaved(const std::vector<GridPoint>& points, const RunOptions& options, const Evict& evict,
                     const InterleaveOptions& interleave, const std::atomic<bool>& stop,
                     const PointStarted& started, const PointFinished& finished);

}  // namespace kvbench
