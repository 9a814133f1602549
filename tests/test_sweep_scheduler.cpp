// The sweep's scheduler with a fake runner: a failing point is said and the others saved; a stop keeps the finished points.
#include "cli/sweep_scheduler.hpp"

#include "cli/exit_status.hpp"
#include "kvbench/report/read_report.hpp"

#include <doctest/doctest.h>

#include "scratch_dir.hpp"
#include "said.hpp"

#include <atomic>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

using namespace kvbench;
using kvbench::test::ScratchDir;

namespace {

// The CLI tests' tiny grid: N = 16, 33 and G = 4, 1 at D = 64, H = 4, in grid order
// (G=4 N=16), (G=4 N=33), (G=1 N=16), (G=1 N=33).
SweepPlan tiny_plan(const std::string& output) {
    SweepCliOptions options;
    options.seq = "16,33";
    options.dim = "64";
    options.heads = "4";
    options.kv_heads = "4,1";
    options.n_reps = "3";
    options.n_warmup = "1";
    options.cache_state = "warm";
    options.threads = "1";
    options.no_roofline = true;
    options.out.output = output;
    return to_sweep_plan(options);
}

// The context prepare_run would give the plan, without reading the machine.
RunContext tiny_context(const SweepPlan& plan) {
    RunContext context;
    context.env.tool_version = "0.1.0";
    context.env.git_commit = "abc1234";
    context.env.n_cores = 1;
    context.points = plan.grid.points;
    for (std::size_t i = 0; i < context.points.size(); ++i) context.estimate.unit_seconds.push_back({1.0});
    context.estimate.total_seconds = static_cast<double>(context.points.size());
    context.estimate.n_units = context.points.size();
    return context;
}

// Measures every point in no time with the same three samples per path, except that the
// `fail_at`-th call (1-based) throws, and the `stop_at`-th raises `stop` and returns interrupted.
class FakeRunner final : public PointMeasurer {
public:
    FakeRunner(std::size_t fail_at, std::size_t stop_at, std::atomic<bool>* stop)
        : fail_at_(fail_at), stop_at_(stop_at), stop_(stop) {}

    PointMeasurement run(const GridPoint&, const RunOptions&, const std::atomic<bool>&) override {
        ++n_calls;
        if (n_calls == fail_at_) throw std::runtime_error("injected failure");
        PointMeasurement measured;
        if (n_calls == stop_at_) {
            stop_->store(true);
            measured.interrupted = true;
            return measured;
        }
        measured.cached = PathMeasurement{{1000, 1100, 1200}, {}, {}};
        measured.uncached = PathMeasurement{{4000, 4100, 4200}, {}, {}};
        return measured;
    }

    std::size_t n_calls = 0;

private:
    std::size_t fail_at_;
    std::size_t stop_at_;
    std::atomic<bool>* stop_;
};

using kvbench::test::Said;

// (path, N, G) of each row of a report file, in file order.
std::vector<std::tuple<std::string, std::size_t, std::size_t>> rows_in(const std::string& file) {
    std::vector<std::tuple<std::string, std::size_t, std::size_t>> rows;
    for (const SavedRow& saved : read_report_file(file, OutputFormat::csv)) {
        rows.emplace_back(path_name(saved.row.path), saved.row.config.seq_len, saved.row.config.n_kv_heads);
    }
    return rows;
}

GridRows nothing_resumed(const RunContext& context) {
    return GridRows{std::vector<std::vector<ResultRow>>(context.points.size()), {}};
}

}  // namespace

TEST_CASE("a failing point is said with its configuration, and the others are measured and written") {
    const ScratchDir dir("sweep_scheduler");
    const std::string file = (dir.path / "failed.csv").string();
    const SweepPlan plan = tiny_plan(file);
    const RunContext context = tiny_context(plan);
    const OutputStreams streams(plan.out);
    Said said;
    std::ostringstream stdout_report;
    ExportManager exporter(to_export_plan(plan.out, plan.table, "sweep", "the results"), context.env, said.messages(),
                           stdout_report);
    std::atomic<bool> stop{false};
    FakeRunner runner(2, 0, &stop);
    SweepScheduler scheduler(plan, context, exporter, streams, said.messages());
    const SweepOutcome outcome = scheduler.run(nothing_resumed(context), runner, {}, stop);

    REQUIRE(said.errors.size() == 1);
    CHECK(said.errors[0] == "point 2 of 4 failed (B=1 N=33 D=64 H=4 G=4 L=1 T=1 (MHA), cached and uncached, warm "
                            "cache): injected failure; the sweep goes on");
    CHECK(outcome.n_points == 4);
    CHECK(outcome.n_finished == 4);
    CHECK(outcome.failures.size() == 1);
    // Saved as each point finished: the file already holds the three measured points, in grid order.
    const std::vector<std::tuple<std::string, std::size_t, std::size_t>> expected{
        {"cached", 16, 4}, {"uncached", 16, 4}, {"cached", 16, 1}, {"uncached", 16, 1}, {"cached", 33, 1}, {"uncached", 33, 1}};
    CHECK(rows_in(file) == expected);

    const ExportResult exported = exporter.finish({outcome.rows.all(), {}});
    CHECK(rows_in(file) == expected);
    CHECK(report_sweep_outcome(plan, outcome, exported, exporter, streams, said.messages()) == exit_failure);
    REQUIRE(said.errors.size() == 2);
    CHECK(said.errors[1] == "1 of 4 points failed (listed above); " + file + " holds the 6 rows measured");
}

TEST_CASE("a stop during a point keeps the finished points and drops the one that was running") {
    const ScratchDir dir("sweep_scheduler");
    const std::string file = (dir.path / "stopped.csv").string();
    const SweepPlan plan = tiny_plan(file);
    const RunContext context = tiny_context(plan);
    const OutputStreams streams(plan.out);
    Said said;
    std::ostringstream stdout_report;
    ExportManager exporter(to_export_plan(plan.out, plan.table, "sweep", "the results"), context.env, said.messages(),
                           stdout_report);
    std::atomic<bool> stop{false};
    FakeRunner runner(0, 3, &stop);
    SweepScheduler scheduler(plan, context, exporter, streams, said.messages());
    const SweepOutcome outcome = scheduler.run(nothing_resumed(context), runner, {}, stop);

    CHECK(runner.n_calls == 3);
    CHECK(outcome.n_finished == 2);
    CHECK(outcome.failures.empty());
    CHECK(said.errors.empty());
    const std::vector<std::tuple<std::string, std::size_t, std::size_t>> expected{
        {"cached", 16, 4}, {"uncached", 16, 4}, {"cached", 33, 4}, {"uncached", 33, 4}};
    CHECK(rows_in(file) == expected);
}

TEST_CASE("points the resumed rows hold are not measured again") {
    const ScratchDir dir("sweep_scheduler");
    const std::string file = (dir.path / "resumed.csv").string();
    const SweepPlan plan = tiny_plan(file);
    const RunContext context = tiny_context(plan);
    const OutputStreams streams(plan.out);
    Said said;
    std::ostringstream stdout_report;
    ExportManager exporter(to_export_plan(plan.out, plan.table, "sweep", "the results"), context.env, said.messages(),
                           stdout_report);
    std::atomic<bool> stop{false};
    FakeRunner first_runner(0, 0, &stop);
    SweepScheduler scheduler(plan, context, exporter, streams, said.messages());
    const SweepOutcome first = scheduler.run(nothing_resumed(context), first_runner, {}, stop);
    GridRows resumed = nothing_resumed(context);
    resumed.by_point[0] = first.rows.by_point[0];
    resumed.by_point[3] = first.rows.by_point[3];

    FakeRunner second_runner(0, 0, &stop);
    const SweepOutcome second = scheduler.run(std::move(resumed), second_runner, {}, stop);
    CHECK(second_runner.n_calls == 2);
    CHECK(second.n_points == 2);
    CHECK(second.n_resumed == 2);
    CHECK(second.rows.all().size() == 8);
}
