// The tables of a generation: the summary per configuration and path, the growth law, and -v's lines.
#include "cli/generation_tables.hpp"

#include "kvbench/engine/cost_model.hpp"
#include "kvbench/measure/growth_fit.hpp"
#include "kvbench/measure/roofline.hpp"
#include "kvbench/measure/stats.hpp"
#include "kvbench/report/report.hpp"
#include "kvbench/report/units.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <numeric>
#include <optional>

namespace kvbench {

std::string shape_label(const GridPoint& point, DecodePath path) {
    ModelConfig c = point.config;
    if (path == DecodePath::uncached) c.set_kv_dtypes(KvDtype::f32, KvDtype::f32);
    const std::string head_dim = c.explicit_head_dim == 0 ? "" : fmt::format(" dh={}", c.explicit_head_dim);
    // What tells apart the points of one generate grid: its axes (weight and KV types, blocks, prefixes).
    std::string parts;
    if (c.is_ragged()) parts += " ragged";
    if (c.has_shared_prefix()) parts += fmt::format(" P={}", c.shared_prefix);
    if (c.weight_dtype != WeightDtype::f32) parts += fmt::format(" w={}", weight_dtype_info(c.weight_dtype).name);
    if (c.has_reduced_cache()) parts += fmt::format(" kv={}", kv_dtype_name(c.key_dtype(), c.value_dtype()));
    if (c.is_paged() && path == DecodePath::cached) parts += fmt::format(" kv-block={}", c.kv_block);
    return fmt::format("B={} D={} H={}{} G={} L={} T={}{}", c.n_batch, c.model_dim, c.n_heads, head_dim, c.n_kv_heads,
                       c.n_layers, point.n_threads, parts);
}

namespace {

double total_ns(const std::vector<GenerationStep>& steps) {
    return std::accumulate(steps.begin(), steps.end(), 0.0,
                           [](double sum, const GenerationStep& s) { return sum + static_cast<double>(s.latency_ns); });
}

// The decode steps' latencies (step 0, the prefill, is a different operation) against N.
std::optional<GrowthFit> measured_growth(const GenerationPath& result, double from_n) {
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
std::optional<GrowthFit> model_growth(const GenerationPath& result, const GeneratePlan& plan, const Roofline& machine,
                                      double from_n) {
    std::vector<double> n, t;
    for (const GenerationStep& step : result.steps) {
        if (result.path == DecodePath::cached && step.index == 0) continue;
        const StepCost cost =
            generation_step_cost(result.point.config, plan.generation, result.path, step.index, step.experts_read);
        n.push_back(static_cast<double>(step.seq_len));
        t.push_back(roofline_time_s(cost.flops, cost.bytes, machine));
    }
    return fit_growth(n, t, from_n);
}

// N* of the step generated: "never" when every layer's window caps the cache below the weights.
std::string crossover_cell(const ModelConfig& config) {
    const std::optional<std::uint64_t> n_star = kv_weight_crossover(config);
    return n_star ? fmt::format("{}", *n_star) : "never";
}

// The decode steps' median roofline %, each step counted as its CSV row counts it (the uncached
// path on the forward's f32, contiguous config); none without a roofline or a decode step.
std::optional<double> decode_roofline_pct(const GenerationPath& result, const GeneratePlan& plan,
                                          const Roofline* roofline) {
    if (roofline == nullptr) return std::nullopt;
    const ModelConfig counted = result.path == DecodePath::uncached ? uncached_counting_config(result.point.config)
                                                                    : result.point.config;
    std::vector<double> pcts;
    for (const GenerationStep& step : result.steps) {
        if (step.index == 0 || step.latency_ns <= 0) continue;
        const StepCost cost = generation_step_cost(counted, plan.generation, result.path, step.index, step.experts_read);
        pcts.push_back(roofline_pct(roofline_time_s(cost.flops, cost.bytes, *roofline),
                                    static_cast<double>(step.latency_ns) * 1e-9));
    }
    if (pcts.empty()) return std::nullopt;
    return median(std::move(pcts));
}

// One row per configuration and path, as the sweep's tables key theirs: what names generate's
// lines is what names a sweep's (LineKeys), the axes that vary as columns, the rest in the caption.
std::vector<ResultRow> line_rows(const std::vector<GenerationPath>& results, const GeneratePlan& plan) {
    std::vector<ResultRow> rows;
    for (const GenerationPath& result : results) {
        ResultRow& row = rows.emplace_back();
        row.path = result.path;
        row.config = result.path == DecodePath::uncached ? uncached_row_config(result.point.config) : result.point.config;
        row.kv_dtype = kv_dtype_name(row.config.key_dtype(), row.config.value_dtype());
        row.n_threads = result.point.n_threads;
        row.cache_state = plan.generation.cold_cache ? "cold" : "warm";
    }
    return rows;
}

// The keys' table with `figures` after them.
SummaryTable keyed_table(const LineKeys& keys, std::string title, const std::vector<std::string>& figures,
                         std::string footnote) {
    SummaryTable table = keys.table(std::move(title));
    for (const std::string& figure : figures) {
        table.text.header.push_back(figure);
        table.text.align.push_back(Align::right);
    }
    table.text.footnote = std::move(footnote);
    return table;
}

}  // namespace

SummaryTable generation_summary_table(const std::vector<GenerationPath>& results, const GeneratePlan& plan,
                                      const Rooflines& rooflines) {
    // The times first, so that each column gets one unit chosen from all its values.
    struct Times {
        std::optional<double> first_ns, per_token_ns, p90_ns;
        double total_ns = 0;
        std::string rate = "-";
        std::optional<double> roofline_pct;
        std::uint64_t flops = 0;
    };
    bool any_roofline = false;
    std::vector<Times> times;
    std::vector<double> first_column, per_token_column, p90_column, total_column;
    for (const GenerationPath& result : results) {
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
        t.roofline_pct = decode_roofline_pct(result, plan, roofline_of(rooflines, result.point.n_threads));
        any_roofline = any_roofline || t.roofline_pct.has_value();
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

    const std::string prompts = plan.prompt_lens.empty()
                                    ? fmt::format("prompt P={}", plan.generation.prompt_len)
                                    : fmt::format("prompts {} over the batch", fmt::join(plan.prompt_lens, ","));
    const std::vector<ResultRow> rows = line_rows(results, plan);
    const LineKeys keys(rows, true, false);
    std::vector<std::string> figures{"first token\n" + first_unit.name, "per token\n" + decode_unit.name,
                                     "p90\n" + decode_unit.name, "total\n" + total_unit.name, "tokens/s"};
    if (any_roofline) figures.emplace_back("roofline\n%");
    figures.insert(figures.end(), {"FLOPs", "KV at end", "N*", "uncached/\ncached"});
    SummaryTable table = keyed_table(
        keys, fmt::format("Generation: {}, {} new tokens", prompts, plan.generation.n_new), figures,
        fmt::format("first token: the prefill (step 0); per token and p90: the decode steps' median and 90th "
                    "percentile; tokens/s: B·T over the decode steps' time; {}N*: the context at which a cached "
                    "step reads as many KV-cache bytes as weight bytes (docs/counting.md), past which the "
                    "cache dominates the step; uncached/cached: total times.",
                    any_roofline ? "roofline %: the decode steps' median of the least time this machine's "
                                   "roofline allows for a step's FLOPs and bytes, over the step's time; "
                                 : ""));
    for (std::size_t r = 0; r < results.size(); ++r) {
        const GenerationPath& result = results[r];
        const Times& t = times[r];
        const ModelConfig& c = result.point.config;
        std::string ratio = "-";
        if (result.path == DecodePath::cached) {
            for (const GenerationPath& other : results) {
                if (other.path == DecodePath::uncached && other.point.config == c &&
                    other.point.n_threads == result.point.n_threads && other.steps.size() == result.steps.size()) {
                    ratio = format_ratio(total_ns(other.steps) / total_ns(result.steps));
                }
            }
        }
        ModelConfig last = c;
        last.seq_len = plan.generation.context_of(result.steps.empty() ? 0 : result.steps.back().index);
        std::vector<std::string> line = keys.cells(rows[r]);
        std::vector<std::string> cells{time_cell(t.first_ns, first_unit), time_cell(t.per_token_ns, decode_unit),
                                       time_cell(t.p90_ns, decode_unit), format_in(t.total_ns, total_unit), t.rate};
        if (any_roofline) cells.push_back(t.roofline_pct ? fmt::format("{:.1f}", *t.roofline_pct) : std::string("-"));
        cells.insert(cells.end(),
                     {format_flops(static_cast<double>(t.flops)),
                      result.path == DecodePath::cached ? format_bytes(kv_cache_bytes(last)) : std::string("none"),
                      crossover_cell(c), ratio});
        line.insert(line.end(), cells.begin(), cells.end());
        table.text.lines.push_back(std::move(line));
    }
    return table;
}

SummaryTable generation_growth_table(const std::vector<GenerationPath>& results, const GeneratePlan& plan,
                                    const Rooflines& rooflines) {
    const std::vector<ResultRow> rows = line_rows(results, plan);
    const LineKeys keys(rows, true, false);
    SummaryTable table = keyed_table(
        keys, "Growth law: per-step latency = a·N^k, least squares in log-log",
        {"N range", "steps", "k measured", "RMS log resid.", "k of the model"},
        "The model predicts k <= 1 cached (O(D²) constant + O(N·D) linear) and k rising toward 2 "
        "uncached once N outgrows D (O(N·D²) + O(N²·D)); 'k of the model' fits the cost model's "
        "roofline time over the same N. Use --fit-from N to fit where the asymptotic term dominates.");
    const double from_n = static_cast<double>(plan.fit_from);
    for (std::size_t r = 0; r < results.size(); ++r) {
        const GenerationPath& result = results[r];
        const std::optional<GrowthFit> fit = measured_growth(result, from_n);
        const Roofline* roofline = roofline_of(rooflines, result.point.n_threads);
        const std::optional<GrowthFit> model = model_growth(result, plan, roofline_or_assumed(roofline), from_n);
        std::vector<std::string> line = keys.cells(rows[r]);
        if (!fit) {
            for (const char* cell : {"-", "-", "fewer than 3 steps", "-", "-"}) line.emplace_back(cell);
        } else {
            line.push_back(fmt::format("{}..{}", fit->min_n, fit->max_n));
            line.push_back(fmt::format("{}", fit->n_points));
            line.push_back(fmt::format("{:.2f} ± {:.2f}", fit->exponent, fit->exponent_stderr));
            line.push_back(fmt::format("{:.3f}", fit->rms_log_residual));
            line.push_back(model ? fmt::format("{:.2f}", model->exponent) : std::string("-"));
        }
        table.text.lines.push_back(std::move(line));
    }
    return table;
}

void print_generation_details(const std::vector<GenerationPath>& results, std::size_t first,
                              const OutputStreams& streams) {
    for (std::size_t r = first; r < results.size(); ++r) {
        const GenerationPath& result = results[r];
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

}  // namespace kvbench
