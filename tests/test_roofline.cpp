// Roofline: JSON round trip, error messages that name the file, and the bound's arithmetic.
#include "kvbench/measure/bandwidth_drift.hpp"
#include "kvbench/measure/roofline.hpp"
#include "kvbench/measure/run_context.hpp"

#include "kvbench/measure/cache_flush.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

namespace fs = std::filesystem;

namespace {

// A fresh directory under the system temp dir, removed with everything in it on scope exit.
class TempDir {
public:
    TempDir() {
        static int counter = 0;
        path_ = fs::temp_directory_path() / ("kvbench_test_roofline_" + std::to_string(getpid()) + "_" +
                                             std::to_string(counter++));
        fs::create_directories(path_);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    ~TempDir() {
        std::error_code ignored;
        fs::remove_all(path_, ignored);
    }
    const fs::path& path() const { return path_; }

private:
    fs::path path_;
};

kvbench::Roofline sample_roofline() {
    kvbench::Roofline roofline;
    roofline.peak_gflops = 123.456789012345;
    roofline.peak_gbps = 45.6789;
    roofline.n_threads = 2;
    roofline.cpu_model = "AMD EPYC";
    roofline.llc_bytes = std::size_t{32} << 20;
    roofline.blas_library = "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64";
    roofline.openblas_coretype = "Haswell";
    roofline.measured_at = "2024-05-01T12:34:56Z";
    roofline.transparent_hugepage = "madvise";
    roofline.bandwidth_buffer_bytes = std::size_t{1} << 30;
    roofline.bandwidth_method = "clflush";
    roofline.sgemm_dim = 3072;
    roofline.n_reps = 5;
    return roofline;
}

// The message of the std::runtime_error fn throws, or "" when it throws nothing.
template <typename Fn>
std::string runtime_error_message(Fn fn) {
    try {
        fn();
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return {};
}

void write_text(const fs::path& path, const std::string& text) {
    std::ofstream out(path);
    out << text;
}

}  // namespace

TEST_CASE("a saved roofline loads back equal") {
    const TempDir dir;
    const fs::path path = dir.path() / "roofline.json";
    const kvbench::Roofline saved = sample_roofline();
    kvbench::save_roofline(path, saved);
    CHECK(kvbench::load_roofline(path) == saved);
}

TEST_CASE("saving over an existing roofline replaces it and leaves no temporary file") {
    const TempDir dir;
    const fs::path path = dir.path() / "roofline.json";
    kvbench::Roofline roofline = sample_roofline();
    kvbench::save_roofline(path, roofline);
    roofline.peak_gbps = 99.5;
    kvbench::save_roofline(path, roofline);
    CHECK(kvbench::load_roofline(path).peak_gbps == 99.5);
    CHECK(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()) == 1);
}

TEST_CASE("loading a missing roofline throws naming the file") {
    const TempDir dir;
    const fs::path path = dir.path() / "absent.json";
    const std::string message = runtime_error_message([&] { kvbench::load_roofline(path); });
    CHECK_MESSAGE(message.find(path.string()) != std::string::npos, message);
}

TEST_CASE("loading corrupt json throws naming the file") {
    const TempDir dir;
    const fs::path path = dir.path() / "corrupt.json";
    write_text(path, "{\"schema_version\": 1, \"peak_gflops\": ");
    const std::string message = runtime_error_message([&] { kvbench::load_roofline(path); });
    CHECK_MESSAGE(message.find(path.string()) != std::string::npos, message);
}

TEST_CASE("loading json without a required field throws naming the file and the field") {
    const TempDir dir;
    const fs::path path = dir.path() / "partial.json";
    write_text(path, R"({"schema_version": 1, "peak_gflops": 100.0})");
    const std::string message = runtime_error_message([&] { kvbench::load_roofline(path); });
    CHECK_MESSAGE(message.find(path.string()) != std::string::npos, message);
    CHECK_MESSAGE(message.find("peak_gbps") != std::string::npos, message);
}

TEST_CASE("loading a roofline of another schema version throws") {
    const TempDir dir;
    const fs::path path = dir.path() / "roofline.json";
    kvbench::save_roofline(path, sample_roofline());
    std::string text;
    {
        std::ifstream in(path);
        text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    const std::string field = "\"schema_version\": 1";
    const auto at = text.find(field);
    REQUIRE(at != std::string::npos);
    text.replace(at, field.size(), "\"schema_version\": 999");
    write_text(path, text);
    const std::string message = runtime_error_message([&] { kvbench::load_roofline(path); });
    CHECK_MESSAGE(message.find("999") != std::string::npos, message);
}

TEST_CASE("loading a roofline with a zero peak throws") {
    const TempDir dir;
    const fs::path path = dir.path() / "roofline.json";
    kvbench::Roofline roofline = sample_roofline();
    roofline.peak_gbps = 0.0;
    kvbench::save_roofline(path, roofline);
    const std::string message = runtime_error_message([&] { kvbench::load_roofline(path); });
    CHECK_MESSAGE(message.find(path.string()) != std::string::npos, message);
}

TEST_CASE("saving into a directory that does not exist throws and creates nothing") {
    const TempDir dir;
    const fs::path missing_dir = dir.path() / "missing";
    const fs::path path = missing_dir / "roofline.json";
    const std::string message = runtime_error_message([&] { kvbench::save_roofline(path, sample_roofline()); });
    CHECK_MESSAGE(message.find(path.string()) != std::string::npos, message);
    CHECK_FALSE(fs::exists(missing_dir));
    CHECK(fs::is_empty(dir.path()));
}

TEST_CASE("the default roofline path honours KVBENCH_ROOFLINE_DIR and names the thread count") {
    const char* previous = std::getenv("KVBENCH_ROOFLINE_DIR");
    const std::string saved = previous == nullptr ? std::string() : std::string(previous);
    setenv("KVBENCH_ROOFLINE_DIR", "/some/dir", 1);
    const fs::path path = kvbench::default_roofline_path(3);
    if (previous == nullptr) {
        unsetenv("KVBENCH_ROOFLINE_DIR");
    } else {
        setenv("KVBENCH_ROOFLINE_DIR", saved.c_str(), 1);
    }
    CHECK(path == fs::path("/some/dir/roofline-t3.json"));
}

TEST_CASE("roofline time is the larger of the compute and the memory bound") {
    kvbench::Roofline roofline;
    roofline.peak_gflops = 100.0;  // 1e11 FLOP/s
    roofline.peak_gbps = 50.0;     // 5e10 B/s
    // 2e9 FLOPs take 20 ms, 1e8 bytes take 2 ms: compute bound.
    CHECK(kvbench::roofline_time_s(2'000'000'000, 100'000'000, roofline) == doctest::Approx(0.02));
    // 1e6 FLOPs take 10 us, 1e9 bytes take 20 ms: memory bound.
    CHECK(kvbench::roofline_time_s(1'000'000, 1'000'000'000, roofline) == doctest::Approx(0.02));
    // 1e9 FLOPs take 10 ms, 5e8 bytes take 10 ms: the ridge, both bounds equal.
    CHECK(kvbench::roofline_time_s(1'000'000'000, 500'000'000, roofline) == doctest::Approx(0.01));
    CHECK(kvbench::roofline_time_s(0, 0, roofline) == 0.0);
}

TEST_CASE("roofline pct is a hundred times bound over measured") {
    CHECK(kvbench::roofline_pct(0.002, 0.008) == doctest::Approx(25.0));
    CHECK(kvbench::roofline_pct(0.01, 0.01) == doctest::Approx(100.0));
    CHECK(kvbench::roofline_pct(3e-6, 2e-6) == doctest::Approx(150.0));
}

namespace {

// A fake clock on which every timed pass or call lasts a fixed time: each reading adds the
// next of a sequence of steps, so a pass from one reading to the next lasts that step.
std::vector<std::int64_t> fake_steps_ns;
std::size_t fake_reading = 0;
std::int64_t fake_clock_ns = 0;
std::int64_t fake_now_ns() {
    fake_clock_ns += fake_steps_ns[fake_reading++ % fake_steps_ns.size()];
    return fake_clock_ns;
}

}  // namespace

TEST_CASE("a roofline's peaks are the bytes and FLOPs of its best repetition over its time") {
    kvbench::RooflineOptions options;
    options.bandwidth_buffer_bytes = std::size_t{4} << 20;
    options.sgemm_dim = 64;
    options.n_reps = 2;
    options.now_ns = fake_now_ns;
    // Readings in pairs around each pass and call: the warm-up, then two timed repetitions,
    // of 1000 ns and 800 ns of which the best, 800, counts (the warm-up's 10 ns never does).
    // Every other reading (before a start) adds 1 s.
    fake_steps_ns = {1'000'000'000, 10, 1'000'000'000, 1000, 1'000'000'000, 800};
    fake_reading = 0;
    const kvbench::Roofline roofline = kvbench::measure_roofline(1, options);
    CHECK(roofline.n_threads == 1);
    CHECK(roofline.bandwidth_buffer_bytes == options.bandwidth_buffer_bytes);
    CHECK(roofline.sgemm_dim == 64);
    CHECK(roofline.n_reps == 2);
    // 4 MiB in 800 ns; 2·64³ FLOPs in 800 ns.
    CHECK(roofline.peak_gbps == doctest::Approx(4194304.0 / 800.0));
    CHECK(roofline.peak_gflops == doctest::Approx(524288.0 / 800.0));
    CHECK_FALSE(roofline.measured_at.empty());
}

TEST_CASE("a real tiny roofline measurement runs both probes to finite positive peaks") {
    kvbench::RooflineOptions options;
    options.bandwidth_buffer_bytes = std::size_t{4} << 20;
    options.sgemm_dim = 64;
    options.n_reps = 1;
    const kvbench::Roofline roofline = kvbench::measure_roofline(1, options);
    CHECK(std::isfinite(roofline.peak_gbps));
    CHECK(roofline.peak_gbps > 0.0);
    CHECK(std::isfinite(roofline.peak_gflops));
    CHECK(roofline.peak_gflops > 0.0);
}

TEST_CASE("the probe is small where clflush evicts it, and beyond the llcs where it cannot") {
    const std::size_t large_llc_bytes = std::size_t{256} << 20;
    if (kvbench::clflush_supported()) {
        CHECK(kvbench::probe_bytes(large_llc_bytes) == kvbench::probe_evicted_bytes);
        CHECK(kvbench::probe_bytes(large_llc_bytes) < std::size_t{64} << 20);
    } else {
        CHECK(kvbench::probe_bytes(large_llc_bytes) == 4 * large_llc_bytes);
        CHECK(kvbench::probe_bytes(0) == kvbench::probe_streamed_min_bytes);
    }
}

TEST_CASE("a roofline of this machine, thread count and blas matches; each difference is named") {
    const kvbench::Environment env = kvbench::collect_environment();
    kvbench::Roofline roofline = sample_roofline();
    roofline.cpu_model = env.cpu_model;
    roofline.n_threads = 2;
    roofline.blas_library = env.blas_library;
    roofline.openblas_coretype = env.openblas_coretype;
    roofline.transparent_hugepage = env.transparent_hugepage;
    roofline.bandwidth_method = kvbench::clflush_supported() ? "clflush" : "stream";
    CHECK(kvbench::roofline_mismatches(roofline, env, 2).empty());

    const auto mismatches = kvbench::roofline_mismatches(roofline, env, 1);
    REQUIRE(mismatches.size() == 1);
    CHECK_MESSAGE(mismatches[0].find("2 threads, this run uses 1") != std::string::npos, mismatches[0]);

    kvbench::Roofline foreign = roofline;
    foreign.cpu_model = "Some Other CPU";
    foreign.blas_library = "OpenBLAS 0.0.1";
    const auto reasons = kvbench::roofline_mismatches(foreign, env, 2);
    REQUIRE(reasons.size() == 2);
    CHECK_MESSAGE(reasons[0].find("Some Other CPU") != std::string::npos, reasons[0]);
    CHECK_MESSAGE(reasons[1].find("OpenBLAS 0.0.1") != std::string::npos, reasons[1]);
}

TEST_CASE("a roofline file from before the evicted probe loads, marked as a stream probe") {
    const TempDir dir;
    const fs::path path = dir.path() / "old.json";
    write_text(path, R"({"schema_version": 1, "peak_gflops": 250.0, "peak_gbps": 40.0, "n_threads": 2,
        "cpu_model": "X", "llc_bytes": 1, "blas_library": "B", "openblas_coretype": "", "measured_at": "T",
        "bandwidth_buffer_bytes": 1073741824, "sgemm_dim": 3072, "n_reps": 5})");
    const kvbench::Roofline loaded = kvbench::load_roofline(path);
    CHECK(loaded.bandwidth_method == "stream");
    CHECK_FALSE(loaded.quick);
    CHECK(loaded.transparent_hugepage == "unrecorded");  // read with 4 KiB pages: named as a mismatch
    const auto reasons = kvbench::roofline_mismatches(loaded, kvbench::collect_environment(), 2);
    CHECK(std::any_of(reasons.begin(), reasons.end(),
                      [](const std::string& reason) { return reason.find("huge pages unrecorded") != std::string::npos; }));
}

TEST_CASE("a json file that is not a roofline is refused in one line naming the file") {
    const TempDir dir;
    const fs::path path = dir.path() / "sweep.json";
    write_text(path, R"({"schema_version": 1, "rows": []})");
    const std::string message = runtime_error_message([&] { kvbench::load_roofline(path); });
    CHECK_MESSAGE(message.find(path.string()) != std::string::npos, message);
    CHECK_MESSAGE(message.find("not a roofline") != std::string::npos, message);
    CHECK(message.find('\n') == std::string::npos);
}

TEST_CASE("a corrupt roofline's message leaves out the json library's tag") {
    const TempDir dir;
    const fs::path path = dir.path() / "corrupt.json";
    write_text(path, "{\"schema_version\": 1, \"peak_gbps\": ");
    const std::string message = runtime_error_message([&] { kvbench::load_roofline(path); });
    CHECK_MESSAGE(message.find("is corrupt") != std::string::npos, message);
    CHECK_MESSAGE(message.find("[json.exception") == std::string::npos, message);
}

TEST_CASE("the quick roofline is a smaller sgemm, and says it is quick") {
    const kvbench::RooflineOptions quick = kvbench::quick_roofline_options();
    CHECK(quick.quick);
    CHECK(quick.sgemm_dim < kvbench::RooflineOptions{}.sgemm_dim);
    CHECK(quick.n_reps >= 1);
}

TEST_CASE("only a quick roofline of the run's own is measured again when rows beat it") {
    kvbench::Roofline full;
    full.peak_gflops = 200;
    full.peak_gbps = 80;
    full.quick = false;
    kvbench::RooflinePolicy saved;
    // Not quick: it stays, whatever the rows did (measuring it again is the user's call).
    CHECK(kvbench::replace_beaten_quick_rooflines({{1, full}}, {1}, saved, {}).empty());
    // A --roofline file is the user's, quick or not; --no-roofline has none to replace.
    kvbench::Roofline quick = full;
    quick.quick = true;
    kvbench::RooflinePolicy given;
    given.given = kvbench::GivenRoofline{"r.json", quick};
    CHECK(kvbench::replace_beaten_quick_rooflines({{1, quick}}, {1}, given, {}).empty());
    // A thread count no row beat keeps its quick roofline.
    CHECK(kvbench::replace_beaten_quick_rooflines({{1, quick}}, {2}, saved, {}).empty());
}

TEST_CASE("the end-of-run bandwidth reading warns beyond 15 % of the roofline's either way, and names both") {
    Roofline roofline;
    roofline.peak_gbps = 100.0;
    roofline.measured_at = "2026-12-05T10:00:00Z";
    for (const double now : {85.5, 100.0, 114.5}) {
        CAPTURE(now);
        CHECK_FALSE(bandwidth_drift_warning(2, roofline, now));
    }
    for (const double now : {84.5, 50.0, 115.5}) {
        CAPTURE(now);
        const std::optional<std::string> warning = bandwidth_drift_warning(2, roofline, now);
        REQUIRE(warning);
        CHECK(warning->find(fmt::format("reads {:.1f} GB/s now against the roofline's 100.0 GB/s", now)) != std::string::npos);
        CHECK(warning->find("on 2 threads") != std::string::npos);
        CHECK(warning->find("(measured 2026-12-05T10:00:00Z)") != std::string::npos);
    }
    CHECK(bandwidth_drift_warning(1, roofline, 10.0)->find("on 1 thread reads") != std::string::npos);
}
