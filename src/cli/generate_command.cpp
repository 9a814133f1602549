// `kvbench generate` as a list of named steps: plan, run context, confirm, measure (saving each configuration), export, tables, outcome.
#include "cli/generate_command.hpp"

#include "cli/command_line.hpp"
#include "cli/dry_run.hpp"
#include "cli/exit_status.hpp"
#include "cli/generation_tables.hpp"
#include "cli/grid_guard.hpp"
#include "cli/interrupt.hpp"
#include "cli/option_conventions.hpp"
#include "cli/output_streams.hpp"
#include "cli/progress.hpp"
#include "cli/result_warnings.hpp"

#include "kvbench/measure/cache_flush.hpp"
#include "kvbench/measure/run_context.hpp"
#include "kvbench/measure/verification.hpp"
#include "kvbench/report/export_manager.hpp"
#include "kvbench/report/generation_rows.hpp"
#include "kvbench/report/units.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstring>
#include <iostream>
#include <numeric>
#include <optional>
#include <vector>

namespace kvbench {

namespace {

// What measuring hands on: every finished path and row, and what --verify found.
struct GenerationOutcome {
    std::vector<GenerationPath> paths;         // one per configuration and path
    ReportRows rows;                           // one per step, path and configuration, with the step columns
    VerifyTally verified;
    std::vector<std::string> verify_failures;  // one line per step whose paths disagree
    bool interrupted = false;
};

// ---- Step: plan -------------------------------------------------------------------------

GeneratePlan plan_generation(const GenerateCliOptions& options, const RunMessages& messages) {
    GeneratePlan plan = to_generate_plan(options);
    // Before the streams exist, so -q is honoured here (docs/cli.md: no warnings or messages).
    if (!plan.out.quiet) {
        for (const std::string& skipped : plan.grid.skipped) messages.warning("skipping " + skipped);
    }
    return plan;
}

// ---- Step: run context ------------------------------------------------------------------

std::uint64_t generation_flush_bytes(const GeneratePlan& plan, const Environment& env) {
    return plan.generation.cold_cache ? stream_flush_bytes(env.llc_total_bytes) : 0;
}

// The cold cache's flush between steps, built once the configurations are known to fit (its
// buffer is counted with each of them) and timed once for the estimate: the floor its bytes give
// was 40 % under the flush's real time on a Xeon guest (docs/generate.md). A dry run builds none.
struct GenerationFlush {
    std::optional<CacheFlusher> flusher;
    std::optional<double> seconds;

    CacheFlusher* get() { return flusher ? &*flusher : nullptr; }
    void build(const Environment& env) {
        if (flusher) return;
        // A generation's buffers change at every step, so its cold cache streams a buffer
        // through the LLCs instead of evicting a list of regions (docs/generate.md).
        flusher.emplace(FlushMethod::stream, env.llc_total_bytes);
        const auto start = std::chrono::steady_clock::now();
        flusher->flush();
        seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
};

// A generation uses the roofline of each thread count for the estimate and roofline_pct: the
// --roofline file, else one measured first with --measure-roofline, else the saved one. It never
// measures a missing one by itself: a long generation should not start with a surprise.
RunContext prepare_generation(const GeneratePlan& plan, GenerationFlush& flush, const RunMessages& messages) {
    RunRequest request;
    request.command_line = command_line();
    request.rooflines.none = plan.no_roofline;
    request.rooflines.given = plan.roofline;
    request.rooflines.measure = plan.measure_roofline && !plan.dry_run;
    request.rooflines.measure_missing = false;
    request.memory_of = [&plan](const GridPoint& point, const Environment& env) {
        return PointMemory{generation_memory_bytes(point, plan.generation) + generation_flush_bytes(plan, env), {}};
    };
    request.skip_warning = [](const GridPoint& point, const PointMemory& needed, const MemoryLimit& limit) {
        return memory_skip_warning(shape_label(point), needed, limit);
    };
    request.near_limit_warning = [](const GridPoint& point, const PointMemory& needed, const MemoryLimit& limit) {
        return memory_near_limit_warning(shape_label(point), needed, limit);
    };
    request.skip_summary = [](const std::vector<SkippedPoint>& skipped, std::size_t n_points, const MemoryLimit& limit) {
        return memory_skip_summary(skipped, n_points, limit, [](const GridPoint& p) { return shape_label(p); },
                                   "configuration");
    };
    request.nothing_fits = "configuration";
    request.nothing_fits_hint = "choose a smaller --prompt, --new, --batch, --dim or --layers";
    request.estimate_of = [&plan, &flush](const GridPoint& point, const Roofline* roofline, const Environment& env) {
        if (plan.generation.cold_cache && !plan.dry_run) flush.build(env);
        return estimate_generation_seconds(point, plan.generation, roofline,
                                           FlushCost{generation_flush_bytes(plan, env), flush.seconds});
    };
    if (!plan.dry_run) {
        request.before_rooflines = [&plan](std::size_t n_points, double assumed_seconds) {
            confirm_point_count(n_points, assumed_seconds, plan.likely_intent, plan.yes, "kvbench generate");
        };
    }
    return prepare_run(plan.grid, request, messages);
}

// The generation's time with --paths cached, for the refusal of a long run (confirm_grid_size):
// each configuration's cached steps, which its estimate lists first; nothing where the run does
// not time both paths, or --verify needs the uncached one anyway.
std::optional<double> cached_path_seconds(const GeneratePlan& plan, const RunContext& context) {
    const GenerationOptions& generation = plan.generation;
    if (!generation.run_cached || !generation.run_uncached || generation.verify) return std::nullopt;
    double seconds = 0;
    for (const std::vector<double>& steps : context.estimate.unit_seconds) {
        const std::size_t n_cached = std::min(generation.n_steps(), steps.size());
        seconds = std::accumulate(steps.begin(), steps.begin() + static_cast<std::ptrdiff_t>(n_cached), seconds);
    }
    return seconds;
}

// The uncached path grows as N²: say how long the run will take before starting it.
void announce_long_run(const RunContext& context, const RunMessages& messages) {
    if (const std::optional<std::string> notice =
            long_run_notice("generation", context.estimate, "step", context.rooflines.empty(),
                            "--dry-run lists the configurations; lower --new or --prompt, or use --paths cached, "
                            "for a shorter run")) {
        messages.notice(*notice);
    }
}

// ---- Step: measure (and save after every configuration) ---------------------------------

// A reduced cache is held to its type's tolerance (docs/model.md), and reported apart.
void judge_generation(const GridPoint& point, const std::vector<double>& verify_rel_error, GenerationOutcome& outcome) {
    for (std::size_t step = 0; step < verify_rel_error.size(); ++step) {
        const double error = verify_rel_error[step];
        if (!outcome.verified.add(point.config, error)) {
            outcome.verify_failures.push_back(fmt::format("{} step {}: relative error {:.3g} (tolerance {:.2g})",
                                                          shape_label(point), step, error,
                                                          verify_tolerance(point.config)));
        }
    }
}

// Each configuration's rows are saved as soon as it finishes, as a sweep's points are.
GenerationOutcome measure_generations(const GeneratePlan& plan, const RunContext& context, GenerationFlush& flush,
                                      ExportManager& exporter, const OutputStreams& streams) {
    const std::atomic<bool>& stop = install_interrupt_flag();
    if (plan.generation.cold_cache) flush.build(context.env);
    const RunEstimate& estimate = context.estimate;
    Progress progress(streams.quiet() ? ProgressMode::none : ProgressMode::auto_detect, estimate.n_units,
                      estimate.total_seconds);
    GenerationOutcome outcome;
    outcome.rows = generation_rows({}, plan.generation, {}, nullptr, context.env);  // no rows yet, the step columns
    exporter.start(outcome.rows);
    std::size_t step_counter = 0;
    for (std::size_t p = 0; p < context.points.size() && !outcome.interrupted; ++p) {
        const GridPoint& point = context.points[p];
        std::size_t local = 0;
        auto observe = [&](DecodePath path, const GenerationStep& step) {
            progress.finish_point(step_counter, shape_label(point), std::nullopt, std::nullopt,
                                  estimate.unit_seconds[p][local++]);
            progress.start_point(std::min(step_counter + 1, estimate.n_units - 1),
                                 fmt::format("{} {} step {}/{} (N={})", shape_label(point), path_name(path),
                                             step.index, plan.generation.n_new, step.seq_len));
            ++step_counter;
        };
        progress.start_point(step_counter, shape_label(point));
        GenerationRun run = run_generation(point, plan.generation, flush.get(), stop, observe);
        outcome.interrupted = run.interrupted;
        judge_generation(point, run.verify_rel_error, outcome);
        std::vector<GenerationPath> paths;
        if (!run.cached.empty()) paths.push_back({point, DecodePath::cached, std::move(run.cached)});
        if (!run.uncached.empty()) paths.push_back({point, DecodePath::uncached, std::move(run.uncached)});
        const ReportRows point_rows = generation_rows(paths, plan.generation, run.verify_rel_error,
                                                      roofline_of(context.rooflines, point.n_threads), context.env);
        append_rows(outcome.rows, point_rows);
        const std::size_t first_path = outcome.paths.size();
        outcome.paths.insert(outcome.paths.end(), paths.begin(), paths.end());
        exporter.save_point(point_rows, outcome.rows);
        if (streams.verbose()) {
            progress.clear();
            print_generation_details(outcome.paths, first_path, streams);
        }
    }
    progress.clear();
    return outcome;
}

// ---- Step: tables -----------------------------------------------------------------------

// After the report: the run's description, the summary and the growth law.
void print_generation_tables(const GeneratePlan& plan, const GenerationOutcome& outcome, const RunContext& context,
                             const ExportResult& exported, const OutputStreams& streams) {
    if (outcome.rows.rows.empty()) return;  // stopped before the first configuration finished
    std::ostream& tables = streams.tables_after(exported);
    const std::size_t width = streams.table_width();
    tables << describe_run(outcome.rows.rows, context.env, width) << "\n\n";
    write_text_table(tables, generation_summary_table(outcome.paths, plan, context.rooflines), width);
    tables << '\n';
    write_text_table(tables, generation_growth_table(outcome.paths, plan, context.rooflines), width);
    tables.flush();
}

// ---- Step: outcome ----------------------------------------------------------------------

// The closing lines and the exit status: 0, 1 when --verify failed or a file could not be
// written, 128 + the signal's number when one stopped it (as a sweep: 130 SIGINT, 143 SIGTERM).
int report_generation_outcome(const GeneratePlan& plan, const GenerationOutcome& outcome, const RunContext& context,
                              const ExportResult& exported, const ExportManager& exporter,
                              const OutputStreams& streams, const RunMessages& messages) {
    if (!outcome.verify_failures.empty()) {
        for (const std::string& failure : outcome.verify_failures) messages.failure("--verify failed at " + failure);
    } else if (plan.generation.verify && !outcome.rows.rows.empty()) {
        // As the sweep's: the f32 caches' worst error, and a reduced type's against its own
        // tolerance, each only when some step of it was compared.
        const VerifyTally& verified = outcome.verified;
        const auto note = [&](const std::string& text) {
            streams.notes() << wrap_text(text, 0, 2, streams.table_width()) << '\n';
        };
        if (verified.n_f32 > 0) {
            note(fmt::format("verify: cached output == uncached forward at every step; worst relative error {:.2e} "
                             "(tolerance {:.0e})",
                             verified.worst_f32_error, f32_verify_tolerance()));
        }
        if (verified.n_reduced > 0) {
            note(fmt::format("verify: with a reduced-precision cache, cached output ~ uncached forward at every step "
                             "within its types' tolerance (docs/model.md#kv-cache-element-types); worst at {:.0f} % "
                             "of it",
                             100 * verified.worst_reduced_fraction));
        }
        streams.notes().flush();
    }
    announce_written(streams, exported, outcome.rows.rows.size());
    exporter.check_report_stream();
    if (outcome.interrupted) {
        // The flag is set after the signal's number, so a stopped run always has one.
        const int signal = interrupting_signal() != 0 ? interrupting_signal() : SIGINT;
        fmt::print(stderr, "kvbench: interrupted (SIG{}) after {} of {}; {} holds the finished ones\n",
                   sigabbrev_np(signal), outcome.rows.rows.size(), plural(context.estimate.n_units, "step"),
                   exported.holder());
        return exit_for_signal(signal);
    }
    return outcome.verify_failures.empty() && exported.failed.empty() ? exit_ok : exit_failure;
}

}  // namespace

int run_generate_command(const GenerateCliOptions& options) {
    const RunMessages messages = cli_messages();
    const GeneratePlan plan = plan_generation(options, messages);
    const OutputStreams streams(plan.out);
    GenerationFlush flush;
    const RunContext context = prepare_generation(plan, flush, messages);
    if (plan.dry_run) return emit_dry_run(generate_dry_run_sheet(plan, context), plan.out);
    confirm_grid_size(context.points.size(), context.estimate.total_seconds, plan.likely_intent, plan.yes,
                      "kvbench generate", cached_path_seconds(plan, context));
    announce_long_run(context, messages);
    ExportPlan export_plan = to_export_plan(plan.out, plan.table, "generation", "the summary");
    export_plan.command = "generate";
    ExportManager exporter(std::move(export_plan), context.env, messages, std::cout);
    const GenerationOutcome outcome = measure_generations(plan, context, flush, exporter, streams);
    const ExportResult exported =
        exporter.finish(outcome.rows, outcome.interrupted ? RunStatus::stopped : RunStatus::finished);
    print_generation_tables(plan, outcome, context, exported, streams);
    if (const std::optional<std::string> slow = slow_rows_warning(outcome.rows.rows, context.rooflines)) {
        messages.warning(*slow);
    }
    if (const std::optional<std::string> above = above_roofline_warning(outcome.rows.rows, {})) {
        messages.warning(*above);
    }
    return report_generation_outcome(plan, outcome, context, exported, exporter, streams, messages);
}

}  // namespace kvbench
