// `kvbench sweep` as a list of named steps: plan, run context, dry run or confirm, resume, measure, warnings, export, tables, outcome.
#include "cli/sweep_command.hpp"

#include "cli/command_line.hpp"
#include "cli/dry_run.hpp"
#include "cli/exit_status.hpp"
#include "cli/grid_guard.hpp"
#include "cli/interrupt.hpp"
#include "cli/option_conventions.hpp"
#include "cli/output_streams.hpp"
#include "cli/result_warnings.hpp"
#include "cli/sweep_scheduler.hpp"

#include "kvbench/measure/bandwidth_drift.hpp"
#include "kvbench/measure/cache_flush.hpp"
#include "kvbench/measure/memory.hpp"
#include "kvbench/measure/run_context.hpp"
#include "kvbench/measure/runner.hpp"
#include "kvbench/report/export_manager.hpp"
#include "kvbench/report/resume.hpp"
#include "kvbench/report/summary_tables.hpp"
#include "kvbench/report/units.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <iostream>
#include <optional>
#include <utility>

namespace kvbench {

namespace {

// ---- Step: plan -------------------------------------------------------------------------

SweepPlan plan_sweep(const SweepCliOptions& options, const RunMessages& messages) {
    SweepPlan plan = to_sweep_plan(options);
    // Before the streams exist, so -q is honoured here (docs/cli.md: no warnings or messages).
    if (!plan.out.quiet) {
        for (const std::string& skipped : plan.grid.skipped) messages.warning("skipping " + skipped);
    }
    for (const std::string& message : plan.notes) {
        if (!plan.out.quiet) messages.notice(message);
    }
    return plan;
}

// ---- Step: run context ------------------------------------------------------------------

// The roofline of each thread count: --roofline for all, else measured now with
// --measure-roofline, else the saved file, else one measured now (quickly) and saved, so the
// first sweep on a machine has one. A dry run measures nothing.
RooflinePolicy roofline_policy(const SweepPlan& plan) {
    RooflinePolicy policy;
    policy.none = plan.no_roofline;
    policy.given = plan.roofline;
    policy.measure = plan.measure_roofline && !plan.dry_run;
    policy.measure_missing = !plan.dry_run;
    return policy;
}

RunContext prepare_sweep(const SweepPlan& plan, const RunMessages& messages) {
    if (plan.shard) {
        messages.notice(fmt::format("shard {}: {} of the grid's {} points, {:.0f} % of its estimated time (the split "
                                    "every shard computes alike, docs/sharding.md)",
                                    shard_label(*plan.shard), plan.grid.points.size(), plan.n_grid_points,
                                    100 * plan.shard_weight_seconds / plan.grid_weight_seconds));
    }
    RunRequest request;
    request.command_line = command_line();
    if (plan.shard) request.shard = shard_label(*plan.shard);
    request.rooflines = roofline_policy(plan);
    request.max_memory_bytes = plan.max_memory_bytes;
    // --max-memory replaces the machine's own limit: above what is free, a point may be more than
    // the machine can hold, and that is said before anything is allocated.
    if (const std::optional<std::uint64_t> available = available_memory_bytes();
        plan.max_memory_bytes && available && *plan.max_memory_bytes > *available) {
        messages.warning(fmt::format("--max-memory {} is more than the memory available now ({}): a point between "
                                     "the two may fail to allocate or make the machine swap",
                                     format_bytes(*plan.max_memory_bytes), format_bytes(*available)));
    }
    request.memory_of = [&plan](const GridPoint& point, const Environment& env) {
        const MemoryBudget budget = sweep_point_memory(point, plan, env);
        return PointMemory{budget.total_bytes(), largest_term(budget)};
    };
    request.skip_warning = [](const GridPoint& point, const PointMemory& needed, const MemoryLimit& limit) {
        return memory_skip_warning(point_label(point), needed, limit);
    };
    request.near_limit_warning = [](const GridPoint& point, const PointMemory& needed, const MemoryLimit& limit) {
        return memory_near_limit_warning(point_label(point), needed, limit);
    };
    request.skip_summary = [](const std::vector<SkippedPoint>& skipped, std::size_t n_points, const MemoryLimit& limit) {
        return memory_skip_summary(skipped, n_points, limit, point_label, "point");
    };
    request.nothing_fits = "point of the grid";
    request.nothing_fits_hint = "choose a smaller --seq, --batch, --dim or --layers, or raise --max-memory";
    request.estimate_of = [&plan](const GridPoint& point, const Roofline* roofline, const Environment& env) {
        return std::vector<double>{estimate_point_seconds(point, plan.run, roofline, flush_buffer_bytes(plan, env))};
    };
    if (!plan.dry_run) {
        request.before_rooflines = [&plan](std::size_t n_points, double assumed_seconds) {
            confirm_point_count(n_points, assumed_seconds, plan.likely_intent, plan.yes, "kvbench sweep");
        };
    }
    return prepare_run(plan.grid, request, messages);
}

// The grid's time with --paths cached, for the refusal of a long grid (confirm_grid_size):
// nothing where the run does not time both paths, or --verify needs the uncached one anyway.
std::optional<double> cached_path_seconds(const SweepPlan& plan, const RunContext& context) {
    if (!plan.run.run_cached || !plan.run.run_uncached || plan.run.verify) return std::nullopt;
    RunOptions cached = plan.run;
    cached.run_uncached = false;
    const std::uint64_t flush_bytes = flush_buffer_bytes(plan, context.env);
    double seconds = 0;
    for (const GridPoint& point : context.points) {
        seconds += estimate_point_seconds(point, cached, roofline_of(context.rooflines, point.n_threads), flush_bytes);
    }
    return seconds;
}

// ---- Step: dry run ----------------------------------------------------------------------

// The grid with its counts, memory and estimate, on the terminal and in -o/-f's format. With
// --resume, -o names the results to resume from: the plan goes to the terminal only.
int print_dry_run(const SweepPlan& plan, const RunContext& context) {
    OutputPlan out = plan.out;
    if (plan.resume) {
        out.file.reset();
        out.exports.clear();
        out.format = OutputFormat::table;
    }
    return emit_dry_run(sweep_dry_run_sheet(plan, context), out);
}

// ---- Step: resume -----------------------------------------------------------------------

// --resume: the rows of -o that this build measured with these settings; their points are not
// measured again (report/resume.hpp).
GridRows resumed_rows(const SweepPlan& plan, const RunContext& context, const RunMessages& messages) {
    if (!plan.resume) return GridRows{std::vector<std::vector<ResultRow>>(context.points.size()), {}};
    return resume_rows(*plan.out.file, plan.out.format, context.points, plan.run, context.env, messages);
}

// ---- Step: measure (and save after every point) -----------------------------------------

SweepOutcome measure_sweep(const SweepPlan& plan, const RunContext& context, GridRows resumed,
                           ExportManager& exporter, const OutputStreams& streams, const RunMessages& messages) {
    const std::atomic<bool>& stop = install_interrupt_flag();
    std::optional<CacheFlusher> flusher;
    if (plan.run.cold_cache) flusher.emplace(plan.flush, context.env.llc_total_bytes);
    const Evict evict = [&flusher](std::span<const ByteRegion> regions) {
        if (flusher) flusher->flush(regions);
    };
    PointRunner runner(evict);
    SweepScheduler scheduler(plan, context, exporter, streams, messages);
    return scheduler.run(std::move(resumed), runner, evict, stop);
}

// ---- Step: warnings ---------------------------------------------------------------------

// One line each, for all rows at once, with a fix that applies to this run, said after the tables
// so that they are read beside them: noisy rows, rows an order of magnitude slower than the
// machine allows (a busy or oversubscribed machine can time steadily, with a small CV, and still
// wrongly), rows above their roofline, and a bandwidth that drifted from the roofline's. A quick
// roofline that rows beat is measured again first, so the next run does not inherit it.
void warn_about_results(const SweepPlan& plan, const SweepOutcome& outcome, const RunContext& context,
                        const RunMessages& messages) {
    const std::vector<ResultRow> rows = outcome.rows.all();
    const NoiseContext noise{plan.run.n_reps, plan.run.min_time_s, plan.interleave, context.env.n_cores};
    if (const std::optional<std::string> message = noise_warning(rows, noise)) messages.warning(*message);
    if (const std::optional<std::string> message = slow_rows_warning(rows, context.rooflines)) messages.warning(*message);
    const bool stopped = outcome.stop_signal != 0 || outcome.n_finished == 0;
    const Rooflines replaced =
        stopped ? Rooflines{}
                : replace_beaten_quick_rooflines(context.rooflines, threads_above_roofline(rows),
                                                 roofline_policy(plan), messages);
    if (const std::optional<std::string> message = above_roofline_warning(rows, replaced)) messages.warning(*message);
    if (stopped) return;
    Rooflines drift_checked = context.rooflines;
    for (const auto& [n_threads, roofline] : replaced) drift_checked.erase(n_threads);  // just measured
    for (const std::string& drift : bandwidth_drift_warnings(drift_checked, context.env)) messages.warning(drift);
}

// ---- Step: tables -----------------------------------------------------------------------

// After the report: the tables, the growth law a·N^k of each series with three or more contexts
// (docs/generate.md) and the headline, within the terminal's width. Nothing when no point finished.
void print_sweep_tables(const SweepPlan& plan, const SweepOutcome& outcome, const RunContext& context,
                        const ExportResult& exported, const OutputStreams& streams) {
    const std::vector<ResultRow> rows = outcome.rows.all();
    if (rows.empty()) return;
    TableOptions table = plan.table;
    table.width = streams.table_width();
    std::ostream& tables = streams.tables_after(exported);
    write_table(tables, rows, context.env, table);
    tables.flush();
}

// ---- Step: a long run says so -----------------------------------------------------------

// Before a long run starts: how long the points left to measure take, and how not to lose them
// (as generate does).
void announce_long_run(const SweepPlan& plan, const RunContext& context, const GridRows& resumed,
                       const RunMessages& messages) {
    RunEstimate left;
    for (std::size_t i = 0; i < context.points.size(); ++i) {
        if (!resumed.by_point[i].empty()) continue;
        left.total_seconds += context.estimate.point_seconds(i);
        ++left.n_units;
    }
    const std::string keep = resumable_output(plan.out)
                                 ? fmt::format("{} keeps every finished point, and the same command with --resume "
                                               "measures the rest after a stop",
                                               *plan.out.file)
                                 : "-o FILE.csv keeps every finished point, and --resume measures the rest after a stop";
    if (const std::optional<std::string> notice =
            long_run_notice("sweep", left, "point", context.rooflines.empty(), "--dry-run lists them; " + keep)) {
        messages.notice(*notice);
    }
}

}  // namespace

int run_sweep_command(const SweepCliOptions& options) {
    const RunMessages messages = cli_messages();
    const SweepPlan plan = plan_sweep(options, messages);
    const OutputStreams streams(plan.out);
    const RunContext context = prepare_sweep(plan, messages);
    if (plan.dry_run) return print_dry_run(plan, context);
    confirm_grid_size(context.points.size(), context.estimate.total_seconds, plan.likely_intent, plan.yes,
                      "kvbench sweep", cached_path_seconds(plan, context));
    GridRows resumed = resumed_rows(plan, context, messages);
    announce_long_run(plan, context, resumed, messages);
    ExportManager exporter(to_export_plan(plan.out, plan.table, "sweep", "the results"), context.env, messages,
                           std::cout);
    const SweepOutcome outcome = measure_sweep(plan, context, std::move(resumed), exporter, streams, messages);
    const ExportResult exported =
        exporter.finish({outcome.rows.all(), {}}, outcome.stop_signal != 0 ? RunStatus::stopped : RunStatus::finished);
    print_sweep_tables(plan, outcome, context, exported, streams);
    warn_about_results(plan, outcome, context, messages);
    exporter.check_report_stream();
    return report_sweep_outcome(plan, outcome, exported, exporter, streams, messages);
}

}  // namespace kvbench
