// `kvbench sweep` as a list of named steps: plan, run context, dry run or confirm, resume, measure, warnings, export, tables, outcome.
#include "cli/sweep_command.hpp"

#include "cli/command_line.hpp"
#include "cli/exit_status.hpp"
#include "cli/grid_guard.hpp"
#include "cli/growth_summary.hpp"
#include "cli/interrupt.hpp"
#include "cli/option_conventions.hpp"
#include "cli/output_streams.hpp"
#include "cli/result_warnings.hpp"
#include "cli/sweep_scheduler.hpp"

#include "kvbench/measure/bandwidth_drift.hpp"
#include "kvbench/measure/cache_flush.hpp"
#include "kvbench/measure/run_context.hpp"
#include "kvbench/report/export_manager.hpp"
#include "kvbench/report/resume.hpp"
#include "kvbench/report/summary_tables.hpp"
#include "kvbench/report/units.hpp"

#include <fmt/format.h>

#include <iostream>
#include <optional>

namespace kvbench {

namespace {

// ---- Step: plan -------------------------------------------------------------------------

SweepPlan plan_sweep(const SweepCliOptions& options, const RunMessages& messages) {
    SweepPlan plan = to_sweep_plan(options);
    for (const std::string& skipped : plan.grid.skipped) messages.warning("skipping " + skipped);
    for (const std::string& message : plan.notes) {
        if (!plan.out.quiet) messages.notice(message);  // -q silences messages once the streams exist
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
    request.memory_of = [&plan](const GridPoint& point, const Environment& env) {
        const MemoryBudget budget = sweep_point_memory(point, plan, env);
        return PointMemory{budget.total_bytes(), largest_term(budget)};
    };
    request.skip_warning = [](const GridPoint& point, const PointMemory& needed, const MemoryLimit& limit) {
        return memory_skip_warning(point_label(point), needed, limit);
    };
    request.nothing_fits = "point of the grid";
    request.nothing_fits_hint = "choose a smaller --seq, --batch, --dim or --layers, or raise --max-memory";
    request.estimate_of = [&plan](const GridPoint& point, const Roofline* roofline, const Environment& env) {
        return std::vector<double>{estimate_point_seconds(point, plan.run, roofline, flush_buffer_bytes(plan, env))};
    };
    return prepare_run(plan.grid, request, messages);
}

// ---- Step: dry run ----------------------------------------------------------------------

int print_dry_run(const SweepPlan& plan, const RunContext& context) {
    TextTable table{"Dry run: the grid, nothing measured",
                    {"point", "T", "grouping", "cached", "uncached", "KV cache", "weights", "scratch",
                     "inputs", "flush+probe", "memory", "est. time"},
                    {Align::left, Align::right, Align::left, Align::right, Align::right, Align::right,
                     Align::right, Align::right, Align::right, Align::right, Align::right, Align::right},
                    {},
                    {}};
    for (std::size_t i = 0; i < context.points.size(); ++i) {
        const GridPoint& point = context.points[i];
        auto flops = [&](bool run, DecodePath path) {
            return run ? format_flops(static_cast<double>(step_flops(point.config, path))) : std::string("-");
        };
        const MemoryBudget budget = sweep_point_memory(point, plan, context.env);
        table.lines.push_back({describe(point.config), fmt::format("{}", point.n_threads),
                               grouping_label(point.config.n_heads, point.config.n_kv_heads),
                               flops(plan.run.run_cached, DecodePath::cached),
                               flops(times_uncached(point, plan.run), DecodePath::uncached),
                               format_bytes(kv_cache_bytes(point.config)), format_bytes(budget.weights_bytes),
                               format_bytes(budget.scratch_bytes), format_bytes(budget.inputs_bytes),
                               format_bytes(budget.flush_bytes + budget.probe_bytes), format_bytes(budget.total_bytes()),
                               format_duration_ns(context.estimate.point_seconds(i) * 1e9)});
    }
    table.footnote = fmt::format(
        "{}, about {} in all. FLOPs per step (uncached '-': timed at the configuration's first "
        "--kv-dtype); memory is what the point allocates (the KV cache, with the f32 copy a reduced type "
        "holds while it is set up, weights, scratch and inputs, plus the cold-cache flush buffer and the "
        "bandwidth probe); time {}.",
        plural(context.points.size(), "point"), format_duration_ns(context.estimate.total_seconds * 1e9),
        context.rooflines.empty()
            ? fmt::format("assumes {} (run `kvbench roofline` for this machine's)", describe_assumed_roofline())
            : "from the saved roofline");
    write_text_table(std::cout, table);
    check_report_stream(std::cout);
    return exit_ok;
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

// One line each, for all rows at once, with a fix that applies to this run: noisy rows, rows an
// order of magnitude slower than the machine allows (a busy or oversubscribed machine can time
// steadily, with a small CV, and still wrongly), and a bandwidth that drifted from the roofline's.
void warn_about_results(const SweepPlan& plan, const SweepOutcome& outcome, const RunContext& context,
                        const RunMessages& messages) {
    const std::vector<ResultRow> rows = outcome.rows.all();
    const NoiseContext noise{plan.run.n_reps, plan.run.min_time_s, plan.interleave, context.env.n_cores};
    if (const std::optional<std::string> message = noise_warning(rows, noise)) messages.warning(*message);
    if (const std::optional<std::string> message = slow_rows_warning(rows, context.rooflines)) messages.warning(*message);
    if (outcome.stop_signal != 0 || outcome.n_finished == 0) return;
    for (const std::string& drift : bandwidth_drift_warnings(context.rooflines, context.env)) messages.warning(drift);
}

// ---- Step: tables -----------------------------------------------------------------------

// After the report: the tables and the growth law a·N^k of each series with three or more
// contexts (docs/generate.md).
void print_sweep_tables(const SweepPlan& plan, const SweepOutcome& outcome, const RunContext& context,
                        const ExportResult& exported, const OutputStreams& streams) {
    const std::vector<ResultRow> rows = outcome.rows.all();
    std::ostream& tables = streams.tables_after(exported);
    write_table(tables, rows, context.env, plan.table);
    if (const std::optional<TextTable> growth = growth_table(rows)) {
        tables << '\n';
        write_text_table(tables, *growth);
    }
    tables.flush();
}

}  // namespace

int run_sweep_command(const SweepCliOptions& options) {
    const RunMessages messages = cli_messages();
    const SweepPlan plan = plan_sweep(options, messages);
    const OutputStreams streams(plan.out);
    const RunContext context = prepare_sweep(plan, messages);
    if (plan.dry_run) return print_dry_run(plan, context);
    confirm_grid_size(context.points.size(), context.estimate.total_seconds, plan.likely_intent, plan.yes,
                      "kvbench sweep");
    ExportManager exporter(to_export_plan(plan.out, plan.table, "sweep", "the results"), context.env, messages,
                           std::cout);
    const SweepOutcome outcome =
        measure_sweep(plan, context, resumed_rows(plan, context, messages), exporter, streams, messages);
    warn_about_results(plan, outcome, context, messages);
    const ExportResult exported =
        exporter.finish({outcome.rows.all(), {}}, outcome.stop_signal != 0 ? RunStatus::stopped : RunStatus::finished);
    print_sweep_tables(plan, outcome, context, exported, streams);
    exporter.check_report_stream();
    return report_sweep_outcome(plan, outcome, exported, exporter, streams, messages);
}

}  // namespace kvbench
