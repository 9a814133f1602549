// `kvbench sweep` as a pipeline of named steps: plan, pre-flight, resume, measure, finish rows, check drift, export.
#include "cli/sweep_command.hpp"

#include "cli/grid_guard.hpp"
#include "cli/growth_summary.hpp"
#include "cli/command_line.hpp"
#include "cli/interrupt.hpp"
#include "cli/output_streams.hpp"
#include "cli/option_conventions.hpp"
#include "cli/progress.hpp"
#include "cli/result_warnings.hpp"

#include "kvbench/engine/blas.hpp"
#include "kvbench/engine/kernel_check.hpp"
#include "kvbench/engine/kv_convert.hpp"
#include "kvbench/measure/budget.hpp"
#include "kvbench/measure/cache_flush.hpp"
#include "kvbench/measure/environment.hpp"
#include "kvbench/measure/memory.hpp"
#include "kvbench/measure/roofline.hpp"
#include "kvbench/report/atomic_file.hpp"
#include "kvbench/report/columns.hpp"
#include "kvbench/report/read_report.hpp"
#include "kvbench/report/summary_tables.hpp"
#include "kvbench/report/units.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <new>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <signal.h>
#include <string.h>

namespace kvbench {

namespace {

constexpr double verify_tolerance = 1e-4;  // docs/model.md, the equivalence, for an f32 cache
constexpr int exit_ok = 0;
constexpr int exit_failure = 1;

using Rooflines = std::map<std::size_t, Roofline>;  // by thread count

void warn(const std::string& message) {
    if (!messages_silenced()) fmt::print(stderr, "kvbench: warning: {}\n", message);
}

// A note that is neither a warning nor a result: silenced by -q like the warnings.
void note(const std::string& message) {
    if (!messages_silenced()) fmt::print(stderr, "kvbench: {}\n", message);
}

std::string point_label(const GridPoint& point) {
    return fmt::format("{} T={} ({})", describe(point.config), point.n_threads,
                       grouping_label(point.config.n_heads, point.config.n_kv_heads));
}

const Roofline* roofline_of(const Rooflines& rooflines, std::size_t n_threads) {
    const auto found = rooflines.find(n_threads);
    return found == rooflines.end() ? nullptr : &found->second;
}

std::uint64_t flush_buffer_bytes(const SweepPlan& plan, const Environment& env) {
    return plan.run.cold_cache ? flush_bytes(plan.flush, env.llc_total_bytes) : 0;
}

// A point's memory plus what the run holds beside it: the flush buffer, and the bandwidth
// probe (roofline, drift check), which runs while the last point's weights are held.
MemoryBudget run_budget(const GridPoint& point, const SweepPlan& plan, const Environment& env) {
    MemoryBudget budget = point_memory(point, plan.run);
    budget.flush_bytes = flush_buffer_bytes(plan, env);
    budget.probe_bytes = plan.no_roofline ? 0 : probe_bytes(env.llc_total_bytes);
    return budget;
}

// Rows by grid point: those read back by --resume, then those measured, in grid order.
struct SweepRows {
    std::vector<std::vector<ResultRow>> by_point;  // one entry per point of the grid; empty: not (yet) measured
    std::vector<ResultRow> other_rows;             // rows of a resumed file that match no point of this grid

    std::vector<ResultRow> all() const {
        std::vector<ResultRow> rows;
        for (const std::vector<ResultRow>& point_rows : by_point) rows.insert(rows.end(), point_rows.begin(), point_rows.end());
        rows.insert(rows.end(), other_rows.begin(), other_rows.end());
        fill_speedups_across_kv_dtypes(rows);
        return rows;
    }

    // Point i's rows with their speedups, those of another kv_dtype's uncached row included.
    std::vector<ResultRow> point_rows(std::size_t i) const {
        std::vector<ResultRow> rows = by_point[i];
        const std::size_t n_own = rows.size();
        for (const std::vector<ResultRow>& others : by_point) {
            for (const ResultRow& row : others) {
                if (row.path == DecodePath::uncached) rows.push_back(row);
            }
        }
        fill_speedups_across_kv_dtypes(rows);
        rows.resize(n_own);
        return rows;
    }
};

// What the measuring step hands on: every finished row, and what went wrong.
struct SweepOutcome {
    SweepRows rows;
    std::size_t n_points = 0;                // points this run measures (those resumed excluded)
    std::size_t n_resumed = 0;               // points whose rows --resume kept
    std::size_t n_finished = 0;              // points measured in full, failed ones included
    std::vector<std::string> failures;       // one line per failed point: its configuration and why
    std::size_t n_verified = 0;              // of the points with an f32 cache
    double worst_verify_error = 0;           // of the points with an f32 cache
    std::size_t n_verified_reduced = 0;      // of the points with a reduced-precision cache
    double worst_reduced_fraction = 0;       // their worst error as a fraction of its tolerance
    std::size_t n_checked = 0;
    double worst_check_error = 0;
    int stop_signal = 0;                     // the signal that stopped the sweep; 0 when it ran to the end
    std::vector<std::string> unwritable;     // output files a save failed on during the sweep
};

// ---- Step: plan -------------------------------------------------------------------------

SweepPlan plan_sweep(const SweepCliOptions& options) {
    SweepPlan plan = to_sweep_plan(options);
    for (const std::string& skipped : plan.grid.skipped) warn("skipping " + skipped);
    for (const std::string& message : plan.notes) {
        if (!plan.out.quiet) note(message);
    }
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

// Measures the roofline on n_threads and saves it where later sweeps look for it.
Roofline measure_and_save_roofline(std::size_t n_threads, const RooflineOptions& options) {
    Roofline measured = measure_roofline(n_threads, options);
    measured.source = options.quick ? "measured this run (quick)" : "measured this run";
    try {
        const std::filesystem::path saved = default_roofline_path(n_threads);
        std::filesystem::create_directories(saved.parent_path());
        save_roofline(saved, measured);
    } catch (const std::exception& error) {
        warn(fmt::format("roofline measured but not saved: {}", error.what()));
    }
    return measured;
}

// A roofline measured elsewhere is still used, but never silently.
void warn_if_foreign(const Roofline& roofline, const std::filesystem::path& path, const Environment& env,
                     std::size_t n_threads) {
    const std::vector<std::string> reasons = roofline_mismatches(roofline, env, n_threads);
    if (reasons.empty()) return;
    std::string joined;
    for (const std::string& reason : reasons) joined += (joined.empty() ? "" : "; ") + reason;
    warn(fmt::format("roofline {} may not describe this run: {}; re-measure with `kvbench roofline -t {}` "
                     "or `kvbench sweep --measure-roofline`",
                     path.string(), joined, n_threads));
}

// The roofline of each thread count: --roofline for all, else the saved file when there is
// one, else one measured now (quickly) and saved, so the first sweep on a machine has one.
Rooflines load_rooflines(const SweepPlan& plan, const std::vector<GridPoint>& points,
                                               const Environment& env) {
    Rooflines rooflines;
    if (plan.no_roofline) return rooflines;
    std::optional<Roofline> given;
    if (plan.roofline) {
        try {
            given = load_roofline(*plan.roofline);
            given->source = fmt::format("--roofline file (measured {})", given->measured_at);
        } catch (const std::runtime_error& error) {
            throw ConfigError(fmt::format("--roofline: {}", error.what()));
        }
    }
    for (const GridPoint& point : points) {
        if (rooflines.contains(point.n_threads)) continue;
        if (given) {
            warn_if_foreign(*given, *plan.roofline, env, point.n_threads);
            rooflines.emplace(point.n_threads, *given);
            continue;
        }
        if (plan.measure_roofline && !plan.dry_run) {
            rooflines.emplace(point.n_threads, measure_and_save_roofline(point.n_threads, RooflineOptions{}));
            continue;
        }
        std::filesystem::path saved;
        try {
            saved = default_roofline_path(point.n_threads);
        } catch (const std::runtime_error&) {
            continue;  // no home or cache directory: run without a roofline
        }
        if (std::filesystem::exists(saved)) {
            Roofline loaded_roofline = load_roofline(saved);
            loaded_roofline.source = fmt::format("saved (measured {}{})", loaded_roofline.measured_at,
                                                 loaded_roofline.quick ? ", quick" : "");
            const Roofline& loaded = rooflines.emplace(point.n_threads, std::move(loaded_roofline)).first->second;
            warn_if_foreign(loaded, saved, env, point.n_threads);
        } else if (!plan.dry_run) {
            const auto start = std::chrono::steady_clock::now();
            const Roofline& measured =
                rooflines.emplace(point.n_threads, measure_and_save_roofline(point.n_threads, quick_roofline_options()))
                    .first->second;
            const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
            note(fmt::format("no roofline saved for {} thread{}: measured one in {:.1f} s ({:.1f} GB/s, {:.0f} "
                             "GFLOP/s) and saved it to {}; `kvbench roofline -t {}` measures it fully",
                             point.n_threads, point.n_threads == 1 ? "" : "s", took.count(), measured.peak_gbps,
                       measured.peak_gflops, saved.string(), point.n_threads));
        }
    }
    return rooflines;
}

// ---- Step: pre-flight -------------------------------------------------------------------

// Drops, with one warning each, the points whose allocations exceed the memory limit.
std::vector<GridPoint> preflight(const SweepPlan& plan, const Environment& env) {
    const std::optional<std::uint64_t> available = available_memory_bytes();
    const std::optional<std::uint64_t> limit = plan.max_memory_bytes ? plan.max_memory_bytes : available;
    const char* limit_name = plan.max_memory_bytes ? "--max-memory" : "the memory available now";
    std::vector<GridPoint> kept;
    for (const GridPoint& point : plan.grid.points) {
        const MemoryBudget budget = run_budget(point, plan, env);
        const std::uint64_t needed = budget.total_bytes();
        if (limit && needed > *limit) {
            const MemoryTerm largest = largest_term(budget);
            warn(fmt::format("skipping {}: it needs {}, more than {} ({}); most of it {} ({}): {}",
                             point_label(point), format_bytes(needed), limit_name, format_bytes(*limit),
                             largest.name, format_bytes(largest.bytes), largest.hint));
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
                    {"point", "T", "grouping", "cached", "uncached", "KV cache", "weights", "scratch",
                     "inputs", "flush+probe", "memory", "est. time"},
                    {Align::left, Align::right, Align::left, Align::right, Align::right, Align::right,
                     Align::right, Align::right, Align::right, Align::right, Align::right, Align::right},
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
        const MemoryBudget budget = run_budget(point, plan, env);
        table.lines.push_back({describe(point.config), fmt::format("{}", point.n_threads),
                               grouping_label(point.config.n_heads, point.config.n_kv_heads),
                               flops(plan.run.run_cached, DecodePath::cached),
                               flops(times_uncached(point, plan.run), DecodePath::uncached),
                               format_bytes(kv_cache_bytes(point.config)), format_bytes(budget.weights_bytes),
                               format_bytes(budget.scratch_bytes), format_bytes(budget.inputs_bytes),
                               format_bytes(budget.flush_bytes + budget.probe_bytes), format_bytes(budget.total_bytes()),
                               format_duration_ns(seconds * 1e9)});
    }
    table.footnote = fmt::format(
        "{}, about {} in all. FLOPs per step (uncached '-': timed at the configuration's first "
        "--kv-dtype); memory is what the point allocates (the KV cache, with the f32 copy a reduced type "
        "holds while it is set up, weights, scratch and inputs, plus the cold-cache flush buffer and the "
        "bandwidth probe); time {}.",
        plural(points.size(), "point"), format_duration_ns(total_seconds * 1e9),
        rooflines.empty() ? "assumes 100 GFLOP/s and 20 GB/s (run `kvbench roofline` for this machine's)"
                          : "from the saved roofline");
    write_text_table(std::cout, table);
}

// ---- Step: resume ----------------------------------------------------------------------

// Whether a saved row measured `point` on `path` the way this run would: same configuration,
// threads, cache state and repetition policy (and a verification when --verify asks for one).
bool row_matches(const ResultRow& row, const GridPoint& point, DecodePath path, const SweepPlan& plan) {
    ModelConfig config = point.config;
    if (path == DecodePath::uncached) config.kv_dtype = KvDtype::f32;  // an uncached row is f32 (report.hpp)
    return row.path == path && row.config == config && row.n_threads == point.n_threads &&
           row.cache_state == (plan.run.cold_cache ? "cold" : "warm") &&
           row.reps_policy == describe_reps_policy(plan.run) && (!plan.run.verify || row.verify_rel_error);
}

std::vector<DecodePath> planned_paths(const GridPoint& point, const RunOptions& options) {
    std::vector<DecodePath> paths;
    if (options.run_cached) paths.push_back(DecodePath::cached);
    if (times_uncached(point, options)) paths.push_back(DecodePath::uncached);
    return paths;
}

// --resume: the rows of -o that this build measured with these settings are kept, and their
// points are not measured again. Rows of another build are dropped (said on stderr); rows of
// points outside this grid are kept as they are.
SweepRows resume_rows(const SweepPlan& plan, const std::vector<GridPoint>& points, const Environment& env) {
    SweepRows rows;
    rows.by_point.resize(points.size());
    if (!plan.resume) return rows;
    const std::string& file = *plan.out.file;
    if (!std::filesystem::exists(file)) {
        note(fmt::format("--resume: {} does not exist yet; measuring every point", file));
        return rows;
    }
    std::vector<SavedRow> saved;
    try {
        saved = read_report_file(file, plan.out.format);
    } catch (const std::exception& error) {
        throw ConfigError(fmt::format("--resume: {} (it was left as it is)", error.what()));
    }
    std::size_t n_other_build = 0;
    std::string other_build;
    std::vector<bool> used(saved.size(), false);
    for (std::size_t s = 0; s < saved.size(); ++s) {
        if (saved[s].git_commit != env.git_commit || saved[s].tool_version != env.tool_version) {
            used[s] = true;  // never reused, never kept
            ++n_other_build;
            other_build = fmt::format("kvbench {} ({})", saved[s].tool_version, saved[s].git_commit);
        }
    }
    std::size_t n_resumed = 0;
    for (std::size_t i = 0; i < points.size(); ++i) {
        std::vector<std::size_t> found;
        for (const DecodePath path : planned_paths(points[i], plan.run)) {
            for (std::size_t s = 0; s < saved.size(); ++s) {
                if (!used[s] && row_matches(saved[s].row, points[i], path, plan)) {
                    found.push_back(s);
                    break;
                }
            }
        }
        if (found.size() != planned_paths(points[i], plan.run).size()) continue;
        for (const std::size_t s : found) {
            used[s] = true;
            rows.by_point[i].push_back(saved[s].row);
        }
        ++n_resumed;
    }
    for (std::size_t s = 0; s < saved.size(); ++s) {
        if (used[s]) continue;
        // A row of a grid point measured otherwise (another policy, say) is replaced, so the
        // file holds each point once; any other row is kept.
        const bool in_grid = std::any_of(points.begin(), points.end(), [&](const GridPoint& point) {
            return saved[s].row.config == point.config && saved[s].row.n_threads == point.n_threads;
        });
        if (!in_grid) rows.other_rows.push_back(saved[s].row);
    }
    if (n_other_build > 0) {
        warn(fmt::format("--resume: {} of {} were measured by {}, not by this build (kvbench {} ({})): "
                         "they are not reused, and the file is rewritten without them",
                         plural(n_other_build, "row"), file, other_build, env.tool_version, env.git_commit));
    }
    note(fmt::format("--resume: {} of {} already in {} (same build and settings){}", n_resumed,
                     plural(points.size(), "point"), file,
                     n_resumed == points.size() ? "; nothing left to measure"
                                                : fmt::format("; measuring the other {}", points.size() - n_resumed)));
    return rows;
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

// Says once per file that it cannot be written now; export_report tries it again at the end.
void note_unwritable(const OutputTarget& target, const std::exception& error, std::vector<std::string>& unwritable) {
    if (std::find(unwritable.begin(), unwritable.end(), target.path) != unwritable.end()) return;
    unwritable.push_back(target.path);
    warn(fmt::format("{}; the sweep goes on and tries again at the end", error.what()));
}

void write_whole_files(const std::vector<OutputTarget>& targets, const std::vector<ResultRow>& rows,
                       const Environment& env, std::vector<std::string>& unwritable) {
    for (const OutputTarget& target : targets) {
        try {
            write_report_file(target.path, target.format, rows, env);
        } catch (const std::exception& error) {
            note_unwritable(target, error, unwritable);
        }
    }
}

// Every output file (-o and --export) holds every finished point as soon as it finishes, so
// a stop of any kind (a signal, a second Ctrl-C, an out-of-memory kill) loses none. Most are
// rewritten whole (atomically); a JSON Lines file gets the point's rows appended instead, one
// fsynced write per point, so a reader following it sees whole lines as they come
// (docs/csv.md#jsonl). On stdout (-o - -f jsonl) they are written and flushed as well.
void save_point(const SweepPlan& plan, const std::vector<ResultRow>& point_rows, const std::vector<ResultRow>& all_rows,
                const Environment& env, const OutputStreams& streams, std::vector<std::string>& unwritable) {
    std::vector<OutputTarget> whole;
    for (const OutputTarget& target : plan.out.files()) {
        if (target.format != OutputFormat::jsonl) {
            whole.push_back(target);
            continue;
        }
        try {
            std::ostringstream lines;
            write_jsonl(lines, point_rows, env);
            append_to_file(target.path, lines.str());
        } catch (const std::exception& error) {
            note_unwritable(target, error, unwritable);
        }
    }
    write_whole_files(whole, all_rows, env, unwritable);
    if (plan.out.stdout_is_report() && plan.out.format == OutputFormat::jsonl) write_jsonl(streams.report(), point_rows, env);
}

std::optional<double> median_of(const std::vector<ResultRow>& rows, DecodePath path) {
    for (const ResultRow& row : rows) {
        if (row.path == path) return row.stats.median_ns;
    }
    return std::nullopt;
}

// The memory that interleaving may keep allocated across rounds: what the pre-flight allows.
std::uint64_t resident_budget_bytes(const SweepPlan& plan, const Environment& env) {
    const std::optional<std::uint64_t> limit = plan.max_memory_bytes ? plan.max_memory_bytes : available_memory_bytes();
    if (!limit) return ~std::uint64_t{0};
    const std::uint64_t overhead_bytes =
        flush_buffer_bytes(plan, env) + (plan.no_roofline ? 0 : probe_bytes(env.llc_total_bytes));
    return *limit > overhead_bytes ? *limit - overhead_bytes : 0;
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

SweepOutcome measure_points(const std::vector<GridPoint>& points, const SweepPlan& plan, const Rooflines& rooflines,
                            const Environment& env, SweepRows resumed, const OutputStreams& streams) {
    const std::atomic<bool>& stop = install_interrupt_flag();
    const std::uint64_t flush_bytes = flush_buffer_bytes(plan, env);
    std::optional<CacheFlusher> flusher;
    if (plan.run.cold_cache) flusher.emplace(plan.flush, env.llc_total_bytes);
    const Evict evict = [&flusher](std::span<const ByteRegion> regions) {
        if (flusher) flusher->flush(regions);
    };
    const std::optional<std::size_t> fail_point = injected_failure_point();

    SweepOutcome outcome;
    outcome.rows = std::move(resumed);
    std::vector<std::size_t> to_measure;  // grid indices
    for (std::size_t i = 0; i < points.size(); ++i) {
        if (outcome.rows.by_point[i].empty()) to_measure.push_back(i);
    }
    outcome.n_points = to_measure.size();
    outcome.n_resumed = points.size() - to_measure.size();
    std::vector<double> estimated_s(points.size(), 0.0);  // each point's estimated seconds, for the time left
    double total_work = 0;
    for (const std::size_t i : to_measure) {
        estimated_s[i] = estimate_point_seconds(points[i], plan.run, roofline_of(rooflines, points[i].n_threads), flush_bytes);
        total_work += estimated_s[i];
    }
    // -q leaves the automatic bar out; an explicit --progress still reports.
    const ProgressMode progress_mode =
        streams.quiet() && plan.progress == ProgressMode::auto_detect ? ProgressMode::none : plan.progress;
    Progress progress(progress_mode, to_measure.size(), total_work);
    // Every file starts whole now: a resumed file loses rows of another build, a JSON Lines
    // file starts with the resumed rows (or none) before the first point's are appended.
    if (!to_measure.empty()) write_whole_files(plan.out.files(), outcome.rows.all(), env, outcome.unwritable);

    auto started = [&](std::size_t i) { progress.start_point(i, point_label(points[i])); };
    // Every point ends here, measured or failed: its rows are built, kept and saved at once.
    auto finished = [&](std::size_t i, const PointMeasurement* measured, std::exception_ptr error) {
        const std::string label = point_label(points[i]);
        std::vector<ResultRow> rows;
        try {
            if (error) std::rethrow_exception(error);
            if (fail_point == i) throw std::runtime_error("injected failure (KVBENCH_TEST_FAIL_POINT)");
            rows = make_result_rows(points[i], *measured, plan.run, roofline_of(rooflines, points[i].n_threads), env);
            if (measured->check_rel_error) {
                ++outcome.n_checked;
                outcome.worst_check_error = std::max(outcome.worst_check_error, *measured->check_rel_error);
            }
            if (measured->verify_rel_error) {
                // A reduced cache is held to its type's tolerance (docs/model.md), and reported apart.
                // Written so that a NaN error fails too.
                const ModelConfig& config = points[i].config;
                const double tolerance = kv_equivalence_tolerance(config.kv_dtype, config.head_dim());
                if (config.kv_dtype == KvDtype::f32) {
                    ++outcome.n_verified;
                    outcome.worst_verify_error = std::max(outcome.worst_verify_error, *measured->verify_rel_error);
                } else {
                    ++outcome.n_verified_reduced;
                    outcome.worst_reduced_fraction =
                        std::max(outcome.worst_reduced_fraction, *measured->verify_rel_error / tolerance);
                }
                if (!(*measured->verify_rel_error < tolerance)) {
                    throw std::runtime_error(fmt::format("--verify failed: relative error {:.3g} (tolerance {:.2g})",
                                                         *measured->verify_rel_error, tolerance));
                }
            }
        } catch (const std::exception& failure) {
            const std::string reason =
                dynamic_cast<const std::bad_alloc*>(&failure) != nullptr ? "out of memory" : failure.what();
            progress.clear();
            fmt::print(stderr, "kvbench: error: point {} of {} failed ({}, {}, {} cache): {}; the sweep goes on\n",
                       i + 1, points.size(), label, paths_label(plan.run), plan.run.cold_cache ? "cold" : "warm",
                       reason);
            outcome.failures.push_back(fmt::format("{}: {}", label, reason));
            // A --verify mismatch still has its timings: keep them, with their error.
            outcome.rows.by_point[i] = rows;
            save_point(plan, rows, outcome.rows.all(), env, streams, outcome.unwritable);
            progress.fail_point(i, label, reason, estimated_s[i]);
            ++outcome.n_finished;
            return;
        }
        outcome.rows.by_point[i] = rows;
        rows = outcome.rows.point_rows(i);  // a reduced cache's speedup against the f32 point's uncached step
        // Saved before it is announced: a reader of the progress stream finds it in the file.
        save_point(plan, rows, outcome.rows.all(), env, streams, outcome.unwritable);
        if (streams.verbose()) {
            progress.clear();
            streams.detail(point_details(i, points.size(), label, rows));
        }
        progress.finish_point(i, label, median_of(rows, DecodePath::cached), median_of(rows, DecodePath::uncached),
                              estimated_s[i]);
        ++outcome.n_finished;
    };

    if (plan.interleave) {
        std::vector<GridPoint> subset;
        for (const std::size_t i : to_measure) subset.push_back(points[i]);
        InterleaveOptions interleave;
        interleave.shuffle_seed = plan.run.seed;
        interleave.resident_budget_bytes = resident_budget_bytes(plan, env);
        run_interleaved(subset, plan.run, evict, interleave, stop,
                        [&](std::size_t k) { started(to_measure[k]); },
                        [&](std::size_t k, const PointMeasurement* measured, std::exception_ptr error) {
                            finished(to_measure[k], measured, error);
                        });
    } else {
        PointRunner runner(evict);
        for (const std::size_t i : to_measure) {
            if (stop.load()) break;
            started(i);
            PointMeasurement measured;
            std::exception_ptr error;
            try {
                measured = runner.run(points[i], plan.run, stop);
            } catch (...) {
                error = std::current_exception();
            }
            if (measured.interrupted) break;
            finished(i, error ? nullptr : &measured, error);
        }
    }
    outcome.stop_signal = interrupting_signal();
    progress.finish_sweep(outcome.n_finished, outcome.failures.size(), outcome.stop_signal != 0);
    return outcome;
}

// ---- Step: finish rows ------------------------------------------------------------------

// One line for all noisy rows, with a fix that applies to this run (not one line per point).
void summarize_noise(const SweepPlan& plan, const SweepOutcome& outcome, const Environment& env) {
    const NoiseContext context{plan.run.n_reps, plan.run.min_time_s, plan.interleave, env.n_cores};
    if (const std::optional<std::string> message = noise_warning(outcome.rows.all(), context)) warn(*message);
}

// One line for all rows an order of magnitude slower than the machine allows: a busy or
// oversubscribed machine can time steadily (a small CV) and still wrongly.
void check_slow_rows(const SweepOutcome& outcome, const Rooflines& rooflines) {
    if (const std::optional<std::string> message = slow_rows_warning(outcome.rows.all(), rooflines)) warn(*message);
}

// ---- Step: check drift ------------------------------------------------------------------

// On a shared or virtualised host, memory bandwidth drifts by tens of percent over minutes
// (seen on the reference machine: 50 to 90 GB/s). Read it again now and say so when the
// roofline no longer describes the machine the points ran on.
void check_bandwidth_drift(const SweepOutcome& outcome, const Rooflines& rooflines, const Environment& env) {
    if (outcome.stop_signal != 0 || outcome.n_finished == 0) return;
    for (const auto& [n_threads, roofline] : rooflines) {
        const std::size_t buffer_bytes = probe_bytes(env.llc_total_bytes);
        const std::optional<std::uint64_t> available = available_memory_bytes();
        if (available && buffer_bytes > *available / 2) continue;  // not worth squeezing the machine for
        set_compute_threads(n_threads);
        const double now_gbps = measure_read_bandwidth_gbps(buffer_bytes, 3);
        const double ratio = now_gbps / roofline.peak_gbps;
        constexpr double tolerated_drift = 0.15;
        if (ratio < 1 - tolerated_drift || ratio > 1 + tolerated_drift) {
            warn(fmt::format("memory bandwidth on {} reads {:.1f} GB/s now against the roofline's {:.1f} GB/s "
                             "(measured {}): this host's bandwidth drifts, so roofline % are approximate; "
                             "re-run with --measure-roofline when the host is quieter",
                             plural(n_threads, "thread"), now_gbps, roofline.peak_gbps, roofline.measured_at));
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

// The output files that hold every row at the end, and those that could not be written.
struct ExportResult {
    std::vector<OutputTarget> written;
    std::vector<std::string> failed;
};

// Every file is written whole one last time (a failure is said on its own line, and the tables
// are then printed even under -q, so no result is lost), except a JSON Lines file that already
// holds every row: rewriting it would swap the file under a reader following it. Then the
// report on stdout when it goes there (JSON Lines went out point by point), then the tables
// and the growth law.
ExportResult export_report(const SweepPlan& plan, const SweepOutcome& outcome, const Environment& env,
                           const OutputStreams& streams) {
    const std::vector<ResultRow> rows = outcome.rows.all();
    ExportResult result;
    for (const OutputTarget& target : plan.out.files()) {
        const bool appended = target.format == OutputFormat::jsonl && outcome.n_points > 0 &&
                              std::find(outcome.unwritable.begin(), outcome.unwritable.end(), target.path) ==
                                  outcome.unwritable.end();
        try {
            if (!appended) write_report_file(target.path, target.format, rows, env);
            result.written.push_back(target);
        } catch (const std::exception& error) {
            fmt::print(stderr, "kvbench: error: {}; the results are in the tables below\n", error.what());
            result.failed.push_back(target.path);
        }
    }
    if (plan.out.stdout_is_report() && plan.out.format == OutputFormat::md) {
        write_markdown(streams.report(), rows, env, plan.table);  // --time-unit applies
    } else if (plan.out.stdout_is_report() && plan.out.format != OutputFormat::jsonl) {
        write_report(streams.report(), plan.out.format, rows, env);
    }
    std::ostream& tables =
        result.failed.empty() ? streams.tables() : plan.out.stdout_is_report() ? std::cerr : std::cout;
    write_table(tables, rows, env, plan.table);
    // The growth law a·N^k of each series with three or more contexts (docs/generate.md).
    if (const std::optional<TextTable> growth = growth_table(rows)) {
        tables << '\n';
        write_text_table(tables, *growth);
    }
    tables.flush();
    check_stdout();
    return result;
}

// The closing lines and the exit status: 0, 1 when a point failed or a file could not be
// written, 128 + signal when stopped.
int report_outcome(const SweepPlan& plan, const SweepOutcome& outcome, const ExportResult& exported,
                   const OutputStreams& streams) {
    std::ostream& notes = streams.tables();
    if (plan.run.verify && outcome.n_verified > 0 && outcome.failures.empty()) {
        notes << fmt::format("verify: cached step == uncached forward at {}{}; worst relative error "
                             "{:.2e} (tolerance {:.0e})\n",
                             outcome.n_verified == 1 ? "" : "all ", plural(outcome.n_verified, "point"),
                             outcome.worst_verify_error, verify_tolerance);
    }
    if (plan.run.verify && outcome.n_verified_reduced > 0 && outcome.failures.empty()) {
        notes << fmt::format("verify: with a reduced-precision cache, cached step ~ uncached forward at {}{} within "
                             "2*u*sqrt(dh) per layer (docs/model.md); worst at {:.0f} % of it\n",
                             outcome.n_verified_reduced == 1 ? "" : "all ",
                             plural(outcome.n_verified_reduced, "point"), 100 * outcome.worst_reduced_fraction);
    }
    if (plan.run.check && outcome.n_checked > 0) {
        notes << fmt::format("check: every kernel matched its naive twin at {}{}; worst relative error "
                             "{:.2e} (tolerance {:.0e})\n",
                             outcome.n_checked == 1 ? "" : "all ", plural(outcome.n_checked, "point"),
                             outcome.worst_check_error, kernel_check_tolerance);
    }
    notes.flush();
    const std::size_t n_rows = outcome.rows.all().size();
    std::vector<std::string> written;
    for (const OutputTarget& target : exported.written) written.push_back(target.path);
    if (!written.empty()) streams.message(fmt::format("wrote {} to {}", count_rows(n_rows), fmt::join(written, ", ")));
    for (const OutputTarget& target : exported.written) {
        if (target.format != OutputFormat::csv) continue;
        streams.message(fmt::format("plot it: /usr/bin/python3 plots/kvbench_plot.py {} (from the kvbench source tree)",
                                    target.path));
        break;
    }
    check_stdout();
    const std::string holder = !written.empty() ? fmt::format("{}", fmt::join(written, " and "))
                               : plan.out.stdout_is_report() ? std::string("the report on standard output")
                                                             : std::string("the report above");
    if (!outcome.failures.empty()) {
        fmt::print(stderr, "kvbench: error: {} of {} failed (listed above); {} holds the {} measured\n",
                   outcome.failures.size(), plural(outcome.n_points, "point"), holder, plural(n_rows, "row"));
    }
    if (outcome.stop_signal != 0) {
        fmt::print(stderr, "kvbench: interrupted (SIG{}) after {} of {}; {} holds the finished ones\n",
                   sigabbrev_np(outcome.stop_signal), outcome.n_finished, plural(outcome.n_points, "point"), holder);
        return 128 + outcome.stop_signal;
    }
    return outcome.failures.empty() && exported.failed.empty() ? exit_ok : exit_failure;
}

}  // namespace

int run_sweep_command(const SweepCliOptions& options) {
    const SweepPlan plan = plan_sweep(options);
    const OutputStreams streams(plan.out);
    Environment env = collect_environment();
    env.command_line = command_line();
    warn_about_machine(plan, env);
    const std::vector<GridPoint> points = preflight(plan, env);
    const Rooflines rooflines = load_rooflines(plan, points, env);
    if (!plan.dry_run) {
        double estimated_s = 0;
        for (const GridPoint& point : points) {
            estimated_s += estimate_point_seconds(point, plan.run, roofline_of(rooflines, point.n_threads),
                                                  flush_buffer_bytes(plan, env));
        }
        confirm_grid_size(points.size(), estimated_s, plan.likely_intent, plan.yes, "kvbench sweep");
    }
    if (plan.dry_run) {
        print_dry_run(points, plan, rooflines, env);
        check_stdout();
        return exit_ok;
    }
    SweepRows resumed = resume_rows(plan, points, env);
    const SweepOutcome outcome = measure_points(points, plan, rooflines, env, std::move(resumed), streams);
    summarize_noise(plan, outcome, env);
    check_slow_rows(outcome, rooflines);
    check_bandwidth_drift(outcome, rooflines, env);
    const ExportResult exported = export_report(plan, outcome, env, streams);
    return report_outcome(plan, outcome, exported, streams);
}

}  // namespace kvbench
