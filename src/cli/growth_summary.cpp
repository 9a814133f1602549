// Rows -> groups along N -> fit_growth -> a table of k per configuration and path.
#include "cli/growth_summary.hpp"

#include "kvbench/measure/growth_fit.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace kvbench {

namespace {

bool same_but_n(const ResultRow& a, const ResultRow& b) {
    ModelConfig ca = a.config, cb = b.config;
    ca.seq_len = cb.seq_len = 0;
    return a.path == b.path && ca == cb && a.n_threads == b.n_threads && a.cache_state == b.cache_state &&
           a.kv_dtype == b.kv_dtype;
}

}  // namespace

std::optional<TextTable> growth_table(const std::vector<ResultRow>& rows) {
    TextTable table{"Growth law: median latency = a·N^k, least squares in log-log",
                    {"B", "D", "H", "G", "L", "T", "grouping", "path", "N range", "points", "k", "RMS log resid."},
                    {Align::right, Align::right, Align::right, Align::right, Align::right, Align::right, Align::left,
                     Align::left, Align::right, Align::right, Align::right, Align::right},
                    {},
                    "The model predicts k <= 1 cached (O(D²) + O(N·D)) and k rising toward 2 uncached once N "
                    "outgrows D (O(N·D²) + O(N²·D)); docs/generate.md#the-growth-law."};
    std::vector<const ResultRow*> leaders;
    for (const ResultRow& row : rows) {
        if (std::none_of(leaders.begin(), leaders.end(), [&](const ResultRow* l) { return same_but_n(*l, row); })) {
            leaders.push_back(&row);
        }
    }
    for (const ResultRow* leader : leaders) {
        std::vector<double> n, t;
        for (const ResultRow& row : rows) {
            if (!same_but_n(*leader, row)) continue;
            n.push_back(static_cast<double>(row.config.seq_len));
            t.push_back(row.stats.median_ns);
        }
        const std::optional<GrowthFit> fit = fit_growth(n, t);
        if (!fit) continue;
        const ModelConfig& c = leader->config;
        table.lines.push_back({fmt::format("{}", c.n_batch), fmt::format("{}", c.model_dim),
                               fmt::format("{}", c.n_heads), fmt::format("{}", c.n_kv_heads),
                               fmt::format("{}", c.n_layers), fmt::format("{}", leader->n_threads),
                               grouping_label(c.n_heads, c.n_kv_heads), path_name(leader->path),
                               fmt::format("{}..{}", fit->min_n, fit->max_n), fmt::format("{}", fit->n_points),
                               fmt::format("{:.2f} ± {:.2f}", fit->exponent, fit->exponent_stderr),
                               fmt::format("{:.3f}", fit->rms_log_residual)});
    }
    if (table.lines.empty()) return std::nullopt;
    return table;
}

}  // namespace kvbench
