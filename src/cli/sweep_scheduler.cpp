// The sweep's scheduler: points in order or interleaved, each point's rows judged and saved at once; the closing lines.
#include "cli/sweep_scheduler.hpp"

#include "cli/exit_status.hpp"
#include "cli/interrupt.hpp"
#include "cli/option_conventions.hpp"
#include "kvbench/engine/kernel_check.hpp"
#include "kvbench/measure/cache_flush.hpp"
#include "kvbench/report/summary_tables.hpp"
#include "kvbench/report/units.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <new>
#include <optional>
#include <stdexcept>

#include <string.h>

namespace kvbench {

namespace {

std::string paths_label(const RunOptions& options) {
    if (options.run_cached && options.run_uncached) return "cached and uncached";
    return options.run_cached ? "cached" : "uncached";
}

std::optional<double> median_of(const std::vector<ResultRow>& rows, DecodePath path) {
    for (const ResultRow& row : rows) {
        if (row.path == path) return row.stats.median_ns;
    }
    return std::nullopt;
}

// -v: one line per finished point, with what the tables summarise.
std::string point_details(std::size_t i, std::size_t n_points, const std::string& label,
                          const std::vector<ResultRow>& rows) {
    std::vector<std::string> parts;
    for (const ResultRow& row : rows) {
        parts.push_back(fmt::format("{} {} median, {} reps, CV {:.1f} %{}", path_name(row.path),
                                    format_duration_ns(row.stats.median_ns), row.stats.n_samples, 100 * row.stats.cv,
                                    row.noisy ? " (noisy)" : ""));
    }
    return fmt::format("kvbench: point {}/{} {}: {}", i + 1, n_points, label, fmt::join(parts, "; "));
}

// After "interrupted (SIGINT)": how far the sweep got, where the finished points are, and how to
// measure the rest.
std::string interrupted_how(const SweepPlan& plan, const SweepOutcome& outcome, const ExportResult& exported) {
    const std::size_t n_points = outcome.n_points + outcome.n_resumed;
    if (outcome.n_finished == 0 && outcome.n_resumed == 0) return "before the first point finished; nothing was measured";
    const std::string done = fmt::format("after {} of {}", outcome.n_finished, plural(outcome.n_points, "point"));
    const bool file_written = resumable_output(plan.out) &&
                              std::any_of(exported.written.begin(), exported.written.end(),
                                          [&](const OutputTarget& target) { return target.path == *plan.out.file; });
    if (file_written) {
        return fmt::format("{}; {} holds the {} finished: the same command with --resume measures the other {}", done,
                           *plan.out.file, outcome.n_finished + outcome.n_resumed,
                           n_points - outcome.n_finished - outcome.n_resumed);
    }
    return fmt::format("{}; {} holds the finished ones (-o FILE.csv keeps them in a file, and --resume then measures "
                       "the rest)",
                       done, exported.holder());
}

}  // namespace

std::string point_label(const GridPoint& point) {
    return fmt::format("{} T={} ({})", describe(point.config), point.n_threads,
                       grouping_name(point.config));
}

std::uint64_t flush_buffer_bytes(const SweepPlan& plan, const Environment& env) {
    return plan.run.cold_cache ? flush_bytes(plan.flush, env.llc_total_bytes) : 0;
}

MemoryBudget sweep_point_memory(const GridPoint& point, const SweepPlan& plan, const Environment& env) {
    MemoryBudget budget = point_memory(point, plan.run);
    budget.flush_bytes = flush_buffer_bytes(plan, env);
    budget.probe_bytes = plan.no_roofline ? 0 : probe_bytes(env.llc_total_bytes);
    return budget;
}

SweepScheduler::SweepScheduler(const SweepPlan& plan, const RunContext& context, ExportManager& exporter,
                               const OutputStreams& streams, RunMessages messages)
    : plan_(plan), context_(context), exporter_(exporter), streams_(streams), messages_(std::move(messages)) {}

SweepOutcome SweepScheduler::run(GridRows resumed, PointMeasurer& runner, const Evict& evict,
                                 const std::atomic<bool>& stop) {
    outcome_ = SweepOutcome{};
    outcome_.rows = std::move(resumed);
    std::vector<std::size_t> to_measure;  // grid indices
    double total_work = 0;                // their estimated seconds, for the time left
    for (std::size_t i = 0; i < context_.points.size(); ++i) {
        if (!outcome_.rows.by_point[i].empty()) continue;
        to_measure.push_back(i);
        total_work += context_.estimate.point_seconds(i);
    }
    outcome_.n_points = to_measure.size();
    outcome_.n_resumed = context_.points.size() - to_measure.size();
    // -q leaves the automatic bar out; an explicit --progress still reports.
    const ProgressMode progress_mode =
        streams_.quiet() && plan_.progress == ProgressMode::auto_detect ? ProgressMode::none : plan_.progress;
    Progress progress(progress_mode, to_measure.size(), total_work);
    progress_ = &progress;
    if (!to_measure.empty()) exporter_.start({outcome_.rows.all(), {}});
    if (plan_.interleave) {
        measure_interleaved(to_measure, evict, stop);
    } else {
        measure_in_order(to_measure, runner, stop);
    }
    outcome_.stop_signal = interrupting_signal();
    progress.finish_sweep(outcome_.n_finished, outcome_.failures.size(), outcome_.stop_signal != 0);
    progress_ = nullptr;
    return std::move(outcome_);
}

void SweepScheduler::measure_in_order(const std::vector<std::size_t>& to_measure, PointMeasurer& runner,
                                      const std::atomic<bool>& stop) {
    for (const std::size_t i : to_measure) {
        if (stop.load()) break;
        start_point(i);
        PointMeasurement measured;
        std::exception_ptr error;
        try {
            measured = runner.run(context_.points[i], plan_.run, stop);
        } catch (...) {
            error = std::current_exception();
        }
        if (measured.interrupted) break;
        finish_point(i, error ? nullptr : &measured, error);
    }
}

void SweepScheduler::measure_interleaved(const std::vector<std::size_t>& to_measure, const Evict& evict,
                                         const std::atomic<bool>& stop) {
    std::vector<GridPoint> subset;
    for (const std::size_t i : to_measure) subset.push_back(context_.points[i]);
    InterleaveOptions interleave;
    interleave.shuffle_seed = plan_.run.seed;
    interleave.resident_budget_bytes = resident_budget_bytes();
    run_interleaved(
        subset, plan_.run, evict, interleave, stop, [&](std::size_t k) { start_point(to_measure[k]); },
        [&](std::size_t k, const PointMeasurement* measured, std::exception_ptr error) {
            finish_point(to_measure[k], measured, error);
        });
}

void SweepScheduler::start_point(std::size_t i) { progress_->start_point(i, point_label(context_.points[i])); }

void SweepScheduler::finish_point(std::size_t i, const PointMeasurement* measured, std::exception_ptr error) {
    const GridPoint& point = context_.points[i];
    std::vector<ResultRow> rows;
    std::optional<std::string> failure;
    try {
        if (error) std::rethrow_exception(error);
        rows = make_result_rows(point, *measured, plan_.run, roofline_of(context_.rooflines, point.n_threads),
                                context_.env);
        judge(point, *measured);
    } catch (const std::exception& caught) {
        failure = dynamic_cast<const std::bad_alloc*>(&caught) != nullptr ? "out of memory" : caught.what();
    }
    // A --verify mismatch still has its timings: they are kept, with their error.
    outcome_.rows.by_point[i] = rows;
    if (failure) {
        report_failure(i, *failure);
    } else {
        rows = outcome_.rows.point_rows(i);  // a reduced cache's speedup against the f32 point's uncached step
    }
    // Saved before it is announced: a reader of the progress stream finds it in the file.
    exporter_.save_point({rows, {}}, {outcome_.rows.all(), {}});
    const std::string label = point_label(point);
    const double work = context_.estimate.point_seconds(i);
    if (failure) {
        progress_->fail_point(i, label, *failure, work);
    } else {
        if (streams_.verbose()) {
            progress_->clear();
            streams_.detail(point_details(i, context_.points.size(), label, rows));
        }
        progress_->finish_point(i, label, median_of(rows, DecodePath::cached), median_of(rows, DecodePath::uncached),
                                work);
    }
    ++outcome_.n_finished;
}

// --check and --verify on a point's measurement; a --verify mismatch throws, failing the point.
void SweepScheduler::judge(const GridPoint& point, const PointMeasurement& measured) {
    if (measured.check_rel_error) {
        ++outcome_.n_checked;
        outcome_.worst_check_error = std::max(outcome_.worst_check_error, *measured.check_rel_error);
    }
    if (measured.verify_rel_error && !outcome_.verified.add(point.config, *measured.verify_rel_error)) {
        throw std::runtime_error(fmt::format("--verify failed: relative error {:.3g} (tolerance {:.2g})",
                                             *measured.verify_rel_error, verify_tolerance(point.config)));
    }
}

void SweepScheduler::report_failure(std::size_t i, const std::string& reason) {
    const std::string label = point_label(context_.points[i]);
    progress_->clear();
    messages_.failure(fmt::format("point {} of {} failed ({}, {}, {} cache): {}; the sweep goes on", i + 1,
                                  context_.points.size(), label, paths_label(plan_.run),
                                  plan_.run.cold_cache ? "cold" : "warm", reason));
    outcome_.failures.push_back(fmt::format("{}: {}", label, reason));
}

std::uint64_t SweepScheduler::resident_budget_bytes() const {
    const std::optional<std::uint64_t>& limit = context_.memory_limit.bytes;
    if (!limit) return ~std::uint64_t{0};
    const std::uint64_t overhead_bytes =
        flush_buffer_bytes(plan_, context_.env) + (plan_.no_roofline ? 0 : probe_bytes(context_.env.llc_total_bytes));
    return *limit > overhead_bytes ? *limit - overhead_bytes : 0;
}

int report_sweep_outcome(const SweepPlan& plan, const SweepOutcome& outcome, const ExportResult& exported,
                         const ExportManager& exporter, const OutputStreams& streams, const RunMessages& messages) {
    std::ostream& notes = streams.notes();
    // Wrapped to the tables' width, as their footnotes are.
    const auto note = [&](const std::string& text) {
        notes << wrap_text(text, 0, 2, streams.table_width()) << '\n';
    };
    const VerifyTally& verified = outcome.verified;
    if (plan.run.verify && verified.n_f32 > 0 && outcome.failures.empty()) {
        note(fmt::format("verify: cached step == uncached forward at {}{}; worst relative error "
                         "{:.2e} (tolerance {:.0e})",
                         verified.n_f32 == 1 ? "" : "all ", plural(verified.n_f32, "point"),
                         verified.worst_f32_error, f32_verify_tolerance()));
    }
    if (plan.run.verify && verified.n_reduced > 0 && outcome.failures.empty()) {
        note(fmt::format("verify: with a reduced-precision cache, cached step ~ uncached forward at {}{} within "
                         "its types' tolerance (docs/model.md#kv-cache-element-types); worst at {:.0f} % of it",
                         verified.n_reduced == 1 ? "" : "all ", plural(verified.n_reduced, "point"),
                         100 * verified.worst_reduced_fraction));
    }
    if (plan.run.check && outcome.n_checked > 0) {
        note(fmt::format("check: every kernel matched its naive twin at {}{}; worst relative error "
                         "{:.2e} (tolerance {:.0e})",
                         outcome.n_checked == 1 ? "" : "all ", plural(outcome.n_checked, "point"),
                         outcome.worst_check_error, kernel_check_tolerance));
    }
    notes.flush();
    const std::size_t n_rows = outcome.rows.all().size();
    announce_written(streams, exported, n_rows);
    exporter.check_report_stream();
    if (!outcome.failures.empty()) {
        messages.failure(fmt::format("{} of {} failed (listed above); {} holds the {} measured", outcome.failures.size(),
                                     plural(outcome.n_points, "point"), exported.holder(), plural(n_rows, "row")));
    }
    if (outcome.stop_signal != 0) {
        fmt::print(stderr, "kvbench: interrupted (SIG{}) {}\n", sigabbrev_np(outcome.stop_signal),
                   interrupted_how(plan, outcome, exported));
        return exit_for_signal(outcome.stop_signal);
    }
    return outcome.failures.empty() && exported.failed.empty() ? exit_ok : exit_failure;
}

}  // namespace kvbench
