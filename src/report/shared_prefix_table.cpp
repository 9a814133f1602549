// shared_prefix_pairs and their table: a shared prefix against the same batch sharing nothing.
#include "kvbench/report/shared_prefix_table.hpp"

#include <fmt/format.h>

namespace kvbench {

std::vector<SharedPrefixPair> shared_prefix_pairs(const std::vector<ResultRow>& rows) {
    std::vector<SharedPrefixPair> pairs;
    for (const ResultRow& row : rows) {
        if (row.path != DecodePath::cached || !row.config.has_shared_prefix() || !(row.stats.median_ns > 0)) continue;
        ModelConfig unshared = row.config;
        unshared.shared_prefix = 0;
        if (const ResultRow* other = cached_row_like(rows, unshared, row)) pairs.push_back({&row, other});
    }
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
    for (const std::string& name : {std::string("KV read\nMB"), std::string("P=0 read\nMB"), "step\n" + unit.name,
                                    "P=0 step\n" + unit.name, std::string("speedup")}) {
        table.text.header.push_back(name);
        table.text.align.push_back(Align::right);
    }
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
