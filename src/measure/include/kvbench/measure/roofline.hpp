// Roofline: the machine's measured peak read bandwidth and fp32 FLOP/s, their JSON file, and the bound they give (docs/counting.md#roofline).
#pragma once

#include "kvbench/measure/clock.hpp"
#include "kvbench/measure/environment.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kvbench {

struct Roofline {
    double peak_gflops = 0.0;                 // best fp32 sgemm rate, 1e9 FLOP/s
    double peak_gbps = 0.0;                   // best streaming read rate, 1e9 bytes/s
    std::size_t n_threads = 0;                // compute threads both were measured with
    std::string cpu_model;                    // Environment::cpu_model
    std::size_t llc_bytes = 0;                // Environment::llc_bytes
    std::string blas_library;                 // Environment::blas_library
    std::string openblas_coretype;            // $OPENBLAS_CORETYPE: picks the sgemm kernel, so the peak
    std::string measured_at;                  // UTC, ISO 8601
    // Environment::transparent_hugepage: the bandwidth buffer is advised into huge pages, which
    // read faster than 4 KiB ones; "unrecorded" in files from before kvbench advised them.
    std::string transparent_hugepage;
    std::size_t bandwidth_buffer_bytes = 0;   // bytes read per bandwidth repetition
    // "clflush": the buffer was evicted from every cache before each pass; "stream": it was
    // several times the LLC instead (files written before the probe was evicted say "stream").
    std::string bandwidth_method;
    std::size_t sgemm_dim = 0;                // the sgemm was (dim, dim) · (dim, dim)
    std::size_t n_reps = 0;                   // timed repetitions of each, best kept
    bool quick = false;                       // measured by a sweep's first run, with quick_roofline_options()
    // Where the run got it, without paths, for the rows it annotates: "measured this run",
    // "saved (measured <measured_at>)", "--roofline file (measured <measured_at>)". Not saved.
    std::string source;

    bool operator==(const Roofline&) const = default;
};

struct RooflineOptions {
    // 0 picks probe_bytes(Environment::llc_total_bytes).
    std::size_t bandwidth_buffer_bytes = 0;
    // Large enough that OpenBLAS runs at its kernel's peak; about 58 GFLOP per call.
    std::size_t sgemm_dim = 3072;
    std::size_t n_reps = 5;
    bool quick = false;  // recorded in Roofline::quick
    NowNs now_ns = steady_now_ns;  // what each pass and call is timed with; tests fake it
};

// What a sweep measures when it finds no saved roofline: a smaller sgemm and fewer
// repetitions, so the first run pays well under a second for it.
RooflineOptions quick_roofline_options();

// Bytes the bandwidth probe reads per pass, in the roofline and in the sweep's drift check.
// Where clflush can evict the buffer before each pass (x86-64), the buffer streams from DRAM
// whatever its size, so it only has to be long enough to time: probe_evicted_bytes. Elsewhere
// it must outgrow the caches: llc_multiple × every LLC the process may run on, at least
// probe_streamed_min_bytes.
std::size_t probe_bytes(std::size_t llc_total_bytes);
inline constexpr std::size_t probe_evicted_bytes = std::size_t{32} << 20;
inline constexpr std::size_t probe_streamed_min_bytes = std::size_t{256} << 20;
inline constexpr std::size_t probe_llc_multiple = 4;

// Measures both peaks on n_threads compute threads, one untimed warm-up each,
// then options.n_reps timed repetitions, keeping the best. Restores the previous
// compute thread count before returning.
// Requires: n_threads >= 1, options.n_reps >= 1, options.sgemm_dim >= 1.
Roofline measure_roofline(std::size_t n_threads, const RooflineOptions& options = {});

// The read-bandwidth half of measure_roofline alone, on the current compute threads:
// best GB/s of n_reps streaming passes over buffer_bytes (after one warm-up pass).
// A sweep calls it again at its end to see whether the host's bandwidth drifted.
// Requires: buffer_bytes >= 4, n_reps >= 1.
double measure_read_bandwidth_gbps(std::size_t buffer_bytes, std::size_t n_reps);

// Writes the roofline as JSON to a temporary file beside path, then renames it
// over path, so a reader never sees a partial file. Throws std::runtime_error
// naming the file when it cannot be written (e.g. the directory does not exist).
void save_roofline(const std::filesystem::path& path, const Roofline& roofline);

// Throws std::runtime_error naming the file, in one line, when it is missing, is not JSON,
// is not a roofline, has another schema_version, lacks a field, or holds a non-positive peak.
Roofline load_roofline(const std::filesystem::path& path);

// Why a roofline may not describe a run on this machine with n_threads threads: one phrase
// per difference in CPU model, thread count, BLAS library or bandwidth probe, e.g.
// "it was measured on 1 thread, this run uses 2". Empty when all match.
std::vector<std::string> roofline_mismatches(const Roofline& roofline, const Environment& env,
                                             std::size_t n_threads);

// $KVBENCH_ROOFLINE_DIR, else $XDG_CACHE_HOME/kvbench, else $HOME/.cache/kvbench,
// with file name roofline-t<n_threads>.json (peaks depend on the thread count).
// Throws std::runtime_error when none of the three variables is set.
std::filesystem::path default_roofline_path(std::size_t n_threads);

// Roofline time of one step in seconds: max(flops / peak FLOP/s, bytes / peak B/s).
// Requires: roofline.peak_gflops > 0, roofline.peak_gbps > 0.
double roofline_time_s(std::uint64_t flops, std::uint64_t bytes, const Roofline& roofline);

// What a time estimate (--dry-run, progress, generate's warning) assumes: the machine's roofline,
// or the assumed peaks below without one, each step at estimate_achieved_fraction of its bound
// (decode kernels rarely do better).
inline constexpr double estimate_achieved_fraction = 0.5;
inline constexpr double assumed_peak_gflops = 100;
inline constexpr double assumed_peak_gbps = 20;
Roofline roofline_or_assumed(const Roofline* roofline);
// "100 GFLOP/s and 20 GB/s": the assumed peaks, as messages state them.
std::string describe_assumed_roofline();

// A step's median over the time a dry run estimates for it (its roofline time over
// estimate_achieved_fraction, from `roofline`, or the assumed peaks when it is nullptr), or
// nothing when the median is not positive or the roofline time is below slow_check_min_bound_s:
// there, fixed costs (waking threads, calls) dominate and the bound says nothing about the
// machine (docs/measuring.md#far-from-the-machines-bound).
std::optional<double> times_the_estimate(std::uint64_t flops, std::uint64_t bytes, double median_ns,
                                         const Roofline* roofline);
inline constexpr double slow_check_min_bound_s = 100e-6;
// A median this many times the estimate or more is slow: a busy, oversubscribed or throttled
// machine, seen on a 2-core guest as MHA, GQA and MQA all at 24 ms with a small CV (-t 1 right
// after: 0.86 to 3.4 ms).
inline constexpr double slow_factor = 10;
bool is_slow(std::uint64_t flops, std::uint64_t bytes, double median_ns, const Roofline* roofline);

// 100 · roofline_time_s / measured_median_s: how close a measurement came to the bound.
// Requires: measured_median_s > 0.
double roofline_pct(double roofline_time_s, double measured_median_s);

}  // namespace kvbench
