// A whole generation: both paths agree at every step, counts equal the formulas at each N, the CSV has a row per step.
#include "kvbench/measure/generation.hpp"

#include "kvbench/report/columns.hpp"
#include "csv_reader.hpp"
#include "run_command.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <map>
#include <memory>
#include <sstream>
#include <string>

using namespace kvbench;
using kvbench::test::make_config;

namespace {

const std::atomic<bool> never_stop{false};

// docs/counting.md written out again, independently of src/engine/cost_model.cpp.
std::uint64_t spec_flops(bool cached, std::uint64_t b, std::uint64_t n, std::uint64_t d, std::uint64_t h,
                         std::uint64_t g, std::uint64_t l) {
    const std::uint64_t dh = d / h, p = 2 * d * d + 2 * d * g * dh;
    return cached ? l * b * (2 * p + 4 * h * dh * n) : l * b * (2 * n * p + 2 * h * dh * n * (n + 1));
}
std::uint64_t spec_kv_bytes(std::uint64_t b, std::uint64_t n, std::uint64_t d, std::uint64_t h, std::uint64_t g,
                            std::uint64_t l) {
    return 2 * l * b * n * g * (d / h) * 4;
}

// The time estimate's generation: one 1024-wide MHA layer, n_new tokens after a 512-position prompt.
const GridPoint estimate_point{make_config(1, 1, 1024, 16, 16, 1), 1};
GenerationOptions estimate_options(std::size_t n_new) {
    GenerationOptions options;
    options.prompt_len = 512;
    options.n_new = n_new;
    return options;
}

}  // namespace

TEST_CASE("cached and uncached generations agree at every step, and execute the formulas' FLOPs") {
    for (const std::size_t g : {std::size_t{4}, std::size_t{2}, std::size_t{1}}) {
        const GridPoint point{make_config(2, 1, 64, 4, g, 2), 1};
        GenerationOptions options;
        options.prompt_len = 5;
        options.n_new = 7;
        options.cold_cache = false;
        options.verify = true;
        const GenerationRun run = run_generation(point, options, nullptr, never_stop);
        INFO("G=" << g);
        CHECK_FALSE(run.interrupted);
        REQUIRE(run.cached.size() == options.n_steps());
        REQUIRE(run.uncached.size() == options.n_steps());
        REQUIRE(run.verify_rel_error.size() == options.n_steps());
        for (std::size_t i = 0; i < options.n_steps(); ++i) {
            INFO("step " << i);
            CHECK(run.verify_rel_error[i] < 1e-4);
            CHECK(run.cached[i].index == i);
            CHECK(run.cached[i].seq_len == 5 + i);
            CHECK(run.uncached[i].seq_len == 5 + i);
            CHECK(run.cached[i].latency_ns > 0);
            const std::uint64_t n = 5 + i;
            // The cached prefill is the uncached forward of P positions.
            CHECK(run.cached[i].flops.useful == spec_flops(i > 0, 2, n, 64, 4, g, 2));
            CHECK(run.uncached[i].flops.useful == spec_flops(false, 2, n, 64, 4, g, 2));
            for (const DecodePath path : {DecodePath::cached, DecodePath::uncached}) {
                const StepCost cost = generation_step_cost(point.config, options, path, i);
                CHECK(cost.flops == spec_flops(path == DecodePath::cached && i > 0, 2, n, 64, 4, g, 2));
                CHECK(cost.kv_bytes == spec_kv_bytes(2, n, 64, 4, g, 2));
            }
        }
    }
}

TEST_CASE("a paged generation and one sharing its prompt's beginning agree with the forward, and count their caches") {
    const std::uint64_t b = 2, d = 64, h = 4, g = 2, l = 2, dh = d / h;
    GenerationOptions options;
    options.prompt_len = 6;
    options.n_new = 7;
    options.cold_cache = false;
    options.verify = true;
    SUBCASE("blocks of 4 positions: whole blocks and one 4-byte table entry per block, K and V together") {
        GridPoint point{make_config(b, 1, d, h, g, l), 1};
        point.config.kv_block = 4;
        const GenerationRun run = run_generation(point, options, nullptr, never_stop);
        REQUIRE(run.verify_rel_error.size() == options.n_steps());
        for (std::size_t i = 0; i < options.n_steps(); ++i) {
            INFO("step " << i);
            CHECK(run.verify_rel_error[i] < 1e-4);
            const std::uint64_t n = options.prompt_len + i, blocks = (n + 3) / 4;
            const StepCost cost = generation_step_cost(point.config, options, DecodePath::cached, i);
            CHECK(cost.kv_bytes == l * b * g * blocks * (4 * 2 * dh * 4 + 4));
        }
    }
    SUBCASE("half the prompt shared: one copy of its 3 positions, each sequence's own after them") {
        GridPoint point{make_config(b, 1, d, h, g, l), 1};
        point.config.shared_prefix = 3;
        const GenerationRun run = run_generation(point, options, nullptr, never_stop);
        REQUIRE(run.verify_rel_error.size() == options.n_steps());
        for (std::size_t i = 0; i < options.n_steps(); ++i) {
            INFO("step " << i);
            CHECK(run.verify_rel_error[i] < 1e-4);
            const std::uint64_t n = options.prompt_len + i;
            const StepCost cost = generation_step_cost(point.config, options, DecodePath::cached, i);
            CHECK(cost.kv_bytes == l * g * 2 * dh * 4 * (3 + b * (n - 3)));
        }
    }
}

TEST_CASE("a ragged generation: every sequence adds a token per step at its own context, as the forward says") {
    const std::uint64_t d = 64, h = 4, g = 2, l = 2;
    GridPoint point{make_config(3, 1, d, h, g, l), 1};
    GenerationOptions options;
    options.prompt_len = 9;  // the longest prompt; the others 4 and 6
    options.n_new = 5;
    options.cold_cache = false;
    options.verify = true;
    point.config.seq_lens = {4 + 5, 9 + 5, 6 + 5};
    point.config.seq_len = 9 + 5;
    const GenerationRun run = run_generation(point, options, nullptr, never_stop);
    REQUIRE(run.cached.size() == options.n_steps());
    REQUIRE(run.verify_rel_error.size() == options.n_steps());
    for (std::size_t i = 0; i < options.n_steps(); ++i) {
        INFO("step " << i);
        CHECK(run.verify_rel_error[i] < 1e-4);
        CHECK(run.cached[i].seq_len == 9 + i);
        // Each sequence costs what a batch of one at its own context does.
        std::uint64_t cached = 0, uncached = 0;
        for (const std::uint64_t prompt : {std::uint64_t{4}, std::uint64_t{9}, std::uint64_t{6}}) {
            cached += spec_flops(i > 0, 1, prompt + i, d, h, g, l);
            uncached += spec_flops(false, 1, prompt + i, d, h, g, l);
        }
        CHECK(run.cached[i].flops.useful == cached);
        CHECK(run.uncached[i].flops.useful == uncached);
    }
}

TEST_CASE("one path alone runs its steps; a raised stop runs none") {
    const GridPoint point{make_config(1, 1, 32, 4, 1, 1), 1};
    GenerationOptions options;
    options.prompt_len = 3;
    options.n_new = 4;
    options.cold_cache = false;
    options.run_uncached = false;
    std::size_t observed = 0;
    const GenerationRun run =
        run_generation(point, options, nullptr, never_stop, [&](DecodePath path, const GenerationStep& step) {
            CHECK(path == DecodePath::cached);
            CHECK(step.index == observed++);
        });
    CHECK(run.cached.size() == 5);
    CHECK(run.uncached.empty());
    CHECK(run.verify_rel_error.empty());
    CHECK(observed == 5);

    const std::atomic<bool> stop{true};
    const GenerationRun stopped = run_generation(point, options, nullptr, stop);
    CHECK(stopped.interrupted);
    CHECK(stopped.cached.empty());
}

TEST_CASE("the time estimate has one entry per step and path, and the uncached steps grow") {
    const GenerationOptions options = estimate_options(64);
    const std::vector<double> seconds = estimate_generation_seconds(estimate_point, options, nullptr, {});
    REQUIRE(seconds.size() == 2 * options.n_steps());
    CHECK(seconds[1] < seconds[0]);  // a decode step is far cheaper than the prefill
    CHECK(seconds.back() > seconds[options.n_steps()]);  // the last uncached step is the longest
    CHECK(generation_memory_bytes(estimate_point, options) > kv_cache_bytes(make_config(1, 576, 1024, 16, 16, 1)));
}

TEST_CASE("a cold generation's estimate adds the timed flush to every step, or a floor from its bytes without one") {
    GenerationOptions options = estimate_options(8);
    options.cold_cache = true;
    Roofline roofline;
    roofline.peak_gflops = 100.0;
    roofline.peak_gbps = 20.0;
    const std::vector<double> no_flush = estimate_generation_seconds(estimate_point, options, &roofline, {});
    const std::vector<double> timed =
        estimate_generation_seconds(estimate_point, options, &roofline, {4'000'000'000, 0.75});
    const std::vector<double> floor = estimate_generation_seconds(estimate_point, options, &roofline, {4'000'000'000, {}});
    REQUIRE(no_flush.size() == 2 * options.n_steps());
    REQUIRE(timed.size() == no_flush.size());
    REQUIRE(floor.size() == no_flush.size());
    for (std::size_t i = 0; i < no_flush.size(); ++i) {
        CAPTURE(i);
        CHECK(timed[i] - no_flush[i] == doctest::Approx(0.75));
        CHECK(floor[i] - no_flush[i] == doctest::Approx(2.0 * 4.0 / 20.0));  // a write and a read at 20 GB/s
    }
}

TEST_CASE("extra columns follow the row columns, before the environment's; a wrong size is refused") {
    const GridPoint point{make_config(1, 4, 32, 4, 4, 1), 1};
    const PathMeasurement measured{{1000}, {}, {}};
    std::vector<ResultRow> rows{make_result_row(DecodePath::cached, point, measured,
                                                step_cost(point.config, DecodePath::cached), RunOptions{}, nullptr,
                                                Environment{}, std::nullopt)};
    const std::vector<ExtraColumn> extra{{"step", {CellValue{std::uint64_t{3}}}},
                                         {"phase", {CellValue{std::string("decode")}}}};
    std::ostringstream csv;
    write_csv_with_extra(csv, rows, extra, Environment{});
    const auto records = test::parse_csv(csv.str());
    REQUIRE(records.size() == 2);
    const std::size_t n_row_columns = row_columns().size();
    CHECK(records[0][n_row_columns] == "step");
    CHECK(records[0][n_row_columns + 1] == "phase");
    CHECK(records[0][n_row_columns + 2] == environment_columns().front().name);
    CHECK(records[1][n_row_columns] == "3");
    CHECK(records[1][n_row_columns + 1] == "decode");
    std::ostringstream json;
    write_json_with_extra(json, rows, extra, Environment{});
    CHECK(json.str().find("\"phase\": \"decode\"") != std::string::npos);
    const std::vector<ExtraColumn> short_column{{"step", {}}};
    CHECK_THROWS_AS(write_csv_with_extra(csv, rows, short_column, Environment{}), std::invalid_argument);
}

TEST_CASE("kvbench generate's csv: one row per step, path and configuration, with the formulas' counts") {
    const std::string csv = test::run_and_capture(std::string(KVBENCH_EXE) +
                                            " generate -p 6 --new 5 -b 2 -d 64 --heads 4 -g 4,1 -l 2 -t 1"
                                            " --cache-state warm --format csv 2>/dev/null");
    const auto records = test::parse_csv(csv);
    REQUIRE(records.size() == 1 + 2 * 2 * 6);
    std::map<std::string, std::size_t> col;
    for (std::size_t i = 0; i < records[0].size(); ++i) col[records[0][i]] = i;
    for (const char* name : {"path", "seq", "flops", "kv_bytes", "reps", "latency_us_median", "speedup", "step",
                             "phase", "prompt", "new_tokens", "git_commit", "cpu_model", "timestamp"}) {
        CHECK(col.contains(name));
    }
    std::map<std::string, std::size_t> rows_per_path;
    for (std::size_t r = 1; r < records.size(); ++r) {
        const auto& row = records[r];
        const auto at = [&](const char* name) { return row.at(col.at(name)); };
        const std::uint64_t step = std::stoull(at("step")), n = std::stoull(at("seq"));
        const std::uint64_t g = std::stoull(at("kv_heads"));
        const bool cached = at("path") == "cached";
        INFO("row " << r);
        CHECK(n == 6 + step);
        CHECK(at("phase") == (step == 0 ? "prefill" : "decode"));
        CHECK(at("reps") == "1");
        CHECK(std::stoull(at("flops")) == spec_flops(cached && step > 0, 2, n, 64, 4, g, 2));
        CHECK(std::stoull(at("kv_bytes")) == spec_kv_bytes(2, n, 64, 4, g, 2));
        CHECK(std::stod(at("latency_us_median")) > 0);
        ++rows_per_path[at("path") + at("kv_heads")];
    }
    CHECK(rows_per_path == std::map<std::string, std::size_t>{{"cached1", 6}, {"cached4", 6}, {"uncached1", 6},
                                                              {"uncached4", 6}});
}
