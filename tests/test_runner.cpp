#include "kvbench/measure/runner.hpp"
#include "kvbench/measure/resident_points.hpp"
#include "kvbench/measure/roofline.hpp"

#include "kvbench/engine/cost_model.hpp"
#include "kvbench/engine/decoder.hpp"
#include "kvbench/report/report.hpp"
#include "fake_clock.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <memory>

using namespace kvbench;
using kvbench::test::make_config;

namespace {
using kvbench::test::never_stop;

// On the fake clock an eviction makes a whole second pass (it reads the clock once, in a
// fake_eviction), so a sample holding one would hold 1e9 ns.
using kvbench::test::fake_now_ns;
using kvbench::test::fake_ns;
void fake_eviction(std::span<const ByteRegion>) { fake_ns += 1'000'000'000; }
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
    CacheFlusher flusher(FlushMethod::stream, std::size_t{1} << 20);
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

TEST_CASE("the time estimate counts the forwards that run: the cache's prefill only where a cache is") {
    const GridPoint point{make_config(1, 256, 64, 4, 4, 1), 1};
    RunOptions options;
    options.n_reps = 3;
    options.n_warmup = 1;
    options.cold_cache = false;
    const Roofline assumed = roofline_or_assumed(nullptr);
    const double forward_s = estimate_step_seconds(point.config, DecodePath::uncached, assumed);
    const double step_s = estimate_step_seconds(point.config, DecodePath::cached, assumed);
    RunOptions uncached_only = options;
    uncached_only.run_cached = false;
    // No cache to fill: the warm-up and the repetitions are every forward.
    CHECK(estimate_point_seconds(point, uncached_only, nullptr, 0) == doctest::Approx(4 * forward_s));
    // Both paths: one more forward fills the cache the cached steps read.
    CHECK(estimate_point_seconds(point, options, nullptr, 0) == doctest::Approx(5 * forward_s + 4 * step_s));
}

TEST_CASE("an eviction is never inside the timer: a slow one shows in no sample") {
    const GridPoint point{make_config(1, 16, 64, 4, 4, 1), 1};
    RunOptions options;
    options.n_reps = 3;
    options.n_warmup = 1;
    options.cold_cache = true;
    options.now_ns = fake_now_ns;
    std::size_t n_evictions = 0;
    PointRunner runner([&](std::span<const ByteRegion> regions) {
        ++n_evictions;
        fake_eviction(regions);
    });
    const PointMeasurement m = runner.run(point, options, never_stop);
    REQUIRE(m.cached);
    REQUIRE(m.uncached);
    // Once before each timed repetition, never before a warm-up.
    CHECK(n_evictions == 6);
    for (const auto* path : {&*m.cached, &*m.uncached}) {
        // Two readings around the step and nothing else: an eviction inside would add 1e9.
        CHECK(path->samples_ns == std::vector<std::int64_t>{1, 1, 1});
    }
}

TEST_CASE("a warm cache is never evicted") {
    std::size_t n_evictions = 0;
    PointRunner runner([&](std::span<const ByteRegion>) { ++n_evictions; });
    RunOptions options;
    options.n_reps = 2;
    options.cold_cache = false;
    runner.run({make_config(1, 16, 64, 4, 4, 1), 1}, options, never_stop);
    CHECK(n_evictions == 0);
}

TEST_CASE("adaptive repetitions: at least the floor, at most the cap, and stop once the budget is spent") {
    const GridPoint point{make_config(1, 16, 64, 4, 4, 1), 1};
    RunOptions options;
    options.run_uncached = false;
    options.min_reps = 5;
    options.max_reps = 7;
    options.n_warmup = 1;
    SUBCASE("a budget far beyond the step: the cap") {
        options.min_time_s = 3600;
        PointRunner runner(nullptr);
        CHECK(runner.run(point, options, never_stop).cached->samples_ns.size() == 7);
    }
    SUBCASE("a budget spent by the first repetition: the floor") {
        options.min_time_s = 1e-3;
        options.cold_cache = true;
        options.now_ns = fake_now_ns;
        // Each eviction alone outlasts the budget (a fake second), and it counts: it is wall
        // time the user waits. Without it the fake clock would give the cap, 7.
        PointRunner runner(fake_eviction);
        CHECK(runner.run(point, options, never_stop).cached->samples_ns.size() == 5);
    }
    SUBCASE("a budget the repetitions never reach on the clock: the cap") {
        options.min_time_s = 1e-3;
        options.cold_cache = false;
        options.now_ns = fake_now_ns;  // 1 ns a reading: a few ns in all
        PointRunner runner(nullptr);
        CHECK(runner.run(point, options, never_stop).cached->samples_ns.size() == 7);
    }
    SUBCASE("a fixed count ignores the budget") {
        options.min_time_s = 0;
        options.n_reps = 9;
        PointRunner runner(nullptr);
        CHECK(runner.run(point, options, never_stop).cached->samples_ns.size() == 9);
    }
}

namespace {
// Two clocks that count their readings: one where each reading is 1 ns after the last, and one
// where it is a second after, so a warm-up step outlasts any budget of --min-time.
std::int64_t n_readings = 0;
std::int64_t nanosecond_clock() { return ++n_readings; }
std::int64_t second_clock() { return ++n_readings * 1'000'000'000; }

std::int64_t readings_of_a_run(const GridPoint& point, const RunOptions& options) {
    n_readings = 0;
    PointRunner runner(nullptr);
    REQUIRE(runner.run(point, options, never_stop).cached->samples_ns.size() == 1);
    return n_readings;
}
}  // namespace

TEST_CASE("with --min-time a warm-up stops after a step once it has taken half of it; with --reps it runs them all") {
    // The warm-up reads the clock once before it and once after each of its steps; the rest of
    // the run reads it as often whatever the clock says (one timed repetition), so the two
    // clocks' readings differ by the warm-up steps left out.
    const GridPoint point{make_config(1, 16, 64, 4, 4, 1), 1};
    RunOptions options;
    options.run_uncached = false;
    options.cold_cache = false;
    options.n_warmup = 3;
    options.min_time_s = 1e-3;
    options.min_reps = options.max_reps = 1;
    options.now_ns = nanosecond_clock;
    const std::int64_t all_three = readings_of_a_run(point, options);
    options.now_ns = second_clock;
    CHECK(readings_of_a_run(point, options) == all_three - 2);  // one step of three
    // A fixed count (--reps): the warm-up runs its three steps whatever the clock.
    options.min_time_s = 0;
    options.n_reps = 1;
    options.now_ns = nanosecond_clock;
    const std::int64_t fixed_fast = readings_of_a_run(point, options);
    options.now_ns = second_clock;
    CHECK(readings_of_a_run(point, options) == fixed_fast);
}

TEST_CASE("the repetition policy is named in a few words") {
    RunOptions options;
    CHECK(describe_reps_policy(options) == "reps=20 warmup=3");
    options.min_time_s = 0.25;
    CHECK(describe_reps_policy(options) == "min-time=0.25s reps=5..1000 warmup<=3");
    CHECK_FALSE(enough_repetitions(options, 4, 10.0));
    CHECK_FALSE(enough_repetitions(options, 6, 0.2));
    CHECK(enough_repetitions(options, 6, 0.25));
    CHECK(enough_repetitions(options, 1000, 0.0));
}

TEST_CASE("interleaved rounds finish every point once, with every repetition, resident or rebuilt") {
    const std::vector<GridPoint> points{{make_config(1, 16, 64, 4, 4, 1), 1},
                                        {make_config(1, 40, 64, 4, 2, 1), 1},
                                        {make_config(2, 24, 32, 4, 1, 2), 1}};
    RunOptions options;
    options.n_reps = 4;
    options.n_warmup = 1;
    options.verify = true;
    for (const std::uint64_t budget : {~std::uint64_t{0}, std::uint64_t{0}}) {
        for (const bool cold : {false, true}) {
            options.cold_cache = cold;
            INFO("budget " << budget << ", cold " << cold);
            std::vector<std::size_t> started;
            std::vector<std::size_t> finished;
            std::size_t n_evictions = 0;
            InterleaveOptions interleave;
            interleave.resident_budget_bytes = budget;
            run_interleaved(
                points, options, [&](std::span<const ByteRegion>) { ++n_evictions; }, interleave, never_stop,
                [&](std::size_t i) { started.push_back(i); },
                [&](std::size_t i, const PointMeasurement* m, std::exception_ptr error) {
                    CHECK_FALSE(error);
                    REQUIRE(m != nullptr);
                    REQUIRE(m->cached);
                    REQUIRE(m->uncached);
                    CHECK(m->cached->samples_ns.size() == 4);
                    CHECK(m->uncached->samples_ns.size() == 4);
                    CHECK(m->cached->flops.useful == step_flops(points[i].config, DecodePath::cached));
                    REQUIRE(m->verify_rel_error);
                    CHECK(*m->verify_rel_error < 1e-4);
                    finished.push_back(i);
                });
            std::sort(started.begin(), started.end());
            std::sort(finished.begin(), finished.end());
            CHECK(started == std::vector<std::size_t>{0, 1, 2});
            CHECK(finished == std::vector<std::size_t>{0, 1, 2});
            CHECK(n_evictions == (cold ? 3 * 2 * 4 : 0));
        }
    }
}

TEST_CASE("a raised stop flag ends interleaved rounds with no point finished") {
    const std::atomic<bool> stop{true};
    std::size_t n_finished = 0;
    run_interleaved({{make_config(1, 16, 64, 4, 4, 1), 1}}, RunOptions{}, {}, InterleaveOptions{}, stop,
                    [](std::size_t) {}, [&](std::size_t, const PointMeasurement*, std::exception_ptr) { ++n_finished; });
    CHECK(n_finished == 0);
}

TEST_CASE("resident points keep within their budget, releasing the least recently used first") {
    kvbench::ResidentPoints<int> resident(100);
    resident.insert(0, std::make_unique<int>(10), 40);
    resident.insert(1, std::make_unique<int>(11), 40);
    REQUIRE(resident.find(0) != nullptr);  // 0 is now more recent than 1
    resident.make_room(40);                // 120 > 100: the least recent, 1, goes
    CHECK(resident.find(1) == nullptr);
    CHECK(*resident.find(0) == 10);
    CHECK(resident.resident_bytes() == 40);
    resident.insert(2, std::make_unique<int>(12), 40);
    resident.make_room(500);  // larger than the budget: every point goes, and the new one will stay alone
    CHECK(resident.size() == 0);
    CHECK(resident.resident_bytes() == 0);
    resident.release(7);  // not resident: nothing happens
    CHECK(resident.size() == 0);
}

TEST_CASE("a full layer of experts and bf16 weights: rows count the experts its router read, and the weights' error") {
    ModelConfig config = make_config(3, 20, 64, 4, 2, 2);
    config.block = BlockKind::full;
    config.weight_dtype = WeightDtype::bf16;
    config.moe = {8, 2, 1, 32, 0};  // E=8, K=2, S=1, Fe=32
    const GridPoint point{config, 2};
    RunOptions options;
    options.n_reps = 2;
    options.n_warmup = 0;
    options.cold_cache = false;
    options.verify = true;
    options.check = true;
    PointRunner runner(nullptr);
    const PointMeasurement m = runner.run(point, options, never_stop);
    REQUIRE(m.cached);
    REQUIRE(m.uncached);
    REQUIRE(m.verify_rel_error);
    CHECK(*m.verify_rel_error < 1e-4);
    REQUIRE(m.check_rel_error);
    CHECK(*m.check_rel_error < 1e-4);
    // Three tokens route to 2 of 8 experts each: between 2 and 6 read in each of the cached
    // step's two layers; the uncached forward's 60 tokens may reach all 8 of each.
    REQUIRE(m.cached->experts_read);
    CHECK(*m.cached->experts_read >= 2 * 2);
    CHECK(*m.cached->experts_read <= 2 * 6);
    REQUIRE(m.uncached->experts_read);
    CHECK(*m.uncached->experts_read <= 2 * 8);
    // bf16 keeps 8 bits of mantissa: the step moves by about its rounding, never by nothing.
    REQUIRE(m.weight_rel_error);
    CHECK(*m.weight_rel_error > 0);
    CHECK(*m.weight_rel_error < 2e-2);

    const std::vector<ResultRow> rows = make_result_rows(point, m, options, nullptr, Environment{});
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].experts_read == m.cached->experts_read);
    CHECK(rows[0].weight_rel_error == m.weight_rel_error);
    // The bytes are those of the experts the router chose, not the bound.
    CHECK(rows[0].cost == step_cost(config, DecodePath::cached, *m.cached->experts_read));
    CHECK(rows[0].cost.flops == m.cached->flops.useful);
    CHECK(rows[1].cost.flops == m.uncached->flops.useful);
}

TEST_CASE("f32 weights and a dense MLP leave the experts and weight error columns empty") {
    ModelConfig config = make_config(1, 12, 64, 4, 2, 1);
    config.block = BlockKind::full;
    config.ffn_dim = 96;
    RunOptions options;
    options.n_reps = 1;
    options.n_warmup = 0;
    options.cold_cache = false;
    PointRunner runner(nullptr);
    const PointMeasurement m = runner.run(GridPoint{config, 1}, options, never_stop);
    REQUIRE(m.cached);
    CHECK_FALSE(m.cached->experts_read);
    CHECK_FALSE(m.weight_rel_error);
    CHECK(m.cached->flops.useful == step_flops(config, DecodePath::cached));
}
