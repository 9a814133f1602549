// Rows -> groups along N -> fit_growth -> a table of k per configuration and path.
#include "kvbench/report/growth_table.hpp"

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

std::optional<SummaryTable> growth_table(const std::vector<ResultRow>& rows) {
    std::vector<const ResultRow*> leaders;
    for (const ResultRow& row : rows) {
        if (std::none_of(leaders.begin(), leaders.end(), [&](const ResultRow* l) { return same_but_n(*l, row); })) {
            leaders.push_back(&row);
        }
    }
    struct Series {
        const ResultRow* leader;
        GrowthFit fit;
    };
    std::vector<Series> fitted;
    for (const ResultRow* leader : leaders) {
        std::vector<double> n, t;
        for (const ResultRow& row : rows) {
            if (!same_but_n(*leader, row)) continue;
            n.push_back(static_cast<double>(row.config.seq_len));
            t.push_back(row.stats.median_ns);
        }
        if (const std::optional<GrowthFit> fit = fit_growth(n, t)) fitted.push_back({leader, *fit});
    }
    if (fitted.empty()) return std::nullopt;

    // Each line spans the N axis: N is neither a key nor in the caption.
    std::vector<ResultRow> series_rows;
    for (const Series& series : fitted) series_rows.push_back(*series.leader);
    const LineKeys keys(series_rows, true, false);
    SummaryTable table = keys.table("Growth law: median latency = a·N^k, least squares in log-log");
    for (const char* name : {"N range", "points", "k", "RMS log\nresid."}) {
        table.text.header.emplace_back(name);
        table.text.align.push_back(Align::right);
    }
    for (const Series& series : fitted) {
        std::vector<std::string> line = keys.cells(*series.leader);
        line.push_back(fmt::format("{}..{}", series.fit.min_n, series.fit.max_n));
        line.push_back(fmt::format("{}", series.fit.n_points));
        line.push_back(fmt::format("{:.2f} ± {:.2f}", series.fit.exponent, series.fit.exponent_stderr));
        line.push_back(fmt::format("{:.3f}", series.fit.rms_log_residual));
        table.text.lines.push_back(std::move(line));
    }
    table.text.footnote = "The model predicts k <= 1 cached (O(D²) + O(N·D)) and k rising toward 2 uncached once N "
                          "outgrows D (O(N·D²) + O(N²·D)); docs/generate.md#the-growth-law.";
    return table;
}

}  // namespace kvbench
