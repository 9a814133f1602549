// paged_pairs and their table: a paged cache against the contiguous cache at the same point.
#include "kvbench/report/paged_table.hpp"

#include "kvbench/engine/cost_model.hpp"
#include "kvbench/report/units.hpp"

#include <fmt/format.h>

namespace kvbench {

std::vector<PagedPair> paged_pairs(const std::vector<ResultRow>& rows) {
    std::vector<PagedPair> pairs;
    const auto reference_of = [](ModelConfig config) -> std::optional<ModelConfig> {
        if (!config.is_paged()) return std::nullopt;
        config.kv_block = 0;
        return config;
    };
    for (const RowBeside& pair : rows_beside_references(rows, reference_of)) pairs.push_back({pair.row, pair.reference});
    return pairs;
}

std::optional<SummaryTable> paged_table(const std::vector<ResultRow>& rows, const TableOptions& options) {
    const std::vector<PagedPair> pairs = paged_pairs(rows);
    if (pairs.empty()) return std::nullopt;
    std::vector<ResultRow> shown;
    std::vector<double> medians;
    for (const PagedPair& pair : pairs) {
        shown.push_back(*pair.paged);
        medians.insert(medians.end(), {pair.paged->stats.median_ns, pair.contiguous->stats.median_ns});
    }
    const LineKeys keys(shown, true);
    SummaryTable table = keys.table("Paged cache");
    const ColumnUnit unit = duration_unit(medians, options.time_unit);
    add_figures(table, {"tables read\nKB", "step\n" + unit.name, "contiguous\n" + unit.name,
                        "vs\ncontiguous"});
    for (std::size_t i = 0; i < pairs.size(); ++i) {
        const PagedPair& pair = pairs[i];
        std::vector<std::string> line = keys.cells(shown[i]);
        line.push_back(fmt::format("{:.1f}", static_cast<double>(kv_block_table_bytes(pair.paged->config)) / 1e3));
        line.push_back(format_in(pair.paged->stats.median_ns, unit));
        line.push_back(format_in(pair.contiguous->stats.median_ns, unit));
        line.push_back(format_ratio(pair.paged->stats.median_ns / pair.contiguous->stats.median_ns));
        table.text.lines.push_back(std::move(line));
    }
    table.text.footnote =
        "tables read: the block tables' entries one step reads, which the contiguous step does not; vs contiguous: the "
        "paged median over the contiguous one at the same point, 1.00x when the tables and the blocks' places cost "
        "nothing (docs/model.md#paged-caches)";
    return table;
}

}  // namespace kvbench
