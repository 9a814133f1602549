// Runs the real kvbench binary on a small grid and reads its CSV back.
#include "kvbench/engine/cost_model.hpp"
#include "kvbench/engine/kv_convert.hpp"
#include "kvbench/measure/runner.hpp"

#include "attention_flops.hpp"
#include "csv_reader.hpp"
#include "run_command.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>

using namespace kvbench;

namespace {

// docs/counting.md written out again, independently of src/engine/cost_model.cpp.
std::uint64_t spec_flops(bool cached, std::uint64_t b, std::uint64_t n, std::uint64_t d, std::uint64_t h,
                         std::uint64_t g, std::uint64_t l) {
    const std::uint64_t dh = d / h, p = 2 * d * d + 2 * d * g * dh;
    return cached ? l * b * (2 * p + 4 * h * dh * n) : l * b * (2 * n * p + 2 * h * dh * n * (n + 1));
}
std::uint64_t spec_bytes(bool cached, std::uint64_t b, std::uint64_t n, std::uint64_t d, std::uint64_t h,
                         std::uint64_t g, std::uint64_t l) {
    const std::uint64_t dh = d / h, p = 2 * d * d + 2 * d * g * dh;
    return l * (p * 4 + 2 * b * n * g * dh * 4 + 2 * b * (cached ? 1 : n) * d * 4);
}

}  // namespace

TEST_CASE("the csv of a small sweep has the spec's columns, exact counts and consistent rates") {
    const std::string csv = test::run_and_capture(std::string(KVBENCH_EXE) +
                                            " sweep -n 7,40 -b 1,2 -d 64 --heads 4 -g 4,2,1 -l 2 -r 3 -w 1"
                                            " --cache-state warm -t 1 --no-roofline --format csv");
    const auto records = test::parse_csv(csv);
    REQUIRE(records.size() == 1 + 2 * 2 * 3 * 2);
    const std::vector<std::string> spec_columns{
        "path", "batch", "seq", "dim", "heads", "kv_heads", "head_dim", "layers", "threads", "kv_dtype",
        "flops", "bytes", "kv_bytes", "reps", "latency_us_median", "latency_us_min", "latency_us_max",
        "gflops", "gb_per_s", "roofline_pct", "speedup"};
    const auto& header = records.front();
    REQUIRE(header.size() >= spec_columns.size());
    CHECK(std::vector<std::string>(header.begin(), header.begin() + 21) == spec_columns);
    std::map<std::string, std::size_t> col;
    for (std::size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
    for (const char* provenance : {"tool_version", "git_commit", "kernel_isa", "cpu_model", "blas_library", "blas_threading",
                                   "timestamp"}) {
        CHECK(col.contains(provenance));
    }

    std::map<std::string, double> uncached_median;  // by configuration
    auto key = [&](const std::vector<std::string>& r) {
        return r[col["batch"]] + "/" + r[col["seq"]] + "/" + r[col["kv_heads"]];
    };
    for (std::size_t i = 1; i < records.size(); ++i) {
        const auto& r = records[i];
        REQUIRE(r.size() == header.size());
        if (r[col["path"]] == "uncached") uncached_median[key(r)] = std::stod(r[col["latency_us_median"]]);
    }
    for (std::size_t i = 1; i < records.size(); ++i) {
        const auto& r = records[i];
        const bool cached = r[col["path"]] == "cached";
        const std::uint64_t b = std::stoull(r[col["batch"]]), n = std::stoull(r[col["seq"]]);
        const std::uint64_t g = std::stoull(r[col["kv_heads"]]);
        INFO("row " << i << ": " << r[col["path"]] << " B=" << b << " N=" << n << " G=" << g);
        CHECK(r[col["dim"]] == "64");
        CHECK(r[col["head_dim"]] == "16");
        CHECK(r[col["kv_dtype"]] == "f32");
        CHECK(r[col["reps"]] == "3");
        CHECK(std::stoull(r[col["flops"]]) == spec_flops(cached, b, n, 64, 4, g, 2));
        CHECK(std::stoull(r[col["bytes"]]) == spec_bytes(cached, b, n, 64, 4, g, 2));
        CHECK(std::stoull(r[col["kv_bytes"]]) == 2 * 2 * b * n * g * 16 * 4);
        // Executed FLOPs: the formula plus, on the cached path, the attention kernel's documented
        // padding; on the uncached one, the upper half of the one diagonal block (N < 64) per
        // batch row, head and layer.
        const ModelConfig config = test::make_config(b, n, 64, 4, g, 2);
        const std::uint64_t attention_useful = 4 * b * 4 * 16 * n;
        const std::uint64_t waste =
            cached ? 2 * (test::expected_decode_executed(config, attention_useful, n, 1) - attention_useful)
                   : 2 * b * 4 * (4 * 16 * n * (n - 1) / 2);
        CHECK(std::stoull(r[col["flops_executed"]]) == spec_flops(cached, b, n, 64, 4, g, 2) + waste);
        const double median_s = std::stod(r[col["latency_us_median"]]) * 1e-6;
        CHECK(std::stod(r[col["latency_us_min"]]) <= std::stod(r[col["latency_us_median"]]));
        CHECK(std::stod(r[col["latency_us_median"]]) <= std::stod(r[col["latency_us_max"]]));
        CHECK(std::stod(r[col["gflops"]]) ==
              doctest::Approx(double(std::stoull(r[col["flops"]])) / median_s / 1e9).epsilon(1e-3));
        CHECK(std::stod(r[col["gb_per_s"]]) ==
              doctest::Approx(double(std::stoull(r[col["bytes"]])) / median_s / 1e9).epsilon(1e-3));
        CHECK(std::stod(r[col["speedup"]]) ==
              doctest::Approx(uncached_median.at(key(r)) * 1e-6 / median_s).epsilon(1e-3));
    }
}

TEST_CASE("a csv without the uncached path leaves speedup empty") {
    const auto records = test::parse_csv(test::run_and_capture(
        std::string(KVBENCH_EXE) + " sweep -n 9 -d 64 --heads 4 -g 2 -r 2 -w 0 -t 1 --paths cached --no-roofline --format csv"));
    REQUIRE(records.size() == 2);
    CHECK(records[1][0] == "cached");
    CHECK(records[1][20].empty());
}

TEST_CASE("a sweep over cache types times the uncached path once and gives every cached row its error and speedup") {
    const auto records = test::parse_csv(test::run_and_capture(
        std::string(KVBENCH_EXE) + " sweep -n 40 -d 64 --heads 4 -g 4,1 --kv-dtype f32,F16,int8 -r 2 -w 0 -t 1"
                                   " --cache-state warm --no-roofline --format csv"));
    // Per grouping: three cached rows and one uncached row.
    REQUIRE(records.size() == 1 + 2 * 4);
    std::map<std::string, std::size_t> col;
    for (std::size_t i = 0; i < records.front().size(); ++i) col[records.front()[i]] = i;
    std::size_t n_uncached = 0;
    for (std::size_t i = 1; i < records.size(); ++i) {
        const auto& r = records[i];
        const std::string dtype = r[col["kv_dtype"]];
        const std::uint64_t dh = 16, g = std::stoull(r[col["kv_heads"]]);
        if (r[col["path"]] == "uncached") {
            ++n_uncached;
            CHECK(dtype == "f32");
            CHECK(r[col["kv_rel_error"]].empty());
            continue;
        }
        CHECK_FALSE(r[col["speedup"]].empty());
        // docs/counting.md: one cached vector is dh·c bytes, an int8 one dh + 4.
        const std::uint64_t vector_bytes = dtype == "f32" ? dh * 4 : dtype == "f16" ? dh * 2 : dh + 4;
        CHECK(std::stoull(r[col["kv_bytes"]]) == 2 * 40 * g * vector_bytes);
        if (dtype == "f32") {
            CHECK(r[col["kv_rel_error"]].empty());
        } else {
            REQUIRE_FALSE(r[col["kv_rel_error"]].empty());
            const double error = std::stod(r[col["kv_rel_error"]]);
            // The row carries the point's own error: the same point measured here, on the same
            // seed, one thread, a seeded fill (the f32 point times the uncached path).
            const KvDtype reduced = *find_kv_dtype(dtype);
            GridPoint point{test::make_config(1, 40, 64, 4, g, 1), 1, false};
            point.config.kv_dtype = reduced;
            RunOptions options;
            options.n_reps = 1;
            options.n_warmup = 0;
            options.cold_cache = false;
            const std::atomic<bool> never_stop{false};
            const PointMeasurement expected = PointRunner(nullptr).run(point, options, never_stop);
            REQUIRE(expected.kv_rel_error);
            CHECK(error == doctest::Approx(*expected.kv_rel_error).epsilon(1e-5));
            // And it is the type's: far above f32's rounding, within the type's tolerance.
            CHECK(error > 100 * kv_unit_roundoff(KvDtype::f32));
            CHECK(error < kv_equivalence_tolerance(reduced, dh));
        }
    }
    CHECK(n_uncached == 2);
}
