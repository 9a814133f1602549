// The end-of-run warnings on made-up rows: one line each, advice that applies, nothing when all is well.
#include "cli/result_warnings.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace kvbench;

namespace {

ModelConfig model(std::size_t seq_len, std::size_t n_kv_heads) {
    ModelConfig c;
    c.seq_len = seq_len;
    c.model_dim = 1024;
    c.n_heads = 16;
    c.n_kv_heads = n_kv_heads;
    return c;
}

ResultRow row_at(const ModelConfig& c, DecodePath path, std::size_t n_threads, double median_ns, bool noisy,
                 double cv = 0.01) {
    ResultRow row;
    row.config = c;
    row.path = path;
    row.n_threads = n_threads;
    row.cost = step_cost(c, path);
    row.stats.n_samples = 20;
    row.stats.median_ns = median_ns;
    row.stats.cv = cv;
    row.stats.mdape = cv / 2;
    row.stats.median_uncertainty = estimated_median_uncertainty(row.stats.mdape, row.stats.n_samples);
    row.noisy = noisy;
    return row;
}

// Roofline time in ns of a row at 100 GFLOP/s and 20 GB/s (the assumed roofline).
double assumed_bound_ns(const ResultRow& row) {
    Roofline assumed = roofline_or_assumed(nullptr);
    return 1e9 * roofline_time_s(row.cost.flops, row.cost.bytes, assumed);
}

}  // namespace

TEST_CASE("no noisy row, no noise warning") {
    const std::vector<ResultRow> rows{row_at(model(128, 16), DecodePath::cached, 1, 1e6, false)};
    CHECK_FALSE(noise_warning(rows, NoiseContext{20, 0, false, 2}));
}

TEST_CASE("noisy rows give one line with the count, the worst row and the fixes") {
    std::vector<ResultRow> rows;
    for (std::size_t i = 0; i < 12; ++i) {
        rows.push_back(row_at(model(128 << (i % 6), 16), DecodePath::cached, 2, 1e6, i < 9, 0.06 + 0.01 * static_cast<double>(i)));
    }
    const std::optional<std::string> message = noise_warning(rows, NoiseContext{20, 0, false, 2});
    REQUIRE(message);
    CHECK(message->rfind("9 of 12 rows noisy, marked ! (worst: B=1 N=512 D=1024 H=16 G=16 L=1 T=2 cached, median ±6 % "
                          "at 95 % confidence over 20 repetitions)",
                          0) == 0);
    CHECK(message->find("try -r 50 -w 10, or --interleave, or -t 1 (leave a core to the system)") != std::string::npos);
}

TEST_CASE("at one thread the noise warning gives no thread advice") {
    const std::vector<ResultRow> rows{row_at(model(128, 16), DecodePath::cached, 1, 1e6, true, 0.2)};
    const std::optional<std::string> message = noise_warning(rows, NoiseContext{0, 0.1, true, 2});
    REQUIRE(message);
    CHECK(message->rfind("1 of 1 row noisy", 0) == 0);
    CHECK(message->find("--min-time 1s -w 10") != std::string::npos);
    CHECK(message->find("-t ") == std::string::npos);
    CHECK(message->find("--interleave") == std::string::npos);  // already on
}

TEST_CASE("medians near the estimate give no slowness warning") {
    std::vector<ResultRow> rows;
    for (const std::size_t g : {std::size_t{16}, std::size_t{4}, std::size_t{1}}) {
        ResultRow row = row_at(model(1024, g), DecodePath::cached, 2, 0, false);
        row.stats.median_ns = 3 * assumed_bound_ns(row);
        rows.push_back(row);
    }
    CHECK_FALSE(slow_rows_warning(rows, {}));
}

TEST_CASE("medians an order of magnitude above the estimate give one warning with the likely causes") {
    // As seen: MHA, GQA and MQA all at 24 ms on 2 threads, steadily.
    std::vector<ResultRow> rows;
    for (const std::size_t g : {std::size_t{16}, std::size_t{4}, std::size_t{1}}) rows.push_back(row_at(model(1024, g), DecodePath::cached, 2, 24e6, false));
    Roofline machine;
    machine.peak_gflops = 200;
    machine.peak_gbps = 30;
    const std::optional<std::string> message = slow_rows_warning(rows, {{2, machine}});
    REQUIRE(message);
    CHECK(message->rfind("3 of 3 rows took 10x or more the time this machine allows (worst: ", 0) == 0);
    CHECK(message->find("G=1 L=1 T=2 cached, median 24.0 ms") != std::string::npos);
    CHECK(message->find("from the roofline") != std::string::npos);
    CHECK(message->find("more threads than free cores, another process on the machine, or frequency throttling") !=
          std::string::npos);
    CHECK(message->find("try -t 1, or") != std::string::npos);
}

TEST_CASE("the slowness check uses the assumed roofline without one, and no -t 1 advice at one thread") {
    ResultRow row = row_at(model(4096, 16), DecodePath::cached, 1, 0, false);
    row.stats.median_ns = 30 * assumed_bound_ns(row);
    const std::optional<std::string> message = slow_rows_warning({row}, {});
    REQUIRE(message);
    CHECK(message->find("an assumed 100 GFLOP/s and 20 GB/s") != std::string::npos);
    CHECK(message->find("-t 1") == std::string::npos);
}

TEST_CASE("steps too short for their bound to mean anything are not judged") {
    ModelConfig tiny = model(16, 4);
    tiny.model_dim = 64;
    tiny.n_heads = 4;
    ResultRow row = row_at(tiny, DecodePath::cached, 1, 0, false);
    REQUIRE(assumed_bound_ns(row) < slow_check_min_bound_s * 1e9);
    row.stats.median_ns = 100 * assumed_bound_ns(row);
    CHECK_FALSE(slow_rows_warning({row}, {}));
}

TEST_CASE("rows above their roofline give one line naming the worst and how to measure it again") {
    std::vector<ResultRow> rows;
    for (const double pct : {80.0, 170.0, 195.0}) {
        ResultRow row = row_at(model(1024, 16), DecodePath::uncached, 2, 1e7, false);
        row.roofline_pct = pct;
        row.roofline_source = "saved (measured 2026-12-01T10:00:00Z, quick)";
        rows.push_back(row);
    }
    CHECK(threads_above_roofline(rows) == std::vector<std::size_t>{2});
    const std::optional<std::string> message = above_roofline_warning(rows, {});
    REQUIRE(message);
    CHECK(message->rfind("2 of 3 rows above 100 % of the roofline, marked ^ (worst: B=1 N=1024 D=1024 H=16 G=16 L=1 "
                         "T=2 uncached, 195 % of the roofline saved (measured 2026-12-01T10:00:00Z, quick)): the "
                         "roofline is lower than this machine, measured while it was busy; measure it again with "
                         "`kvbench roofline -t 2` when the machine is idle",
                         0) == 0);
    // A quick roofline measured again in the run: what it found, and that it is saved.
    Roofline full;
    full.peak_gflops = 210;
    full.peak_gbps = 88.4;
    const std::optional<std::string> replaced = above_roofline_warning(rows, {{2, full}});
    REQUIRE(replaced);
    CHECK(replaced->find("it was a quick one, measured low; measured it fully now (88.4 GB/s, 210 GFLOP/s) and saved "
                         "it, so later runs use it") != std::string::npos);
    rows.erase(rows.begin() + 1, rows.end());
    CHECK_FALSE(above_roofline_warning(rows, {}));
    CHECK(threads_above_roofline(rows).empty());
}
