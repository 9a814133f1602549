// kv_format_groups and their table: the Pareto frontier of a point's KV formats.
#include "kvbench/engine/cost_model.hpp"
#include "kvbench/report/kv_format_table.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace kvbench {

namespace {

bool same_point(const ResultRow& a, const ResultRow& b) {
    ModelConfig config = a.config;
    config.set_kv_dtypes(b.config.key_dtype(), b.config.value_dtype());
    return config == b.config && a.n_threads == b.n_threads && a.cache_state == b.cache_state;
}

// a beats b: no worse on bytes, time and error, and better on one of them.
bool dominates(const KvFormatEntry& a, const KvFormatEntry& b) {
    const bool no_worse = a.bytes_per_token <= b.bytes_per_token && a.median_ns <= b.median_ns && a.rel_error <= b.rel_error;
    const bool better = a.bytes_per_token < b.bytes_per_token || a.median_ns < b.median_ns || a.rel_error < b.rel_error;
    return no_worse && better;
}

}  // namespace

std::vector<std::vector<KvFormatEntry>> kv_format_groups(const std::vector<ResultRow>& rows) {
    std::vector<std::vector<KvFormatEntry>> groups;
    for (const ResultRow& row : rows) {
        if (row.path != DecodePath::cached || !(row.stats.median_ns > 0)) continue;
        if (row.config.has_reduced_cache() && !row.kv_rel_error) continue;
        KvFormatEntry entry;
        entry.row = &row;
        // One token's K and V over every layer, whatever the batch's contexts or windows.
        entry.bytes_per_token = static_cast<double>(kv_bytes_per_position(row.config));
        entry.median_ns = row.stats.median_ns;
        entry.rel_error = row.kv_rel_error.value_or(0.0);
        const auto group = std::find_if(groups.begin(), groups.end(), [&](const std::vector<KvFormatEntry>& g) {
            return same_point(*g.front().row, row);
        });
        if (group == groups.end()) {
            groups.push_back({entry});
        } else {
            group->push_back(entry);
        }
    }
    std::erase_if(groups, [](const std::vector<KvFormatEntry>& g) { return g.size() < 2; });
    for (std::vector<KvFormatEntry>& group : groups) {
        for (KvFormatEntry& entry : group) {
            for (const KvFormatEntry& other : group) {
                if (dominates(other, entry)) {
                    entry.dominated_by = other.row;
                    break;
                }
            }
        }
    }
    return groups;
}

std::optional<SummaryTable> kv_format_table(const std::vector<ResultRow>& rows, const TableOptions& options) {
    const std::vector<std::vector<KvFormatEntry>> groups = kv_format_groups(rows);
    if (groups.empty()) return std::nullopt;
    std::vector<ResultRow> shown;
    for (const std::vector<KvFormatEntry>& group : groups) {
        for (const KvFormatEntry& entry : group) shown.push_back(*entry.row);
    }
    const LineKeys keys(shown, true);
    SummaryTable table = keys.table("KV formats");
    std::vector<double> medians;
    for (const ResultRow& row : shown) medians.push_back(row.stats.median_ns);
    const ColumnUnit unit = duration_unit(medians, options.time_unit);
    for (const std::string& name : {std::string("bytes/\ntoken"), "step\n" + unit.name,
                                    std::string("error vs\nf32 cache"), std::string("Pareto")}) {
        table.text.header.push_back(name);
        table.text.align.push_back(name == "Pareto" ? Align::left : Align::right);
    }
    std::size_t i = 0;
    for (const std::vector<KvFormatEntry>& group : groups) {
        for (const KvFormatEntry& entry : group) {
            std::vector<std::string> line = keys.cells(shown[i++]);
            line.push_back(fmt::format("{:.0f}", entry.bytes_per_token));
            line.push_back(format_in(entry.median_ns, unit));
            line.push_back(entry.rel_error > 0 ? fmt::format("{:.1e}", entry.rel_error) : std::string("0"));
            line.push_back(entry.dominated_by == nullptr ? std::string("frontier")
                                                         : "dominated by " + entry.dominated_by->kv_dtype);
            table.text.lines.push_back(std::move(line));
        }
    }
    table.text.footnote =
        "bytes/token: the cache's K and V of one token over all layers, scales included; error: "
        "kv_rel_error, the step's and each layer's attention output's against an f32 cache of the same values; "
        "dominated: another format of the point is no worse on all three and better on one "
        "(docs/model.md#kv-cache-element-types)";
    return table;
}

}  // namespace kvbench
