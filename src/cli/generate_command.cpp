// The generation's scheduler: estimate, run each configuration, summarise, fit the growth law, report.
#include "cli/generate_command.hpp"

#include "cli/command_line.hpp"
#include "cli/grid_guard.hpp"
#include "cli/interrupt.hpp"
#include "cli/option_conventions.hpp"
#include "cli/output_streams.hpp"
#include "cli/progress.hpp"
#include "cli/result_warnings.hpp"

#include "kvbench/engine/kv_convert.hpp"
#include "kvbench/measure/environment.hpp"
#include "kvbench/measure/growth_fit.hpp"
#include "kvbench/measure/memory.hpp"
#include "kvbench/report/atomic_file.hpp"
#include "kvbench/report/columns.hpp"
#include "kvbench/report/summary_tables.hpp"
#include "kvbench/report/units.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <numeric>
#include <optional>
#include <sstream>

namespace kvbench {

namespace {

using Rooflines = std::map<std::size_t, Roofline>;

constexpr double verify_tolerance = 1e-4;      // docs/model.md#equivalence
constexpr double long_run_seconds = 60;        // warn before runs longer than this
constexpr const char* plot_script = "plots/kvbench_plot.py";

void warn(const std::string& message) {
    if (!messages_silenced()) fmt::print(stderr, "kvbench: warning: {}\n", message);
}

// The uncached path keeps no cache, so its lines name no cache type (it runs with f32 K and V).
std::string shape_label(const GridPoint& point, DecodePath path = DecodePath::cached) {
    ModelConfig c = point.config;
    if (path == DecodePath::uncached) c.kv_dtype = KvDtype::f32;
    const std::string head_dim = c.explicit_head_dim == 0 ? "" : fmt::format(" dh={}", c.explicit_head_dim);
    const std::string kv_dtype = c.kv_dtype == KvDtype::f32 ? "" : fmt::format(" kv={}", kv_dtype_info(c.kv_dtype).name);
    return fmt::format("B={} D={} H={}{} G={} L={} T={}{}", c.n_batch, c.model_dim, c.n_heads, head_dim, c.n_kv_heads,
                       c.n_layers, point.n_threads, kv_dtype);
}

// The saved roofline of each thread count, when `kvbench roofline` has run: for the time
// estimate and roofline_pct. A generation does not measure one itself.
std::map<std::size_t, Roofline> saved_rooflines(const Grid& grid) {
    std::map<std::size_t, Roofline> rooflines;
    for (const GridPoint& point : grid.points) {
        if (rooflines.contains(point.n_threads)) continue;
        try {
            const std::filesystem::path saved = default_roofline_path(point.n_threads);
            if (!std::filesystem::exists(saved)) continue;
            Roofline loaded = load_roofline(saved);
            loaded.source = fmt::format("saved (measured {}{})", loaded.measured_at, loaded.quick ? ", quick" : "");
            rooflines.emplace(point.n_threads, std::move(loaded));
        } catch (const std::runtime_error& error) {
            warn(fmt::format("ignoring the saved roofline: {}", error.what()));
        }
    }
    return rooflines;
}

const Roofline* roofline_of(const std::map<std::size_t, Roofline>& rooflines, std::size_t n_threads) {
    const auto found = rooflines.find(n_threads);
    return found == rooflines.end() ? nullptr : &found->second;
}

std::vector<GridPoint> points_that_fit(const GeneratePlan& plan, std::uint64_t flush_bytes) {
    const std::optional<std::uint64_t> available = available_memory_bytes();
    std::vector<GridPoint> kept;
    for (const GridPoint& point : plan.grid.points) {
        const std::uint64_t needed = generation_memory_bytes(point, plan.generation) + flush_bytes;
        if (available && needed > *available) {
            warn(fmt::format("skipping {}: it needs {}, more than the memory available now ({})", shape_label(point),
                             format_bytes(needed), format_bytes(*available)));
            continue;
        }
        kept.push_back(point);
    }
    if (kept.empty()) {
        throw ConfigError("no configuration fits in the memory available now: choose a smaller --prompt, --new, "
                          "--batch, --dim or --layers");
    }
    return kept;
}

// One finished path of one configuration, with what its rows and summary need.
struct PathResult {
    GridPoint point;
    DecodePath path = DecodePath::cached;
    std::vector<GenerationStep> steps;
};

// Per-step rows: reps = 1, the step's own latency as its median (docs/generate.md#the-csv-and-json).
void append_rows(const PathResult& result, const GeneratePlan& plan, const std::vector<double>& verify_errors,
                 const Roofline* roofline, const Environment& env, std::vector<ResultRow>& rows,
                 std::vector<GenerationStep>& row_steps) {
    RunOptions options;
    options.cold_cache = plan.generation.cold_cache;
    options.seed = plan.generation.seed;
    options.n_warmup = 0;  // a generation times every step once, none untimed
    for (const GenerationStep& step : result.steps) {
        GridPoint point = result.point;
        point.config.seq_len = step.seq_len;
        const PathMeasurement measured{{step.latency_ns}, step.flops};
        // The prefill is a full forward, whichever path runs it: it costs what that costs.
        const StepCost cost = generation_step_cost(result.point.config, plan.generation, result.path, step.index);
        const std::optional<double> verify =
            step.index < verify_errors.size() ? std::optional<double>(verify_errors[step.index]) : std::nullopt;
        ResultRow row = make_result_row(result.path, point, measured, cost, options, roofline, env, verify);
        row.reps_policy = "one generation step";
        rows.push_back(std::move(row));
        row_steps.push_back(step);
    }
}

// Each row's speedup: the uncached latency of the same configuration and step over its own.
void assign_step_speedups(std::vector<ResultRow>& rows) {
    for (ResultRow& row : rows) {
        const auto uncached = std::find_if(rows.begin(), rows.end(), [&](const ResultRow& other) {
            return other.path == DecodePath::uncached && other.config == row.config &&
                   other.n_threads == row.n_threads && other.cache_state == row.cache_state;
        });
        if (uncached != rows.end() && row.stats.median_ns > 0) {
            row.speedup = uncached->stats.median_ns / row.stats.median_ns;
        }
    }
}

std::vector<ExtraColumn> step_columns(const std::vector<GenerationStep>& row_steps, const GeneratePlan& plan) {
    ExtraColumn step{"step", {}}, phase{"phase", {}}, prompt{"prompt", {}}, n_new{"new_tokens", {}};
    for (const GenerationStep& s : row_steps) {
        step.values.emplace_back(std::uint64_t{s.index});
        phase.values.emplace_back(std::string(s.index == 0 ? "prefill" : "decode"));
        prompt.values.emplace_back(std::uint64_t{plan.generation.prompt_len});
        n_new.values.emplace_back(std::uint64_t{plan.generation.n_new});
    }
    return {step, phase, prompt, n_new};
}

double total_ns(const std::vector<GenerationStep>& steps) {
    return std::accumulate(steps.begin(), steps.end(), 0.0,
                           [](double sum, const GenerationStep& s) { return sum + static_cast<double>(s.latency_ns); });
}

// The decode steps' latencies (step 0, the prefill, is a different operation) against N.
std::optional<GrowthFit> measured_growth(const PathResult& result, double from_n) {
    std::vector<double> n, t;
    for (const GenerationStep& step : result.steps) {
        if (result.path == DecodePath::cached && step.index == 0) continue;
        n.push_back(static_cast<double>(step.seq_len));
        t.push_back(static_cast<double>(step.latency_ns));
    }
    return fit_growth(n, t, from_n);
}

// The same fit over the cost model's roofline time at the same N: the exponent the model
// predicts on this machine's balance of FLOP/s and bytes/s.
std::optional<GrowthFit> model_growth(const PathResult& result, const GeneratePlan& plan, const Roofline& machine,
                                      double from_n) {
    std::vector<double> n, t;
    for (const GenerationStep& step : result.steps) {
        if (result.path == DecodePath::cached && step.index == 0) continue;
        const StepCost cost = generation_step_cost(result.point.config, plan.generation, result.path, step.index);
        n.push_back(static_cast<double>(step.seq_len));
        t.push_back(roofline_time_s(cost.flops, cost.bytes, machine));
    }
    return fit_growth(n, t, from_n);
}

TextTable summary_table(const std::vector<PathResult>& results, const GeneratePlan& plan) {
    // The times first, so that each column gets one unit chosen from all its values.
    struct Times {
        std::optional<double> first_ns, per_token_ns, p90_ns;
        double total_ns = 0;
        std::string rate = "-";
        std::uint64_t flops = 0;
    };
    std::vector<Times> times;
    std::vector<double> first_column, per_token_column, p90_column, total_column;
    for (const PathResult& result : results) {
        const ModelConfig& c = result.point.config;
        Times t;
        std::vector<std::int64_t> decode_ns;
        for (const GenerationStep& step : result.steps) {
            if (step.index > 0) decode_ns.push_back(step.latency_ns);
            t.flops += generation_step_cost(c, plan.generation, result.path, step.index).flops;
        }
        if (!result.steps.empty() && result.steps.front().index == 0) {
            t.first_ns = static_cast<double>(result.steps.front().latency_ns);
            first_column.push_back(*t.first_ns);
        }
        if (!decode_ns.empty()) {
            const Stats stats = summarize(decode_ns);
            t.per_token_ns = stats.median_ns;
            t.p90_ns = stats.p90_ns;
            per_token_column.push_back(stats.median_ns);
            p90_column.push_back(stats.p90_ns);
            const double decode_total = std::accumulate(decode_ns.begin(), decode_ns.end(), 0.0);
            t.rate = format_number(static_cast<double>(c.n_batch * decode_ns.size()) / (decode_total * 1e-9));
        }
        t.total_ns = total_ns(result.steps);
        total_column.push_back(t.total_ns);
        times.push_back(std::move(t));
    }
    const TimeUnit forced = plan.table.time_unit;
    const ColumnUnit first_unit = duration_unit(first_column, forced);
    // Per token and p90 share a unit: they compare within a line.
    std::vector<double> decode_column = per_token_column;
    decode_column.insert(decode_column.end(), p90_column.begin(), p90_column.end());
    const ColumnUnit decode_unit = duration_unit(decode_column, forced);
    const ColumnUnit total_unit = duration_unit(total_column, forced);
    auto time_cell = [](const std::optional<double>& ns, const ColumnUnit& unit) {
        return ns ? format_in(*ns, unit) : std::string("-");
    };

    TextTable table{fmt::format("Generation: prompt P={}, {} new tokens", plan.generation.prompt_len,
                                plan.generation.n_new),
                    {"configuration", "grouping", "path", "first token\n" + first_unit.name,
                     "per token\n" + decode_unit.name, "p90\n" + decode_unit.name, "total\n" + total_unit.name,
                     "tokens/s", "FLOPs", "KV at end", "uncached/\ncached"},
                    {Align::left, Align::left, Align::left, Align::right, Align::right, Align::right,
                     Align::right, Align::right, Align::right, Align::right, Align::right},
                    {},
                    "first token: the prefill (step 0); per token and p90: the decode steps' median and 90th "
                    "percentile; tokens/s: B·T over the decode steps' time; uncached/cached: total times."};
    for (std::size_t r = 0; r < results.size(); ++r) {
        const PathResult& result = results[r];
        const Times& t = times[r];
        const ModelConfig& c = result.point.config;
        std::string ratio = "-";
        if (result.path == DecodePath::cached) {
            for (const PathResult& other : results) {
                if (other.path == DecodePath::uncached && other.point.config == c &&
                    other.point.n_threads == result.point.n_threads && other.steps.size() == result.steps.size()) {
                    ratio = format_ratio(total_ns(other.steps) / total_ns(result.steps));
                }
            }
        }
        ModelConfig last = c;
        last.seq_len = plan.generation.context_of(result.steps.empty() ? 0 : result.steps.back().index);
        table.lines.push_back(
            {shape_label(result.point, result.path), grouping_label(c.n_heads, c.n_kv_heads), path_name(result.path),
             time_cell(t.first_ns, first_unit), time_cell(t.per_token_ns, decode_unit), time_cell(t.p90_ns, decode_unit),
             format_in(t.total_ns, total_unit), t.rate, format_flops(static_cast<double>(t.flops)),
             result.path == DecodePath::cached ? format_bytes(kv_cache_bytes(last)) : "none", ratio});
    }
    return table;
}

TextTable generation_growth_table(const std::vector<PathResult>& results, const GeneratePlan& plan,
                       const std::map<std::size_t, Roofline>& rooflines) {
    Roofline assumed;
    assumed.peak_gflops = 100;
    assumed.peak_gbps = 20;
    TextTable table{"Growth law: per-step latency = a·N^k, least squares in log-log",
                    {"configuration", "grouping", "path", "N range", "steps", "k measured", "RMS log resid.",
                     "k of the model"},
                    {Align::left, Align::left, Align::left, Align::right, Align::right, Align::right,
                     Align::right, Align::right},
                    {},
                    "The model predicts k <= 1 cached (O(D²) constant + O(N·D) linear) and k rising toward 2 "
                    "uncached once N outgrows D (O(N·D²) + O(N²·D)); 'k of the model' fits the cost model's "
                    "roofline time over the same N. Use --fit-from N to fit where the asymptotic term dominates."};
    const double from_n = static_cast<double>(plan.fit_from);
    for (const PathResult& result : results) {
        const ModelConfig& c = result.point.config;
        const std::optional<GrowthFit> fit = measured_growth(result, from_n);
        const Roofline* roofline = roofline_of(rooflines, result.point.n_threads);
        const std::optional<GrowthFit> model = model_growth(result, plan, roofline ? *roofline : assumed, from_n);
        if (!fit) {
            table.lines.push_back({shape_label(result.point, result.path), grouping_label(c.n_heads, c.n_kv_heads),
                                   path_name(result.path), "-", "-", "fewer than 3 steps", "-", "-"});
            continue;
        }
        table.lines.push_back({shape_label(result.point, result.path), grouping_label(c.n_heads, c.n_kv_heads),
                               path_name(result.path), fmt::format("{}..{}", fit->min_n, fit->max_n),
                               fmt::format("{}", fit->n_points),
                               fmt::format("{:.2f} ± {:.2f}", fit->exponent, fit->exponent_stderr),
                               fmt::format("{:.3f}", fit->rms_log_residual),
                               model ? fmt::format("{:.2f}", model->exponent) : std::string("-")});
    }
    return table;
}

void write_steps(std::ostream& out, OutputFormat format, const std::vector<ResultRow>& rows,
                 const std::vector<ExtraColumn>& extra, const Environment& env) {
    switch (format) {
    case OutputFormat::json: write_json_with_extra(out, rows, extra, env); return;
    case OutputFormat::jsonl: write_jsonl_with_extra(out, rows, extra, env); return;
    case OutputFormat::csv: write_csv_with_extra(out, rows, extra, env); return;
    default: throw std::invalid_argument("generate writes csv, json or jsonl rows");
    }
}

}  // namespace

namespace {

// ---- The command's steps, in the order run_generate_command takes them ----------------------

GeneratePlan plan_generation(const GenerateCliOptions& options) {
    GeneratePlan plan = to_generate_plan(options);
    for (const std::string& skipped : plan.grid.skipped) warn("skipping " + skipped);
    return plan;
}

void warn_about_build(const Environment& env) {
    if (!env.optimized_build) {
        warn(fmt::format("this is a {} build: its timings mean nothing; build with -DCMAKE_BUILD_TYPE=Release",
                         env.build_type));
    }
}

std::uint64_t generation_flush_bytes(const GeneratePlan& plan, const Environment& env) {
    return plan.generation.cold_cache ? stream_flush_bytes(env.llc_total_bytes) : 0;
}

// What the run will take, step by step: the progress line's estimates and the long-run warning.
struct RunEstimate {
    std::vector<std::vector<double>> step_seconds;  // per point, per step (cached steps, then uncached)
    double total_seconds = 0;
    std::size_t n_steps = 0;
};

// The uncached path grows as N²: say how long the run will take before starting it.
RunEstimate estimate_run(const std::vector<GridPoint>& points, const GeneratePlan& plan, const Rooflines& rooflines,
                         std::uint64_t flush_bytes) {
    RunEstimate estimate;
    for (const GridPoint& point : points) {
        estimate.step_seconds.push_back(estimate_generation_seconds(
            point, plan.generation, roofline_of(rooflines, point.n_threads), flush_bytes));
        const std::vector<double>& steps = estimate.step_seconds.back();
        estimate.total_seconds = std::accumulate(steps.begin(), steps.end(), estimate.total_seconds);
        estimate.n_steps += steps.size();
    }
    if (estimate.total_seconds > long_run_seconds) {
        warn(fmt::format("this generation will take about {} ({}; {}); lower --new or --prompt, or use "
                         "--paths cached, for a shorter run",
                         format_duration_ns(estimate.total_seconds * 1e9), plural(estimate.n_steps, "step"),
                         rooflines.empty() ? "assuming 100 GFLOP/s and 20 GB/s: run `kvbench roofline` for this "
                                             "machine's figures"
                                           : "estimated from the saved roofline"));
    }
    return estimate;
}

struct GenerationOutcome {
    std::vector<PathResult> results;
    std::vector<ResultRow> rows;                // one per step, path and configuration
    std::vector<GenerationStep> row_steps;      // the step of each row
    std::vector<std::string> verify_failures;   // one line per step whose paths disagree
    double worst_verify_error = 0;
    bool interrupted = false;
    std::vector<std::string> unwritable;        // JSON Lines files an append failed on
};

// JSON Lines rows go out as each configuration finishes: appended to their files (one fsynced
// write each) and, with -o - -f jsonl, flushed to stdout (docs/csv.md#jsonl). Other formats
// are written whole at the end.
void stream_rows(const GeneratePlan& plan, GenerationOutcome& outcome, std::size_t first_row,
                 const Environment& env, const OutputStreams& streams) {
    std::vector<ResultRow> rows(outcome.rows.begin() + static_cast<std::ptrdiff_t>(first_row), outcome.rows.end());
    const std::vector<GenerationStep> steps(outcome.row_steps.begin() + static_cast<std::ptrdiff_t>(first_row),
                                            outcome.row_steps.end());
    assign_step_speedups(rows);  // both paths of a configuration finish together
    const std::vector<ExtraColumn> extra = step_columns(steps, plan);
    std::ostringstream lines;
    write_jsonl_with_extra(lines, rows, extra, env);
    for (const OutputTarget& target : plan.out.files()) {
        if (target.format != OutputFormat::jsonl) continue;
        try {
            append_to_file(target.path, lines.str());
        } catch (const std::exception& error) {
            if (std::find(outcome.unwritable.begin(), outcome.unwritable.end(), target.path) != outcome.unwritable.end()) {
                continue;
            }
            outcome.unwritable.push_back(target.path);
            warn(fmt::format("{}; the generation goes on and tries again at the end", error.what()));
        }
    }
    if (plan.out.stdout_is_report() && plan.out.format == OutputFormat::jsonl) {
        streams.report() << lines.str();
        streams.report().flush();
    }
}

// -v: one line per configuration and path, with what the summary table shows.
void print_details(const std::vector<PathResult>& results, std::size_t first, const OutputStreams& streams) {
    for (std::size_t r = first; r < results.size(); ++r) {
        const PathResult& result = results[r];
        std::vector<std::int64_t> decode_ns;
        for (const GenerationStep& step : result.steps) {
            if (step.index > 0) decode_ns.push_back(step.latency_ns);
        }
        streams.detail(fmt::format("kvbench: {} {}: {} steps in {}{}", shape_label(result.point, result.path), path_name(result.path),
                                   result.steps.size(), format_duration_ns(total_ns(result.steps)),
                                   decode_ns.empty() ? std::string()
                                                     : fmt::format(", {} per decode step (median)",
                                                                   format_duration_ns(summarize(decode_ns).median_ns))));
    }
}

GenerationOutcome measure_generations(const std::vector<GridPoint>& points, const GeneratePlan& plan,
                                      const Rooflines& rooflines, const RunEstimate& estimate,
                                      const Environment& env, const OutputStreams& streams) {
    const std::atomic<bool>& stop = install_interrupt_flag();
    std::optional<CacheFlusher> flusher;
    // A generation's buffers change at every step, so its cold cache streams a buffer
    // through the LLCs instead of evicting a list of regions (docs/generate.md).
    if (plan.generation.cold_cache) flusher.emplace(FlushMethod::stream, env.llc_total_bytes);

    Progress progress(streams.quiet() ? ProgressMode::none : ProgressMode::auto_detect, estimate.n_steps,
                      estimate.total_seconds);
    // JSON Lines files start empty, then grow configuration by configuration.
    for (const OutputTarget& target : plan.out.files()) {
        if (target.format == OutputFormat::jsonl) write_file_atomically(target.path, [](std::ostream&) {});
    }
    std::size_t step_counter = 0;
    GenerationOutcome outcome;
    for (std::size_t p = 0; p < points.size() && !outcome.interrupted; ++p) {
        const GridPoint& point = points[p];
        std::size_t local = 0;
        auto observe = [&](DecodePath path, const GenerationStep& step) {
            progress.finish_point(step_counter, shape_label(point), std::nullopt, std::nullopt,
                                  estimate.step_seconds[p][local++]);
            progress.start_point(std::min(step_counter + 1, estimate.n_steps - 1),
                                 fmt::format("{} {} step {}/{} (N={})", shape_label(point), path_name(path),
                                             step.index, plan.generation.n_new, step.seq_len));
            ++step_counter;
        };
        progress.start_point(step_counter, shape_label(point));
        GenerationRun run = run_generation(point, plan.generation, flusher ? &*flusher : nullptr, stop, observe);
        outcome.interrupted = run.interrupted;
        // A reduced cache is held to its type's tolerance (docs/model.md), and reported apart.
        const double tolerance =
            kv_equivalence_tolerance(point.config.kv_dtype, point.config.head_dim());
        for (std::size_t i = 0; i < run.verify_rel_error.size(); ++i) {
            const double error = run.verify_rel_error[i];
            if (point.config.kv_dtype == KvDtype::f32) outcome.worst_verify_error = std::max(outcome.worst_verify_error, error);
            if (!(error < tolerance)) {
                outcome.verify_failures.push_back(fmt::format("{} step {}: relative error {:.3g} (tolerance {:.2g})",
                                                              shape_label(point), i, error, tolerance));
            }
        }
        const std::size_t first_row = outcome.rows.size();
        const std::size_t first_result = outcome.results.size();
        for (auto* steps : {&run.cached, &run.uncached}) {
            if (steps->empty()) continue;
            PathResult result{point, steps == &run.cached ? DecodePath::cached : DecodePath::uncached,
                              std::move(*steps)};
            append_rows(result, plan, run.verify_rel_error, roofline_of(rooflines, point.n_threads), env,
                        outcome.rows, outcome.row_steps);
            outcome.results.push_back(std::move(result));
        }
        stream_rows(plan, outcome, first_row, env, streams);
        if (streams.verbose()) {
            progress.clear();
            print_details(outcome.results, first_result, streams);
        }
    }
    progress.clear();
    assign_step_speedups(outcome.rows);
    return outcome;
}

// Every file is written whole (a failure is said on its own line, and the tables are then
// printed even under -q, so no result is lost); then the rows on stdout when they go there
// (JSON Lines went out configuration by configuration), then the summary and the growth law.
// Returns the files written.
std::vector<std::string> export_generation(const GeneratePlan& plan, const GenerationOutcome& outcome,
                                           const Rooflines& rooflines, const Environment& env,
                                           const OutputStreams& streams, bool& failed) {
    const std::vector<ExtraColumn> extra = step_columns(outcome.row_steps, plan);
    std::vector<std::string> written;
    failed = false;
    for (const OutputTarget& target : plan.out.files()) {
        // A JSON Lines file that holds every row already is left alone, for a reader following it.
        if (target.format == OutputFormat::jsonl &&
            std::find(outcome.unwritable.begin(), outcome.unwritable.end(), target.path) == outcome.unwritable.end()) {
            written.push_back(target.path);
            continue;
        }
        try {
            write_file_atomically(target.path, [&](std::ostream& out) {
                write_steps(out, target.format, outcome.rows, extra, env);
            });
            written.push_back(target.path);
        } catch (const std::exception& error) {
            fmt::print(stderr, "kvbench: error: {}; the summary is in the tables below\n", error.what());
            failed = true;
        }
    }
    if (plan.out.stdout_is_report() && plan.out.format != OutputFormat::jsonl) {
        write_steps(streams.report(), plan.out.format, outcome.rows, extra, env);
    }
    std::ostream& tables = !failed ? streams.tables() : plan.out.stdout_is_report() ? std::cerr : std::cout;
    tables << describe_run(outcome.rows, env) << "\n\n";
    write_text_table(tables, summary_table(outcome.results, plan));
    tables << '\n';
    write_text_table(tables, generation_growth_table(outcome.results, plan, rooflines));
    tables.flush();
    return written;
}

// The closing lines and the exit status: 0, 1 when --verify failed or a file could not be
// written, 130 when interrupted.
int report_generation_outcome(const GeneratePlan& plan, const GenerationOutcome& outcome, std::size_t n_steps,
                              const std::vector<std::string>& written, bool write_failed,
                              const OutputStreams& streams) {
    if (!outcome.verify_failures.empty()) {
        for (const std::string& failure : outcome.verify_failures) {
            fmt::print(stderr, "kvbench: error: --verify failed at {}\n", failure);
        }
    } else if (plan.generation.verify && !outcome.rows.empty()) {
        streams.tables() << fmt::format("verify: cached output == uncached forward at every step; worst relative "
                                        "error {:.2e} (tolerance {:.0e})\n",
                                        outcome.worst_verify_error, verify_tolerance);
        streams.tables().flush();
    }
    if (!written.empty()) {
        streams.message(fmt::format("wrote {} to {}", count_rows(outcome.rows.size()), fmt::join(written, ", ")));
    }
    for (const OutputTarget& target : plan.out.files()) {
        if (target.format != OutputFormat::csv ||
            std::find(written.begin(), written.end(), target.path) == written.end()) {
            continue;
        }
        streams.message(fmt::format("plot it: /usr/bin/python3 {} {} (from the kvbench source tree)", plot_script,
                                    target.path));
        break;
    }
    if (outcome.interrupted) {
        const std::string holder = !written.empty()                  ? fmt::format("{}", fmt::join(written, " and "))
                                   : plan.out.stdout_is_report() ? std::string("the report on standard output")
                                                                 : std::string("the report above");
        fmt::print(stderr, "kvbench: interrupted after {} of {}; {} holds the finished ones\n",
                   outcome.rows.size(), plural(n_steps, "step"), holder);
        return 130;
    }
    return outcome.verify_failures.empty() && !write_failed ? 0 : 1;
}

}  // namespace

int run_generate_command(const GenerateCliOptions& options) {
    const GeneratePlan plan = plan_generation(options);
    const OutputStreams streams(plan.out);
    Environment env = collect_environment();
    env.command_line = command_line();
    warn_about_build(env);
    const Rooflines rooflines = saved_rooflines(plan.grid);
    const std::uint64_t flush_bytes = generation_flush_bytes(plan, env);
    const std::vector<GridPoint> points = points_that_fit(plan, flush_bytes);
    const RunEstimate estimate = estimate_run(points, plan, rooflines, flush_bytes);
    confirm_grid_size(points.size(), estimate.total_seconds, plan.likely_intent, plan.yes, "");
    const GenerationOutcome outcome = measure_generations(points, plan, rooflines, estimate, env, streams);
    bool write_failed = false;
    const std::vector<std::string> written = export_generation(plan, outcome, rooflines, env, streams, write_failed);
    if (const std::optional<std::string> slow = slow_rows_warning(outcome.rows, rooflines)) warn(*slow);
    return report_generation_outcome(plan, outcome, estimate.n_steps, written, write_failed, streams);
}

}  // namespace kvbench
