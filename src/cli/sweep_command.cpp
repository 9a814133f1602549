// `kvbench sweep` as a pipeline of named steps: plan, pre-flight, measure, finish rows, check drift, export.
#include "cli/sweep_command.hpp"

#include "cli/interrupt.hpp"
#include "cli/progress.hpp"

#include "kvbench/engine/blas.hpp"
#include "kvbench/measure/cache_flush.hpp"
#include "kvbench/measure/environment.hpp"
#include "kvbench/measure/memory.hpp"
#include "kvbench/measure/roofline.hpp"
#include "kvbench/report/summary_tables.hpp"
#include "kvbench/report/units.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <new>
#include <optional>
#include <stdexcept>

#include <signal.h>
#include <string.h>

namespace kvbench {

namespace {

constexpr double verify_tolerance = 1e-4;  // docs/model.md, the equivalence
constexpr int exit_ok = 0;
constexpr int exit_failure = 1;

using Rooflines = std::map<std::size_t, Roofline>;  // by thread count

void warn(const std::string& message) { fmt::print(stderr, "kvbench: warning: {}\n", message); }

std::string point_label(const GridPoint& point) {
    return fmt::format("{} T={} ({})", describe(point.config), point.n_threads,
                       grouping_label(point.config.n_heads, point.config.n_kv_heads));
}

const Roofline* roofline_of(const Rooflines& rooflines, std::size_t n_threads) {
    const auto found = rooflines.find(n_threads);
    return found == rooflines.end() ? nullptr : &found->second;
}

std::uint64_t flush_buffer_bytes(const SweepPlan& plan, const Environment& env) {
    if (!plan.run.cold_cache) return 0;
    return CacheFlusher::llc_multiple * (env.llc_bytes > 0 ? env.llc_bytes : CacheFlusher::fallback_llc_bytes);
}

// What the measuring step hands on: every finished row, and what went wrong.
struct SweepOutcome {
    std::vector<ResultRow> rows;
    std::size_t n_points = 0;
    std::size_t n_finished = 0;              // points measured in full, failed ones included
    std::vector<std::string> failures;       // one line per failed point: its configuration and why
    std::size_t n_verified = 0;
    double worst_verify_error = 0;
    int stop_signal = 0;                     // the signal that stopped the sweep; 0 when it ran to the end
};

// ---- Step: plan -------------------------------------------------------------------------

SweepPlan plan_sweep(const SweepCliOptions& options) {
    SweepPlan plan = to_sweep_plan(options);
    if (plan.output) {
        const std::filesystem::path parent = std::filesystem::absolute(*plan.output).parent_path();
        if (!std::filesystem::is_directory(parent)) {
            throw ConfigError(fmt::format("-o {}: directory {} does not exist", *plan.output, parent.string()));
        }
    }
    for (const std::string& skipped : plan.grid.skipped) warn("skipping " + skipped);
    return plan;
}

void warn_about_machine(const SweepPlan& plan, const Environment& env) {
    if (!env.optimized_build) {
        warn(fmt::format("this is a {} build: its timings mean nothing; build with "
                         "-DCMAKE_BUILD_TYPE=Release", env.build_type));
    }
    std::size_t max_threads = 0;
    for (const GridPoint& point : plan.grid.points) max_threads = std::max(max_threads, point.n_threads);
    if (max_threads > env.n_cores) {
        warn(fmt::format("--threads {} is more than the {} cores this process may use: those points also "
                         "time the scheduler",
                         max_threads, env.n_cores));
    }
}

// The roofline of each thread count: --roofline for all, else the saved file when there is one.
Rooflines load_rooflines(const SweepPlan& plan) {
    Rooflines rooflines;
    for (const GridPoint& point : plan.grid.points) {
        if (rooflines.contains(point.n_threads)) continue;
        if (plan.roofline) {
            rooflines.emplace(point.n_threads, load_roofline(*plan.roofline));
            continue;
        }
        if (plan.measure_roofline && !plan.dry_run) {
            const Roofline& measured =
                rooflines.emplace(point.n_threads, measure_roofline(point.n_threads)).first->second;
            try {
                const std::filesystem::path saved = default_roofline_path(point.n_threads);
                std::filesystem::create_directories(saved.parent_path());
                save_roofline(saved, measured);
            } catch (const std::exception& error) {
                warn(fmt::format("roofline measured but not saved: {}", error.what()));
            }
            continue;
        }
        std::filesystem::path saved;
        try {
            saved = default_roofline_path(point.n_threads);
        } catch (const std::runtime_error&) {
            continue;  // no home or cache directory: run without a roofline
        }
        if (std::filesystem::exists(saved)) rooflines.emplace(point.n_threads, load_roofline(saved));
    }
    return rooflines;
}

// ---- Step: pre-flight -------------------------------------------------------------------

// Drops, with one warning each, the points whose allocations exceed the memory limit.
std::vector<GridPoint> preflight(const SweepPlan& plan, const Environment& env) {
    const std::uint64_t flush_bytes = flush_buffer_bytes(plan, env);
    const std::optional<std::uint64_t> available = available_memory_bytes();
    const std::optional<std::uint64_t> limit = plan.max_memory ? plan.max_memory : available;
    const char* limit_name = plan.max_memory ? "--max-memory" : "the memory available now";
    std::vector<GridPoint> kept;
    for (const GridPoint& point : plan.grid.points) {
        const std::uint64_t needed = point_memory_bytes(point, plan.run) + flush_bytes;
        if (limit && needed > *limit) {
            warn(fmt::format("skipping {}: it needs {}, more than {} ({})", point_label(point),
                             format_bytes(needed), limit_name, format_bytes(*limit)));
            continue;
        }
        kept.push_back(point);
    }
    if (kept.empty()) {
        throw ConfigError(fmt::format("no point of the grid fits in {}: choose a smaller --seq, --batch, "
                                      "--dim or --layers, or raise --max-memory",
                                      limit_name));
    }
    return kept;
}

void print_dry_run(const std::vector<GridPoint>& points, const SweepPlan& plan, const Rooflines& rooflines,
                   const Environment& env) {
    const std::uint64_t flush_bytes = flush_buffer_bytes(plan, env);
    TextTable table{"Dry run: the grid, nothing measured",
                    {"point", "T", "grouping", "cached", "uncached", "KV cache", "memory", "est. time"},
                    {Align::left, Align::right, Align::left, Align::right, Align::right, Align::right,
                     Align::right, Align::right},
                    {},
                    {}};
    double total_seconds = 0;
    for (const GridPoint& point : points) {
        const double seconds =
            estimate_point_seconds(point, plan.run, roofline_of(rooflines, point.n_threads), flush_bytes);
        total_seconds += seconds;
        auto flops = [&](bool run, DecodePath path) {
            return run ? format_flops(static_cast<double>(step_flops(point.config, path))) : std::string("-");
        };
        table.lines.push_back({describe(point.config), fmt::format("{}", point.n_threads),
                               grouping_label(point.config.n_heads, point.config.n_kv_heads),
                               flops(plan.run.run_cached, DecodePath::cached),
                               flops(plan.run.run_uncached, DecodePath::uncached),
                               format_bytes(kv_cache_bytes(point.config)),
                               format_bytes(point_memory_bytes(point, plan.run) + flush_bytes),
                               format_duration_ns(seconds * 1e9)});
    }
    table.footnote = fmt::format(
        "{} points, about {} in all. FLOPs per step; memory is what the point allocates; time {}.",
        points.size(), format_duration_ns(total_seconds * 1e9),
        rooflines.empty() ? "assumes 100 GFLOP/s and 20 GB/s (run `kvbench roofline` for this machine's)"
                          : "from the saved roofline");
    write_text_table(std::cout, table);
}

// ---- Step: measure (and save after every point) -----------------------------------------

// A test-only fault: KVBENCH_TEST_FAIL_POINT=<index> makes that point (0-based, in grid
// order) throw, so the tests can check that one failing point does not end the sweep.
std::optional<std::size_t> injected_failure_point() {
    const char* text = std::getenv("KVBENCH_TEST_FAIL_POINT");
    if (text == nullptr) return std::nullopt;
    std::size_t index = 0;
    const std::string_view view(text);
    const auto [end, error] = std::from_chars(view.data(), view.data() + view.size(), index);
    if (error != std::errc() || end != view.data() + view.size()) return std::nullopt;
    return index;
}

std::string paths_label(const RunOptions& options) {
    if (options.run_cached && options.run_uncached) return "cached and uncached";
    return options.run_cached ? "cached" : "uncached";
}

// -o is rewritten whole after every finished point, so a stop of any kind (a signal, a
// second Ctrl-C, an out-of-memory kill) leaves every finished point in a valid file.
void save_rows(const SweepPlan& plan, const std::vector<ResultRow>& rows, const Environment& env) {
    if (plan.output) write_report_file(*plan.output, plan.format, rows, env);
}

std::optional<double> median_of(const std::vector<ResultRow>& rows, DecodePath path) {
    for (const ResultRow& row : rows) {
        if (row.path == path) return row.stats.median_ns;
    }
    return std::nullopt;
}

void warn_if_noisy(const ResultRow& row) {
    if (!is_noisy(row.stats)) return;
    warn(fmt::format("{} T={} {}: latency varies (CV {:.1f} %, MdAPE {:.1f} %); add --warmup or --reps, "
                     "or use fewer --threads than cores",
                     describe(row.config), row.n_threads, path_name(row.path), 100 * row.stats.cv,
                     100 * row.stats.mdape));
}

SweepOutcome measure_points(const std::vector<GridPoint>& points, const SweepPlan& plan,
                            const Rooflines& rooflines, const Environment& env) {
    const std::atomic<bool>& stop = install_interrupt_flag();
    const std::uint64_t flush_bytes = flush_buffer_bytes(plan, env);
    std::optional<CacheFlusher> flusher;
    if (plan.run.cold_cache) flusher.emplace(env.llc_bytes);
    PointRunner runner(flusher ? &*flusher : nullptr);
    const std::optional<std::size_t> fail_point = injected_failure_point();

    std::vector<double> work;  // estimated seconds of each point, for the time left
    double total_work = 0;
    for (const GridPoint& point : points) {
        work.push_back(estimate_point_seconds(point, plan.run, roofline_of(rooflines, point.n_threads), flush_bytes));
        total_work += work.back();
    }
    Progress progress(plan.progress, points.size(), total_work);
    SweepOutcome outcome;
    outcome.n_points = points.size();
    for (std::size_t i = 0; i < points.size() && !stop.load(); ++i) {
        const GridPoint& point = points[i];
        const std::string label = point_label(point);
        progress.start_point(i, label);
        std::vector<ResultRow> rows;
        try {
            if (fail_point == i) throw std::runtime_error("injected failure (KVBENCH_TEST_FAIL_POINT)");
            const PointMeasurement measured = runner.run(point, plan.run, stop);
            if (measured.interrupted) break;
            rows = make_result_rows(point, measured, plan.run, roofline_of(rooflines, point.n_threads), env);
            if (measured.verify_rel_error) {
                ++outcome.n_verified;
                outcome.worst_verify_error = std::max(outcome.worst_verify_error, *measured.verify_rel_error);
                // Written so that a NaN error fails too.
                if (!(*measured.verify_rel_error < verify_tolerance)) {
                    throw std::runtime_error(fmt::format("--verify failed: relative error {:.3g} (tolerance {:.0e})",
                                                         *measured.verify_rel_error, verify_tolerance));
                }
            }
        } catch (const std::exception& error) {
            const std::string reason =
                dynamic_cast<const std::bad_alloc*>(&error) != nullptr ? "out of memory" : error.what();
            progress.clear();
            fmt::print(stderr, "kvbench: error: point {} of {} failed ({}, {}, {} cache): {}; the sweep goes on\n",
                       i + 1, points.size(), label, paths_label(plan.run), plan.run.cold_cache ? "cold" : "warm",
                       reason);
            outcome.failures.push_back(fmt::format("{}: {}", label, reason));
            progress.fail_point(i, label, reason, work[i]);
            ++outcome.n_finished;
            // A --verify mismatch still has its timings: keep them, with their error.
            outcome.rows.insert(outcome.rows.end(), rows.begin(), rows.end());
            save_rows(plan, outcome.rows, env);
            continue;
        }
        progress.clear();
        for (const ResultRow& row : rows) warn_if_noisy(row);
        outcome.rows.insert(outcome.rows.end(), rows.begin(), rows.end());
        save_rows(plan, outcome.rows, env);
        progress.finish_point(i, label, median_of(rows, DecodePath::cached), median_of(rows, DecodePath::uncached),
                              work[i]);
        ++outcome.n_finished;
    }
    outcome.stop_signal = interrupting_signal();
    progress.finish_sweep(outcome.n_finished, outcome.failures.size(), outcome.stop_signal != 0);
    return outcome;
}

// ---- Step: check drift ------------------------------------------------------------------

// On a shared or virtualised host, memory bandwidth drifts by tens of percent over minutes
// (seen on the reference machine: 50 to 90 GB/s). Read it again now and say so when the
// roofline no longer describes the machine the points ran on.
void check_bandwidth_drift(const SweepOutcome& outcome, const Rooflines& rooflines, const Environment& env) {
    if (outcome.stop_signal != 0 || outcome.rows.empty()) return;
    for (const auto& [n_threads, roofline] : rooflines) {
        // The roofline's own buffer size, so the two figures compare like with like.
        const std::size_t buffer_bytes = roofline.bandwidth_buffer_bytes > 0
                                             ? roofline.bandwidth_buffer_bytes
                                             : default_bandwidth_buffer_bytes(env.llc_bytes);
        const std::optional<std::uint64_t> available = available_memory_bytes();
        if (available && buffer_bytes > *available / 2) continue;  // not worth squeezing the machine for
        set_compute_threads(n_threads);
        const double now_gbps = measure_read_bandwidth_gbps(buffer_bytes, 3);
        const double ratio = now_gbps / roofline.peak_gbps;
        constexpr double tolerated_drift = 0.15;
        if (ratio < 1 - tolerated_drift || ratio > 1 + tolerated_drift) {
            warn(fmt::format("memory bandwidth on {} threads reads {:.1f} GB/s now against the roofline's {:.1f} GB/s "
                             "(measured {}): this host's bandwidth drifts, so roofline % are approximate; "
                             "re-run with --measure-roofline when the host is quieter",
                             n_threads, now_gbps, roofline.peak_gbps, roofline.measured_at));
        }
    }
}

// ---- Step: export -----------------------------------------------------------------------

// Output errors are never silent: a full disk behind stdout (`> /dev/full`) is a failure.
void check_stdout() {
    std::cout.flush();
    if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
        throw std::runtime_error("cannot write the report to standard output (disk full, or the pipe closed?)");
    }
}

// Without -o the chosen format goes to stdout; with it, the file gets the format and the
// terminal keeps the human tables.
void export_report(const SweepPlan& plan, const SweepOutcome& outcome, const Environment& env) {
    if (plan.output) {
        save_rows(plan, outcome.rows, env);
        write_table(std::cout, outcome.rows, env);
    } else {
        write_report(std::cout, plan.format, outcome.rows, env);
    }
    check_stdout();
}

// The closing lines and the exit status: 0, 1 when a point failed, 128 + signal when stopped.
int report_outcome(const SweepPlan& plan, const SweepOutcome& outcome) {
    const bool stdout_is_report = !plan.output && plan.format != OutputFormat::table;
    std::FILE* notes = stdout_is_report ? stderr : stdout;
    if (plan.run.verify && outcome.n_verified > 0 && outcome.failures.empty()) {
        fmt::print(notes, "verify: cached step == uncached forward at all {} points; worst relative error "
                          "{:.2e} (tolerance {:.0e})\n",
                   outcome.n_verified, outcome.worst_verify_error, verify_tolerance);
    }
    if (plan.output) fmt::print(notes, "wrote {} rows to {}\n", outcome.rows.size(), *plan.output);
    check_stdout();
    const std::string holder = plan.output ? *plan.output : std::string("the report above");
    if (!outcome.failures.empty()) {
        fmt::print(stderr, "kvbench: error: {} of {} points failed (listed above); {} holds the {} rows measured\n",
                   outcome.failures.size(), outcome.n_points, holder, outcome.rows.size());
    }
    if (outcome.stop_signal != 0) {
        fmt::print(stderr, "kvbench: interrupted (SIG{}) after {} of {} points; {} holds the finished ones\n",
                   sigabbrev_np(outcome.stop_signal), outcome.n_finished, outcome.n_points, holder);
        return 128 + outcome.stop_signal;
    }
    return outcome.failures.empty() ? exit_ok : exit_failure;
}

}  // namespace

int run_sweep_command(const SweepCliOptions& options) {
    const SweepPlan plan = plan_sweep(options);
    const Environment env = collect_environment();
    warn_about_machine(plan, env);
    const Rooflines rooflines = load_rooflines(plan);
    const std::vector<GridPoint> points = preflight(plan, env);
    if (plan.dry_run) {
        print_dry_run(points, plan, rooflines, env);
        check_stdout();
        return exit_ok;
    }
    const SweepOutcome outcome = measure_points(points, plan, rooflines, env);
    check_bandwidth_drift(outcome, rooflines, env);
    export_report(plan, outcome, env);
    return report_outcome(plan, outcome);
}

}  // namespace kvbench
