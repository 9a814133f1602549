// Measures the machine's peak read bandwidth and sgemm rate, stores them as JSON, and computes roofline bounds.
#include "kvbench/measure/roofline.hpp"

#include "kvbench/files/atomic_file.hpp"
#include "kvbench/engine/blas.hpp"
#include "kvbench/files/input_file.hpp"
#include "kvbench/files/json_unique_keys.hpp"
#include "kvbench/measure/cache_flush.hpp"
#include "kvbench/measure/environment.hpp"
#include "kvbench/measure/roofline_bounds.hpp"
#include "kvbench/engine/page_aligned.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <ostream>
#include <limits>
#include <memory>
#include <stdexcept>
#include <vector>

namespace kvbench {

namespace {

// Bump when a field changes meaning or disappears; load_roofline refuses other versions.
constexpr int roofline_schema_version = 1;

// A huge-page mode as a mismatch message names it.
std::string or_unknown_mode(const std::string& mode) { return mode.empty() ? "(unknown)" : mode; }

// Restores the compute thread count on scope exit, also when a measurement throws.
class ComputeThreadsGuard {
public:
    explicit ComputeThreadsGuard(std::size_t n_threads) : previous_(compute_threads()) {
        set_compute_threads(n_threads);
    }
    ComputeThreadsGuard(const ComputeThreadsGuard&) = delete;
    ComputeThreadsGuard& operator=(const ComputeThreadsGuard&) = delete;
    ~ComputeThreadsGuard() { set_compute_threads(previous_); }

private:
    std::size_t previous_;
};

// The floats thread i_thread of n_threads owns, in whole blocks of share_block_floats
// (four cache lines) so that each share starts line-aligned. The last thread takes the tail.
constexpr std::size_t share_block_floats = 64;

struct FloatRange {
    std::size_t begin = 0;
    std::size_t end = 0;
};

FloatRange thread_share(std::size_t i_thread, std::size_t n_threads, std::size_t n_floats) {
    const std::size_t n_blocks = n_floats / share_block_floats;
    FloatRange range;
    range.begin = n_blocks * i_thread / n_threads * share_block_floats;
    range.end = i_thread + 1 == n_threads ? n_floats : n_blocks * (i_thread + 1) / n_threads * share_block_floats;
    return range;
}

// Sum of x (n_floats) as four concurrent streams, one quarter each, each with its
// own vector accumulator: four independent add chains hide the add latency, so
// the loads are the limit, and a few sequential streams are what the hardware
// prefetchers follow best.
float sum_floats(const float* x, std::size_t n_floats) {
    const std::size_t quarter = n_floats / 4;
    const float* x1 = x + quarter;
    const float* x2 = x + 2 * quarter;
    const float* x3 = x + 3 * quarter;
    float s0 = 0.0f;
    float s1 = 0.0f;
    float s2 = 0.0f;
    float s3 = 0.0f;
#pragma omp simd reduction(+ : s0, s1, s2, s3)
    for (std::size_t i = 0; i < quarter; ++i) {
        s0 += x[i];
        s1 += x1[i];
        s2 += x2[i];
        s3 += x3[i];
    }
    for (std::size_t i = 4 * quarter; i < n_floats; ++i) s0 += x[i];
    return (s0 + s1) + (s2 + s3);
}

// Best read rate in GB/s over n_reps streaming passes of buffer_bytes.
double measure_read_gbps(std::size_t buffer_bytes, std::size_t n_reps, NowNs now_ns) {
    const std::size_t n_floats = buffer_bytes / sizeof(float);
    // Page-aligned, as the weights and KV cache are: a stream starting mid-page read
    // measurably slower on the reference machine (docs/measuring.md, "Allocation").
    PageAlignedVector<float> buffer(n_floats);  // (n_floats) floats
    float* const data = buffer.data();
    // Written with the same shares the sums read, so every page is backed by real memory
    // and warm in the TLB of the thread that reads it.
#pragma omp parallel
    {
        const auto n_team = static_cast<std::size_t>(omp_get_num_threads());
        const auto share = thread_share(static_cast<std::size_t>(omp_get_thread_num()), n_team, n_floats);
        std::fill(data + share.begin, data + share.end, 1.0f);
    }

    // Evicted before every pass, the buffer streams from DRAM whatever its size, as a cold
    // step's weights and KV cache do; without clflush it must be several times the LLCs.
    const ByteRegion region = byte_region(buffer);
    const bool evict = clflush_supported();
    std::int64_t best_ns = std::numeric_limits<std::int64_t>::max();
    float total = 0.0f;
    for (std::size_t rep = 0; rep <= n_reps; ++rep) {  // rep 0 is the warm-up
        if (evict) evict_regions(std::span(&region, 1));
        const std::int64_t start = now_ns();
        float pass_total = 0.0f;
#pragma omp parallel reduction(+ : pass_total)
        {
            const auto n_team = static_cast<std::size_t>(omp_get_num_threads());
            const auto share = thread_share(static_cast<std::size_t>(omp_get_thread_num()), n_team, n_floats);
            pass_total += sum_floats(data + share.begin, share.end - share.begin);
        }
        const std::int64_t pass_ns = now_ns() - start;
        total += pass_total;
        if (rep > 0) best_ns = std::min(best_ns, pass_ns);
    }
    // A volatile store the compiler must perform, so it must compute the sums.
    volatile float sink = total;
    static_cast<void>(sink);
    return static_cast<double>(n_floats * sizeof(float)) / static_cast<double>(std::max<std::int64_t>(best_ns, 1));
}

// Best fp32 rate in GFLOP/s over n_reps square sgemms of dim, counted as 2·dim³ FLOPs.
double measure_sgemm_gflops(std::size_t dim, std::size_t n_reps, NowNs now_ns) {
    const std::size_t n_elements = dim * dim;
    // Values of order 1/dim keep C of order 1: no overflow or denormals to slow the kernel.
    std::vector<float> a(n_elements);  // (dim, dim)
    std::vector<float> b(n_elements);  // (dim, dim)
    std::vector<float> c(n_elements);  // (dim, dim)
    for (std::size_t i = 0; i < n_elements; ++i) {
        a[i] = static_cast<float>(i % 7 + 1) / static_cast<float>(dim);
        b[i] = static_cast<float>(i % 5 + 1) / static_cast<float>(dim);
    }
    std::int64_t best_ns = std::numeric_limits<std::int64_t>::max();
    for (std::size_t rep = 0; rep <= n_reps; ++rep) {  // rep 0 is the warm-up
        const std::int64_t start = now_ns();
        gemm(Transpose::no, Transpose::no, dim, dim, dim, 1.0f, a.data(), dim, b.data(), dim, 0.0f,
             c.data(), dim);
        const std::int64_t call_ns = now_ns() - start;
        if (rep > 0) best_ns = std::min(best_ns, call_ns);
    }
    volatile float sink = c[n_elements / 2];
    static_cast<void>(sink);
    const double flops = 2.0 * static_cast<double>(dim) * static_cast<double>(dim) * static_cast<double>(dim);
    return flops / static_cast<double>(std::max<std::int64_t>(best_ns, 1));
}

}  // namespace

RooflineOptions quick_roofline_options() {
    RooflineOptions options;
    // 2·1536³ = 7 GFLOP per call: tens of ms on a few cores; a quick roofline is provisional and
    // measured again in full once a row beats it (docs/cli.md#kvbench-roofline).
    options.sgemm_dim = 1536;
    options.n_reps = 3;
    options.quick = true;
    return options;
}

std::size_t probe_bytes(std::size_t llc_total_bytes) {
    if (clflush_supported()) return probe_evicted_bytes;
    return std::max(probe_llc_multiple * llc_total_bytes, probe_streamed_min_bytes);
}

double measure_read_bandwidth_gbps(std::size_t buffer_bytes, std::size_t n_reps) {
    return measure_read_gbps(buffer_bytes, n_reps, steady_now_ns);
}

Roofline measure_roofline(std::size_t n_threads, const RooflineOptions& options) {
    if (n_threads == 0) throw std::invalid_argument("measure_roofline: n_threads must be at least 1");
    if (options.n_reps == 0) throw std::invalid_argument("measure_roofline: n_reps must be at least 1");
    if (options.sgemm_dim == 0) throw std::invalid_argument("measure_roofline: sgemm_dim must be at least 1");

    const Environment env = collect_environment();
    Roofline roofline;
    roofline.n_threads = n_threads;
    roofline.cpu_model = env.cpu_model;
    roofline.llc_bytes = env.llc_bytes;
    roofline.blas_library = env.blas_library;
    roofline.openblas_coretype = env.openblas_coretype;
    roofline.measured_at = env.timestamp;
    roofline.transparent_hugepage = env.transparent_hugepage;
    roofline.bandwidth_buffer_bytes = options.bandwidth_buffer_bytes == 0 ? probe_bytes(env.llc_total_bytes)
                                                                          : options.bandwidth_buffer_bytes;
    roofline.bandwidth_method = clflush_supported() ? "clflush" : "stream";
    roofline.sgemm_dim = options.sgemm_dim;
    roofline.n_reps = options.n_reps;
    roofline.quick = options.quick;

    const ComputeThreadsGuard threads(n_threads);
    roofline.peak_gbps = measure_read_gbps(roofline.bandwidth_buffer_bytes, options.n_reps, options.now_ns);
    roofline.peak_gflops = measure_sgemm_gflops(options.sgemm_dim, options.n_reps, options.now_ns);
    return roofline;
}

void save_roofline(const std::filesystem::path& path, const Roofline& roofline) {
    const nlohmann::json json = {
        {"schema_version", roofline_schema_version},
        {"peak_gflops", roofline.peak_gflops},
        {"peak_gbps", roofline.peak_gbps},
        {"n_threads", roofline.n_threads},
        {"cpu_model", roofline.cpu_model},
        {"llc_bytes", roofline.llc_bytes},
        {"blas_library", roofline.blas_library},
        {"openblas_coretype", roofline.openblas_coretype},
        {"measured_at", roofline.measured_at},
        {"transparent_hugepage", roofline.transparent_hugepage},
        {"bandwidth_buffer_bytes", roofline.bandwidth_buffer_bytes},
        {"bandwidth_method", roofline.bandwidth_method},
        {"sgemm_dim", roofline.sgemm_dim},
        {"n_reps", roofline.n_reps},
        {"quick", roofline.quick},
    };
    write_file_atomically(path, [&json](std::ostream& out) { out << json.dump(2) << '\n'; });
}

Roofline load_roofline(const std::filesystem::path& path) {
    std::string text;
    try {
        text = read_input_file(path);
    } catch (const InputFileError& error) {
        throw std::runtime_error(fmt::format("cannot open roofline file '{}': it {} (measure one with `kvbench roofline`)",
                                             path.string(), error.what()));
    }
    Roofline roofline;
    // A count must be a whole, positive JSON number: nlohmann's get<std::size_t>() would wrap
    // -1 and truncate 1.5, and converting 1e30 is undefined behaviour.
    auto count = [&path](const nlohmann::json& json, const char* field, std::uint64_t min_value) {
        const nlohmann::json& value = json.at(field);
        if (!value.is_number_unsigned() || value.get<std::uint64_t>() < min_value) {
            throw std::runtime_error(fmt::format("roofline file '{}' is corrupt: {} must be a whole number of at "
                                                 "least {} (re-measure with `kvbench roofline`)",
                                                 path.string(), field, min_value));
        }
        return static_cast<std::size_t>(value.get<std::uint64_t>());
    };
    try {
        const nlohmann::json json = parse_json_unique_keys(text);
        if (!json.is_object() || !json.contains("schema_version") || !json.contains("peak_gbps")) {
            // Not `kvbench roofline -o` that file: it may be a report, and the advice would replace it.
            throw std::runtime_error(fmt::format(
                "'{}' is not a roofline file: it lacks schema_version or peak_gbps (name a file `kvbench roofline` "
                "saved, or measure one with `kvbench roofline -o roofline.json`)",
                path.string()));
        }
        const int version = static_cast<int>(std::min<std::size_t>(count(json, "schema_version", 0), 1000000));
        if (version != roofline_schema_version) {
            throw std::runtime_error(fmt::format(
                "roofline file '{}' has schema_version {}, this kvbench reads {} (re-measure with `kvbench roofline`)",
                path.string(), version, roofline_schema_version));
        }
        roofline.peak_gflops = json.at("peak_gflops").get<double>();
        roofline.peak_gbps = json.at("peak_gbps").get<double>();
        roofline.n_threads = count(json, "n_threads", 1);
        roofline.cpu_model = json.at("cpu_model").get<std::string>();
        roofline.llc_bytes = count(json, "llc_bytes", 0);
        roofline.blas_library = json.at("blas_library").get<std::string>();
        roofline.openblas_coretype = json.at("openblas_coretype").get<std::string>();
        roofline.measured_at = json.at("measured_at").get<std::string>();
        // Smaller than a page cannot have measured DRAM bandwidth.
        roofline.bandwidth_buffer_bytes = count(json, "bandwidth_buffer_bytes", 4096);
        // Added later in schema 1: files written before it streamed a buffer beyond the LLC.
        roofline.bandwidth_method = json.value("bandwidth_method", std::string("stream"));
        roofline.sgemm_dim = count(json, "sgemm_dim", 1);
        roofline.n_reps = count(json, "n_reps", 1);
        roofline.quick = json.value("quick", false);
        // Added later in schema 1: files written before it read 4 KiB pages.
        roofline.transparent_hugepage = json.value("transparent_hugepage", std::string("unrecorded"));
    } catch (const RefusedJson& e) {
        throw std::runtime_error(fmt::format("roofline file '{}' is corrupt: {} (re-measure with `kvbench roofline`)",
                                             path.string(), e.what()));
    } catch (const nlohmann::json::exception& e) {
        // nlohmann's messages start with "[json.exception.parse_error.101] ": keep the part a user reads.
        std::string reason = e.what();
        if (const auto end = reason.find("] "); reason.starts_with("[json.exception.") && end != std::string::npos) {
            reason.erase(0, end + 2);
        }
        throw std::runtime_error(fmt::format(
            "roofline file '{}' is corrupt: {} (re-measure with `kvbench roofline`)", path.string(), reason));
    }
    // Every bound divides by the peaks: a zero or negative one would give infinite or negative times.
    if (!(roofline.peak_gflops > 0.0) || !(roofline.peak_gbps > 0.0)) {
        throw std::runtime_error(fmt::format(
            "roofline file '{}' is corrupt: peak_gflops {} and peak_gbps {} must be positive",
            path.string(), roofline.peak_gflops, roofline.peak_gbps));
    }
    // roofline_bounds.hpp's, --hardware's (docs/hardware.md). Past them no machine is near, and a
    // step's bound would round to 0 % of it or run to 10^300 hours.
    const auto check_peak = [&path](const char* field, double value, double low, double high, const char* unit) {
        if (value < low || value > high) {
            throw std::runtime_error(fmt::format("roofline file '{}' is corrupt: {} {} is out of range: it must be "
                                                 "from {:g} to {:g} {} (re-measure with `kvbench roofline`)",
                                                 path.string(), field, value, low, high, unit));
        }
    };
    check_peak("peak_gbps", roofline.peak_gbps, min_peak_gbps, max_peak_gbps, "GB/s");
    check_peak("peak_gflops", roofline.peak_gflops, min_peak_gflops, max_peak_gflops, "GFLOP/s");
    return roofline;
}

std::vector<std::string> roofline_mismatches(const Roofline& roofline, const Environment& env,
                                             std::size_t n_threads) {
    std::vector<std::string> reasons;
    if (roofline.cpu_model != env.cpu_model) {
        reasons.push_back(fmt::format("it was measured on CPU '{}', this machine is '{}'", roofline.cpu_model, env.cpu_model));
    }
    if (roofline.n_threads != n_threads) {
        reasons.push_back(fmt::format("it was measured on {} thread{}, this run uses {}", roofline.n_threads,
                                      roofline.n_threads == 1 ? "" : "s", n_threads));
    }
    if (roofline.blas_library != env.blas_library) {
        reasons.push_back(fmt::format("it was measured with {}, this run uses {}", roofline.blas_library,
                                      env.blas_library));
    }
    if (roofline.openblas_coretype != env.openblas_coretype) {
        reasons.push_back(fmt::format("it was measured with OPENBLAS_CORETYPE={}, this run has {}",
                                      roofline.openblas_coretype.empty() ? "(unset)" : roofline.openblas_coretype,
                                      env.openblas_coretype.empty() ? "(unset)" : env.openblas_coretype));
    }
    if (roofline.transparent_hugepage != env.transparent_hugepage) {
        reasons.push_back(fmt::format("its bandwidth was read with transparent huge pages {}, this run has {}",
                                      or_unknown_mode(roofline.transparent_hugepage),
                                      or_unknown_mode(env.transparent_hugepage)));
    }
    const std::string method = clflush_supported() ? "clflush" : "stream";
    if (roofline.bandwidth_method != method) {
        reasons.push_back(fmt::format("its bandwidth was read by the {} probe, this kvbench uses the {} one",
                                      roofline.bandwidth_method, method));
    }
    return reasons;
}

std::filesystem::path default_roofline_path(std::size_t n_threads) {
    const std::string file_name = fmt::format("roofline-t{}.json", n_threads);
    // Empty variables count as unset, as the XDG base directory spec asks.
    if (const std::string dir = getenv_or_empty("KVBENCH_ROOFLINE_DIR"); !dir.empty()) {
        return std::filesystem::path(dir) / file_name;
    }
    if (const std::string xdg = getenv_or_empty("XDG_CACHE_HOME"); !xdg.empty()) {
        return std::filesystem::path(xdg) / "kvbench" / file_name;
    }
    if (const std::string home = getenv_or_empty("HOME"); !home.empty()) {
        return std::filesystem::path(home) / ".cache" / "kvbench" / file_name;
    }
    throw std::runtime_error(
        "cannot choose where the roofline lives: set KVBENCH_ROOFLINE_DIR, XDG_CACHE_HOME or HOME");
}

double roofline_time_s(std::uint64_t flops, std::uint64_t bytes, const Roofline& roofline) {
    const double compute_s = static_cast<double>(flops) / (roofline.peak_gflops * 1e9);
    const double memory_s = static_cast<double>(bytes) / (roofline.peak_gbps * 1e9);
    return std::max(compute_s, memory_s);
}

Roofline roofline_or_assumed(const Roofline* roofline) {
    if (roofline != nullptr) return *roofline;
    Roofline assumed;
    assumed.peak_gflops = assumed_peak_gflops;
    assumed.peak_gbps = assumed_peak_gbps;
    return assumed;
}

std::string describe_assumed_roofline() {
    return fmt::format("{:g} GFLOP/s and {:g} GB/s", assumed_peak_gflops, assumed_peak_gbps);
}

std::optional<double> times_the_estimate(std::uint64_t flops, std::uint64_t bytes, double median_ns,
                                         const Roofline* roofline) {
    const double bound_s = roofline_time_s(flops, bytes, roofline_or_assumed(roofline));
    if (bound_s < slow_check_min_bound_s || !(median_ns > 0)) return std::nullopt;
    return median_ns * 1e-9 / (bound_s / estimate_achieved_fraction);
}

bool is_slow(std::uint64_t flops, std::uint64_t bytes, double median_ns, const Roofline* roofline) {
    const std::optional<double> factor = times_the_estimate(flops, bytes, median_ns, roofline);
    return factor && *factor >= slow_factor;
}

double roofline_pct(double roofline_time_s, double measured_median_s) {
    return 100.0 * roofline_time_s / measured_median_s;
}

}  // namespace kvbench
