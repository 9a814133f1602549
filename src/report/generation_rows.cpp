// The per-step rows of a generation and their step columns.
#include "kvbench/report/generation_rows.hpp"

#include <algorithm>
#include <stdexcept>

namespace kvbench {

namespace {

// Each row's speedup: the uncached latency of the same configuration and step over its own,
// whatever the row's cache type (the forward of every type is the one f32 forward, timed with
// the first type's configuration: an earlier configuration's rows for the others). Rows that
// have theirs keep it.
void assign_step_speedups(std::vector<ResultRow>& rows) {
    std::vector<const ResultRow*> uncached_rows;
    for (const ResultRow& row : rows) {
        if (row.path == DecodePath::uncached) uncached_rows.push_back(&row);
    }
    for (ResultRow& row : rows) {
        if (row.speedup || row.stats.median_ns <= 0) continue;
        const ModelConfig forward = uncached_row_config(row.config);
        const auto uncached = std::find_if(uncached_rows.begin(), uncached_rows.end(), [&](const ResultRow* other) {
            return other->config == forward && other->n_threads == row.n_threads && other->cache_state == row.cache_state;
        });
        if (uncached != uncached_rows.end()) row.speedup = (*uncached)->stats.median_ns / row.stats.median_ns;
    }
}

}  // namespace

ReportRows generation_rows(const std::vector<GenerationPath>& paths, const GenerationOptions& options,
                           const std::vector<double>& verify_errors, const Roofline* roofline, const Environment& env) {
    RunOptions run;
    run.cold_cache = options.cold_cache;
    run.seed = options.seed;
    run.n_warmup = 0;  // a generation times every step once, none untimed
    ReportRows rows;
    ExtraColumn step{"step", {}}, phase{"phase", {}}, prompt{"prompt", {}}, n_new{"new_tokens", {}};
    for (const GenerationPath& generation : paths) {
        for (const GenerationStep& s : generation.steps) {
            GridPoint point = generation.point;
            point.config = with_longest_context(generation.point.config, s.seq_len);
            const PathMeasurement measured{{s.latency_ns}, s.flops, s.experts_read};
            // The uncached path keeps no cache: its steps are counted on the forward's config
            // (f32, contiguous, unshared), whatever --kv-dtype the generation also ran.
            const ModelConfig counted = generation.path == DecodePath::uncached
                                            ? uncached_counting_config(generation.point.config)
                                            : generation.point.config;
            const StepCost cost = generation_step_cost(counted, options, generation.path, s.index, s.experts_read);
            const std::optional<double> verify =
                s.index < verify_errors.size() ? std::optional<double>(verify_errors[s.index]) : std::nullopt;
            ResultRow row = make_result_row(generation.path, point, measured, cost, run, roofline, env, verify);
            row.reps_policy = "one generation step";
            rows.rows.push_back(std::move(row));
            step.values.emplace_back(std::uint64_t{s.index});
            phase.values.emplace_back(std::string(s.index == 0 ? "prefill" : "decode"));
            prompt.values.emplace_back(std::uint64_t{options.prompt_len});
            n_new.values.emplace_back(std::uint64_t{options.n_new});
        }
    }
    assign_step_speedups(rows.rows);
    rows.extra = {step, phase, prompt, n_new};
    return rows;
}

void append_rows(ReportRows& rows, const ReportRows& more) {
    if (rows.extra.empty() && rows.rows.empty()) {
        for (const ExtraColumn& column : more.extra) rows.extra.push_back({column.name, {}});
    }
    if (rows.extra.size() != more.extra.size()) throw std::invalid_argument("append_rows: the extra columns differ");
    rows.rows.insert(rows.rows.end(), more.rows.begin(), more.rows.end());
    for (std::size_t c = 0; c < rows.extra.size(); ++c) {
        if (rows.extra[c].name != more.extra[c].name) throw std::invalid_argument("append_rows: the extra columns differ");
        rows.extra[c].values.insert(rows.extra[c].values.end(), more.extra[c].values.begin(), more.extra[c].values.end());
    }
    assign_step_speedups(rows.rows);
}

}  // namespace kvbench
