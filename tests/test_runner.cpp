#include "kvbench/measure/runner.hpp"

#include "kvbench/engine/cost_model.hpp"
#include "kvbench/engine/decoder.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

using namespace kvbench;
using kvbench::test::make_config;

namespace {
const std::atomic<bool> never_stop{false};
}

TEST_CASE("a measured point has one sample per rep and the spec's flops on both paths") {
    const GridPoint point{make_config(2, 50, 64, 4, 2, 2), 2};
    RunOptions options;
    options.n_reps = 3;
    options.n_warmup = 1;
    options.cold_cache = false;
    options.verify = true;
    PointRunner runner(nullptr);
    const PointMeasurement m = runner.run(point, options, never_stop);
    REQUIRE(m.cached);
    REQUIRE(m.uncached);
    CHECK_FALSE(m.interrupted);
    CHECK(m.cached->samples_ns.size() == 3);
    CHECK(m.uncached->samples_ns.size() == 3);
    for (std::int64_t ns : m.cached->samples_ns) CHECK(ns > 0);
    CHECK(m.cached->flops.useful == step_flops(point.config, DecodePath::cached));
    CHECK(m.uncached->flops.useful == step_flops(point.config, DecodePath::uncached));
    REQUIRE(m.verify_rel_error);
    CHECK(*m.verify_rel_error < 1e-4);
}

TEST_CASE("verify works when only one path is timed, and a cold cache flushes between reps") {
    const GridPoint point{make_config(1, 80, 64, 4, 1, 1), 1};
    CacheFlusher flusher(std::size_t{1} << 20);
    PointRunner runner(&flusher);
    for (const bool cached_only : {true, false}) {
        RunOptions options;
        options.run_cached = cached_only;
        options.run_uncached = !cached_only;
        options.n_reps = 2;
        options.verify = true;
        const PointMeasurement m = runner.run(point, options, never_stop);
        CHECK(m.cached.has_value() == cached_only);
        CHECK(m.uncached.has_value() == !cached_only);
        REQUIRE(m.verify_rel_error);
        CHECK(*m.verify_rel_error < 1e-4);
    }
    CHECK(flusher.checksum() > 0);
}

TEST_CASE("a raised stop flag interrupts the point before it is measured") {
    const std::atomic<bool> stop{true};
    PointRunner runner(nullptr);
    const PointMeasurement m = runner.run({make_config(1, 16, 64, 4, 4, 1), 1}, RunOptions{}, stop);
    CHECK(m.interrupted);
}

TEST_CASE("the time estimate grows with context and with repetitions") {
    RunOptions options;
    const GridPoint short_point{make_config(1, 128, 1024, 16, 16, 1), 2};
    const GridPoint long_point{make_config(1, 4096, 1024, 16, 16, 1), 2};
    CHECK(estimate_point_seconds(long_point, options, nullptr, 0) >
          estimate_point_seconds(short_point, options, nullptr, 0));
    RunOptions more = options;
    more.n_reps = 100;
    CHECK(estimate_point_seconds(short_point, more, nullptr, 0) >
          estimate_point_seconds(short_point, options, nullptr, 0));
}
