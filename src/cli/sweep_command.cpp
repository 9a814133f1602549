// The sweep's scheduler: memory check, dry run, the measuring loop, and where each report goes.
#include "cli/sweep_command.hpp"

#include "cli/interrupt.hpp"
#include "cli/progress.hpp"

#include "kvbench/engine/blas.hpp"
#include "kvbench/engine/kernel_check.hpp"
#include "kvbench/measure/budget.hpp"
#include "kvbench/measure/cache_flush.hpp"
#include "kvbench/measure/environment.hpp"
#include "kvbench/measure/memory.hpp"
#include "kvbench/measure/roofline.hpp"
#include "kvbench/report/summary_tables.hpp"
#include "kvbench/report/units.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>

namespace kvbench {

namespace {

constexpr double verify_tolerance = 1e-4;  // SPEC §1

void warn(const std::string& message) { fmt::print(stderr, "kvbench: warning: {}\n", message); }

std::string point_label(const GridPoint& point) {
    return fmt::format("{} T={} ({})", describe(point.config), point.n_threads,
                       grouping_label(point.config.n_heads, point.config.n_kv_heads));
}

// The roofline of each thread count: --roofline for all, else the saved file when there is one.
std::map<std::size_t, Roofline> load_rooflines(const SweepPlan& plan) {
    std::map<std::size_t, Roofline> rooflines;
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

const Roofline* roofline_of(const std::map<std::size_t, Roofline>& rooflines, std::size_t n_threads) {
    const auto found = rooflines.find(n_threads);
    return found == rooflines.end() ? nullptr : &found->second;
}

// Drops, with one warning each, the points whose allocations exceed the memory limit.
std::vector<GridPoint> points_that_fit(const SweepPlan& plan, std::uint64_t flush_bytes) {
    const std::optional<std::uint64_t> available = available_memory_bytes();
    const std::optional<std::uint64_t> limit = plan.max_memory ? plan.max_memory : available;
    const char* limit_name = plan.max_memory ? "--max-memory" : "the memory available now";
    std::vector<GridPoint> kept;
    for (const GridPoint& point : plan.grid.points) {
        const MemoryBudget budget = point_memory(point, plan.run);
        const std::uint64_t needed = budget.total_bytes() + flush_bytes;
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

void print_dry_run(const std::vector<GridPoint>& points, const SweepPlan& plan,
                   const std::map<std::size_t, Roofline>& rooflines, std::uint64_t flush_bytes) {
    TextTable table{"Dry run: the grid, nothing measured",
                    {"point", "T", "grouping", "cached", "uncached", "KV cache", "weights", "scratch",
                     "inputs", "memory", "est. time"},
                    {Align::left, Align::right, Align::left, Align::right, Align::right, Align::right,
                     Align::right, Align::right, Align::right, Align::right, Align::right},
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
        const MemoryBudget budget = point_memory(point, plan.run);
        table.lines.push_back({describe(point.config), fmt::format("{}", point.n_threads),
                               grouping_label(point.config.n_heads, point.config.n_kv_heads),
                               flops(plan.run.run_cached, DecodePath::cached),
                               flops(plan.run.run_uncached, DecodePath::uncached),
                               format_bytes(kv_cache_bytes(point.config)), format_bytes(budget.weights_bytes),
                               format_bytes(budget.scratch_bytes), format_bytes(budget.inputs_bytes),
                               format_bytes(budget.total_bytes() + flush_bytes),
                               format_duration_ns(seconds * 1e9)});
    }
    table.footnote = fmt::format(
        "{} points, about {} in all. FLOPs per step; memory is what the point allocates (the KV cache, "
        "weights, scratch and inputs, plus the cold-cache flush buffer); time {}.",
        points.size(), format_duration_ns(total_seconds * 1e9),
        rooflines.empty() ? "assumes 100 GFLOP/s and 20 GB/s (run `kvbench roofline` for this machine's)"
                          : "from the saved roofline");
    write_text_table(std::cout, table);
}

void warn_if_noisy(const Row& row) {
    if (!is_noisy(row.stats)) return;
    warn(fmt::format("{} T={} {}: latency varies (CV {:.1f} %, MdAPE {:.1f} %); add --warmup or --reps, "
                     "or use fewer --threads than cores",
                     describe(row.config), row.n_threads, path_name(row.path), 100 * row.stats.cv,
                     100 * row.stats.mdape));
}

// Fills roofline_pct and fits_in_llc, which need the machine and not only the measurement.
void attach_machine_figures(std::vector<Row>& rows, const std::map<std::size_t, Roofline>& rooflines,
                            const Environment& env) {
    for (Row& row : rows) {
        row.fits_in_llc = env.llc_bytes > 0 && row.cost.bytes <= env.llc_bytes;
        if (const Roofline* roofline = roofline_of(rooflines, row.n_threads)) {
            row.roofline_pct = roofline_pct(roofline_time_s(row.cost.flops, row.cost.bytes, *roofline),
                                            row.stats.median_ns * 1e-9);
        }
    }
}

// On a shared or virtualised host, memory bandwidth drifts by tens of percent over minutes
// (seen on the reference machine: 50 to 90 GB/s). Read it again now and say so when the
// roofline no longer describes the machine the points ran on.
void warn_if_bandwidth_drifted(const std::map<std::size_t, Roofline>& rooflines, const Environment& env) {
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

void check_output_directory(const std::optional<std::string>& output) {
    if (!output) return;
    const std::filesystem::path parent = std::filesystem::absolute(*output).parent_path();
    if (!std::filesystem::is_directory(parent)) {
        throw ConfigError(fmt::format("-o {}: directory {} does not exist", *output, parent.string()));
    }
}

}  // namespace

int run_sweep_command(const SweepCliOptions& options) {
    const SweepPlan plan = to_sweep_plan(options);
    check_output_directory(plan.output);
    for (const std::string& skipped : plan.grid.skipped) warn("skipping " + skipped);

    const Environment env = collect_environment();
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
    const std::map<std::size_t, Roofline> rooflines = load_rooflines(plan);
    const std::uint64_t flush_bytes =
        plan.run.cold_cache
            ? CacheFlusher::llc_multiple * (env.llc_bytes > 0 ? env.llc_bytes : CacheFlusher::fallback_llc_bytes)
            : 0;
    const std::vector<GridPoint> points = points_that_fit(plan, flush_bytes);
    if (plan.dry_run) {
        print_dry_run(points, plan, rooflines, flush_bytes);
        return 0;
    }

    const std::atomic<bool>& stop = install_interrupt_flag();
    std::optional<CacheFlusher> flusher;
    if (plan.run.cold_cache) flusher.emplace(env.llc_bytes);
    PointRunner runner(flusher ? &*flusher : nullptr);

    std::vector<double> work;
    double total_work = 0;
    for (const GridPoint& point : points) {
        work.push_back(estimate_point_seconds(point, plan.run, roofline_of(rooflines, point.n_threads), flush_bytes));
        total_work += work.back();
    }
    Progress progress(points.size(), total_work);
    std::vector<Row> rows;
    std::size_t n_finished = 0;
    std::vector<std::string> verify_failures;
    double worst_error = 0;
    double worst_check_error = 0;
    const std::string cache_state = plan.run.cold_cache ? "cold" : "warm";
    for (std::size_t i = 0; i < points.size(); ++i) {
        const GridPoint& point = points[i];
        progress.start_point(i, point_label(point));
        PointMeasurement measured = runner.run(point, plan.run, stop);
        if (measured.interrupted) break;
        for (auto* path : {&measured.cached, &measured.uncached}) {
            if (!*path) continue;
            const DecodePath which = path == &measured.cached ? DecodePath::cached : DecodePath::uncached;
            Row row = make_row(which, point.config, point.n_threads, cache_state, std::move((*path)->samples_ns));
            row.verify_rel_error = measured.verify_rel_error;
            row.flops_executed = (*path)->flops.executed;
            progress.clear();
            warn_if_noisy(row);
            rows.push_back(std::move(row));
        }
        if (measured.check_rel_error) worst_check_error = std::max(worst_check_error, *measured.check_rel_error);
        if (measured.verify_rel_error) {
            worst_error = std::max(worst_error, *measured.verify_rel_error);
            if (!(*measured.verify_rel_error < verify_tolerance)) {
                verify_failures.push_back(fmt::format("{}: relative error {:.3g}", point_label(point),
                                                      *measured.verify_rel_error));
            }
        }
        progress.finish_point(work[i]);
        ++n_finished;
    }
    progress.clear();
    if (n_finished == points.size() && !rows.empty()) warn_if_bandwidth_drifted(rooflines, env);

    assign_speedups(rows);
    attach_machine_figures(rows, rooflines, env);
    // Without -o the chosen format goes to stdout; with it, the file gets the format and
    // the terminal keeps the human tables.
    const bool stdout_is_report = !plan.output && plan.format != OutputFormat::table;
    if (plan.output) {
        write_report_file(*plan.output, plan.format, rows, env);
        write_table(std::cout, rows, env);
    } else {
        write_report(std::cout, plan.format, rows, env);
    }
    std::cout.flush();
    std::FILE* notes = stdout_is_report ? stderr : stdout;

    if (plan.run.verify && !verify_failures.empty()) {
        for (const std::string& failure : verify_failures) {
            fmt::print(stderr, "kvbench: error: --verify failed at {} (tolerance {:.0e})\n", failure,
                       verify_tolerance);
        }
    } else if (plan.run.verify && n_finished > 0) {
        fmt::print(notes, "verify: cached step == uncached forward at all {} points; worst relative error "
                          "{:.2e} (tolerance {:.0e})\n",
                   n_finished, worst_error, verify_tolerance);
    }
    if (plan.run.check && n_finished > 0) {
        fmt::print(notes, "check: every kernel matched its naive twin at all {} points; worst relative error "
                          "{:.2e} (tolerance {:.0e})\n",
                   n_finished, worst_check_error, kernel_check_tolerance);
    }
    if (plan.output) fmt::print(notes, "wrote {} rows to {}\n", rows.size(), *plan.output);
    if (n_finished < points.size()) {
        fmt::print(stderr, "kvbench: interrupted after {} of {} points; {} holds the finished ones\n",
                   n_finished, points.size(), plan.output ? *plan.output : std::string("the report above"));
        return 130;
    }
    return verify_failures.empty() ? 0 : 1;
}

}  // namespace kvbench
