// query_tokens_pairs and their table: a step of Q tokens against the same point at Q = 1.
#include "kvbench/report/query_tokens_table.hpp"

#include <fmt/format.h>

namespace kvbench {

std::vector<QueryTokensPair> query_tokens_pairs(const std::vector<ResultRow>& rows) {
    std::vector<QueryTokensPair> pairs;
    const auto reference_of = [](ModelConfig config) -> std::optional<ModelConfig> {
        if (config.n_query_tokens == 1) return std::nullopt;
        config.n_query_tokens = 1;
        return config;
    };
    for (const RowBeside& pair : rows_beside_references(rows, reference_of)) pairs.push_back({pair.row, pair.reference});
    return pairs;
}

std::optional<SummaryTable> query_tokens_table(const std::vector<ResultRow>& rows, const TableOptions& options) {
    const std::vector<QueryTokensPair> pairs = query_tokens_pairs(rows);
    if (pairs.empty()) return std::nullopt;
    std::vector<ResultRow> shown;
    std::vector<double> medians;
    for (const QueryTokensPair& pair : pairs) {
        shown.push_back(*pair.tokens);
        const double per_token_ns = pair.tokens->stats.median_ns / static_cast<double>(pair.tokens->config.n_query_tokens);
        medians.insert(medians.end(), {pair.tokens->stats.median_ns, per_token_ns, pair.single->stats.median_ns});
    }
    const LineKeys keys(shown, true);
    SummaryTable table = keys.table("Query tokens");
    const ColumnUnit unit = duration_unit(medians, options.time_unit);
    add_figures(table, {"step\n" + unit.name, "per token\n" + unit.name, "Q=1 step\n" + unit.name,
                        "per token\nvs Q=1"});
    for (std::size_t i = 0; i < pairs.size(); ++i) {
        const QueryTokensPair& pair = pairs[i];
        const double per_token_ns = pair.tokens->stats.median_ns / static_cast<double>(pair.tokens->config.n_query_tokens);
        std::vector<std::string> line = keys.cells(shown[i]);
        line.push_back(format_in(pair.tokens->stats.median_ns, unit));
        line.push_back(format_in(per_token_ns, unit));
        line.push_back(format_in(pair.single->stats.median_ns, unit));
        line.push_back(format_ratio(pair.single->stats.median_ns / per_token_ns));
        table.text.lines.push_back(std::move(line));
    }
    table.text.footnote =
        "per token: the step's median over its Q tokens, what each token of a verified draft costs; vs Q=1: the Q=1 "
        "step over it, how many times cheaper a token is than decoded alone (docs/model.md#multi-token-queries)";
    return table;
}

}  // namespace kvbench
