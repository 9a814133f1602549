// shared_prefix_pairs and their table: a shared prefix against the same batch sharing nothing.
#include "kvbench/report/shared_prefix_table.hpp"

#include <fmt/format.h>

namespace kvbench {

std::vector<SharedPrefixPair> shared_prefix_pairs(const std::vector<ResultRow>& rows) {
    std::vector<SharedPrefixPair> pairs;
    const auto reference_of = [](ModelConfig config) -> std::optional<ModelConfig> {
        if (!config.has_shared_prefix()) return std::nullopt;
        config.shared_prefix = 0;
        return config;
    };
    for (const RowBeside& pair : rows_beside_references(rows, reference_of)) pairs.push_back({pair.row, pair.reference});
    return pairs;
}

std::optional<SummaryTable> shared_prefix_table(const std::vector<ResultRow>& rows, const TableOptions& options) {
    const std::vector<SharedPrefixPair> pairs = shared_prefix_pairs(rows);
    if (pairs.empty()) return std::nullopt;
    std::vector<ResultRow> shown;
    std::vector<double> medians;
    for (const SharedPrefixPair& pair : pairs) {
        shown.push_back(*pair.shared);
        medians.insert(medians.end(), {pair.shared->stats.median_ns, pair.unshared->stats.median_ns});
    }
    const LineKeys keys(shown, true);
    SummaryTable table = keys.table("Shared prefix");
    const ColumnUnit unit = duration_unit(medians, options.time_unit);
    add_figures(table, {"KV read\nMB", "P=0 read\nMB", "step\n" + unit.name,
                        "P=0 step\n" + unit.name, "speedup"});
    for (std::size_t i = 0; i < pairs.size(); ++i) {
        const SharedPrefixPair& pair = pairs[i];
        std::vector<std::string> line = keys.cells(shown[i]);
        line.push_back(fmt::format("{:.1f}", static_cast<double>(pair.shared->cost.kv_bytes) / 1e6));
        line.push_back(fmt::format("{:.1f}", static_cast<double>(pair.unshared->cost.kv_bytes) / 1e6));
        line.push_back(format_in(pair.shared->stats.median_ns, unit));
        line.push_back(format_in(pair.unshared->stats.median_ns, unit));
        line.push_back(format_ratio(pair.unshared->stats.median_ns / pair.shared->stats.median_ns));
        table.text.lines.push_back(std::move(line));
    }
    table.text.footnote =
        "KV read: the cache's bytes one cached step reads, the shared prefix once for all B sequences; P=0: the same "
        "batch sharing nothing, which reads the prefix B times; speedup: the P=0 median over the shared one "
        "(docs/model.md#shared-prefixes)";
    return table;
}

}  // namespace kvbench
