// Turns Rows into the summary tables' text cells, one unit per column; no layout here.
#include "kvbench/report/summary_tables.hpp"

#include "kvbench/report/kv_format_table.hpp"
#include "kvbench/report/paged_table.hpp"
#include "kvbench/report/query_tokens_table.hpp"
#include "kvbench/report/shared_prefix_table.hpp"

#include "kvbench/engine/cost_model.hpp"
#include "kvbench/report/units.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

namespace kvbench {

const ResultRow* cached_row_like(const std::vector<ResultRow>& rows, const ModelConfig& config, const ResultRow& like) {
    for (const ResultRow& row : rows) {
        if (row.path == DecodePath::cached && row.config == config && row.n_threads == like.n_threads &&
            row.cache_state == like.cache_state && row.stats.median_ns > 0) {
            return &row;
        }
    }
    return nullptr;
}

std::vector<RowBeside> rows_beside_references(const std::vector<ResultRow>& rows,
                                              const std::function<std::optional<ModelConfig>(ModelConfig)>& reference_of) {
    std::vector<RowBeside> pairs;
    for (const ResultRow& row : rows) {
        if (row.path != DecodePath::cached || !(row.stats.median_ns > 0)) continue;
        const std::optional<ModelConfig> reference = reference_of(row.config);
        if (!reference) continue;
        if (const ResultRow* other = cached_row_like(rows, *reference, row)) pairs.push_back({&row, other});
    }
    return pairs;
}

namespace {

constexpr const char* missing = "-";

// The cached and uncached rows of one ModelConfig; either may be absent.
struct ConfigPair {
    ModelConfig config;
    const ResultRow* cached = nullptr;
    const ResultRow* uncached = nullptr;
};

bool same_but_kv_dtype(ModelConfig a, const ModelConfig& b) {
    a.kv_dtype = b.kv_dtype;
    return a == b;
}

// Lines of the per-configuration tables, in the order configurations first appear. An uncached
// row keeps no cache (its kv_dtype reads f32): it joins every cached configuration that
// differs from it in kv_dtype alone, and has a line of its own only when none does.
std::vector<ConfigPair> pair_by_config(const std::vector<ResultRow>& rows) {
    std::vector<ConfigPair> pairs;
    for (const ResultRow& row : rows) {
        if (row.path != DecodePath::cached) continue;
        auto pair = std::find_if(pairs.begin(), pairs.end(), [&](const ConfigPair& p) { return p.config == row.config; });
        if (pair == pairs.end()) pairs.push_back(ConfigPair{row.config, &row, nullptr});
        // else the first one wins: FLOPs and bytes do not depend on threads
    }
    for (const ResultRow& row : rows) {
        if (row.path != DecodePath::uncached) continue;
        bool joined = false;
        for (ConfigPair& pair : pairs) {
            if (!same_but_kv_dtype(pair.config, row.config)) continue;
            joined = true;
            if (pair.uncached == nullptr) pair.uncached = &row;
        }
        if (!joined) pairs.push_back(ConfigPair{row.config, nullptr, &row});
    }
    return pairs;
}

// One axis of the grid as the tables show it: a column when it varies within the run, else
// "name=value" in the caption (a run's constants would otherwise fill every line).
struct Axis {
    const char* name;  // column header and caption name
    Align align;
    std::function<std::string(const ResultRow&)> cell;
    std::function<std::string(const ResultRow&)> caption;  // empty: "name=cell"
};

std::string number(std::size_t n) { return fmt::format("{}", n); }

std::string grouping_of(const ModelConfig& c) { return grouping_name(c); }

// "attn", or the full layer and its MLP: "full F=8192", "full E=128/8" (experts, active).
std::string layer_of(const ModelConfig& config) {
    if (config.block != BlockKind::full) return "attn";
    if (config.has_experts()) return fmt::format("full E={}/{}", config.moe.n_experts, config.moe.n_active);
    return fmt::format("full F={}", config.ffn_dim);
}

// The model's axes, in the order of --batch, --seq, --dim, --heads, --layers. G shows as the
// grouping label, which names it (GQA-4: G=4; MHA: G=H; MQA: G=1).
const std::vector<Axis>& model_axes() {
    static const std::vector<Axis> axes{
        {"B", Align::right, [](const ResultRow& r) { return number(r.config.n_batch); }, {}},
        {"N", Align::right, [](const ResultRow& r) { return number(r.config.seq_len); }, {}},
        {"D", Align::right, [](const ResultRow& r) { return number(r.config.model_dim); }, {}},
        {"H", Align::right, [](const ResultRow& r) { return number(r.config.n_heads); }, {}},
        {"dh", Align::right, [](const ResultRow& r) { return number(r.config.head_dim()); }, {}},
        {"L", Align::right, [](const ResultRow& r) { return number(r.config.n_layers); }, {}},
        {"grouping", Align::left,
         [](const ResultRow& r) { return grouping_of(r.config); },
         [](const ResultRow& r) { return fmt::format("G={} ({})", r.config.n_kv_heads, grouping_of(r.config)); }},
        // The uncached forward keeps no cache, whatever --kv-dtype says.
        {"kv", Align::left, [](const ResultRow& r) { return r.path == DecodePath::uncached ? "none" : r.kv_dtype; }, {}},
        {"layer", Align::left, [](const ResultRow& r) { return layer_of(r.config); }, {}},
        {"w", Align::left, [](const ResultRow& r) { return std::string(weight_dtype_info(r.config.weight_dtype).name); },
         {}},
        {"N_b", Align::left, [](const ResultRow& r) { return contexts_of(r.config); }, {}},
        {"Q", Align::right, [](const ResultRow& r) { return number(r.config.n_query_tokens); }, {}},
        {"P", Align::right, [](const ResultRow& r) { return number(r.config.shared_prefix); }, {}},
        // Positions per block of a paged cache; the uncached forward keeps none.
        {"kv-block", Align::right,
         [](const ResultRow& r) {
             if (r.path == DecodePath::uncached) return std::string("none");
             return r.config.kv_block == 0 ? std::string("contiguous") : number(r.config.kv_block);
         },
         {}},
    };
    return axes;
}

constexpr std::size_t seq_axis = 1;       // model_axes()'s "N"
constexpr std::size_t head_dim_axis = 4;  // model_axes()'s "dh"
constexpr std::size_t kv_dtype_axis = 7;  // model_axes()'s "kv": the cache's element type
constexpr std::size_t layer_axis = 8;     // model_axes()'s "layer": attn, or the full layer's MLP
constexpr std::size_t weight_axis = 9;    // model_axes()'s "w": the weights' element type
constexpr std::size_t ragged_axis = 10;   // model_axes()'s "N_b": a ragged batch's contexts
constexpr std::size_t query_axis = 11;    // model_axes()'s "Q": query tokens per step
constexpr std::size_t prefix_axis = 12;    // model_axes()'s "P": the batch's shared prefix
constexpr std::size_t kv_block_axis = 13;  // model_axes()'s "kv-block": a paged cache's block

// What varies between the rows of a measurement besides the model: threads, cache state, path.
const std::vector<Axis>& run_axes() {
    static const std::vector<Axis> axes{
        {"T", Align::right, [](const ResultRow& r) { return number(r.n_threads); }, {}},
        {"cache", Align::left, [](const ResultRow& r) { return r.cache_state; },
         [](const ResultRow& r) { return r.cache_state + " cache"; }},
        {"path", Align::left, [](const ResultRow& r) { return std::string(path_name(r.path)); },
         [](const ResultRow& r) { return std::string(path_name(r.path)) + " path"; }},
    };
    return axes;
}

// Compared through the caption when there is one: the grouping's ("G=4 (GQA-4)") changes with
// G as well as with the label, so MHA at G=4 and at G=8 are told apart.
bool varies(const Axis& axis, const std::vector<ResultRow>& rows) {
    auto value = [&](const ResultRow& r) { return axis.caption ? axis.caption(r) : axis.cell(r); };
    return std::any_of(rows.begin(), rows.end(), [&](const ResultRow& r) { return value(r) != value(rows.front()); });
}

}  // namespace

std::string contexts_of(const ModelConfig& config) {
    if (!config.is_ragged()) return "uniform";
    std::vector<std::uint32_t> sorted = config.seq_lens;
    std::sort(sorted.begin(), sorted.end());
    return fmt::format("{}/{}/{}", sorted.front(), sorted[(sorted.size() - 1) / 2], sorted.back());
}

LineKeys::LineKeys(const std::vector<ResultRow>& rows, bool with_run_axes, bool with_seq) {
    // dh only when some row sets it apart from D/H (--head-dim, docs/model.md#explicit-head-dimension):
    // otherwise it is D/H, and the caption and columns keep their usual shape.
    const bool any_explicit_head_dim =
        std::any_of(rows.begin(), rows.end(), [](const ResultRow& r) { return r.config.explicit_head_dim != 0; });
    // The cache's type likewise, only when some row stores a reduced one (--kv-dtype).
    const bool any_reduced_cache =
        std::any_of(rows.begin(), rows.end(), [](const ResultRow& r) { return r.kv_dtype != "f32"; });
    const bool any_full_layer =
        std::any_of(rows.begin(), rows.end(), [](const ResultRow& r) { return r.config.block == BlockKind::full; });
    const bool any_reduced_weights = std::any_of(
        rows.begin(), rows.end(), [](const ResultRow& r) { return r.config.weight_dtype != WeightDtype::f32; });
    const bool any_ragged = std::any_of(rows.begin(), rows.end(), [](const ResultRow& r) { return r.config.is_ragged(); });
    const bool any_query_tokens =
        std::any_of(rows.begin(), rows.end(), [](const ResultRow& r) { return r.config.n_query_tokens != 1; });
    const bool any_shared_prefix =
        std::any_of(rows.begin(), rows.end(), [](const ResultRow& r) { return r.config.has_shared_prefix(); });
    const bool any_paged = std::any_of(rows.begin(), rows.end(), [](const ResultRow& r) { return r.config.is_paged(); });
    std::vector<std::string> model_constants, run_constants;
    auto sort = [&](const std::vector<Axis>& axes, std::vector<std::string>& constants) {
        for (const Axis& axis : axes) {
            if (rows.empty()) continue;
            if (&axis == &model_axes()[head_dim_axis] && !any_explicit_head_dim) continue;
            if (&axis == &model_axes()[kv_dtype_axis] && !any_reduced_cache) continue;
            // The layer and the weights' type likewise, only beyond the attention block of f32 weights.
            if (&axis == &model_axes()[layer_axis] && !any_full_layer) continue;
            if (&axis == &model_axes()[weight_axis] && !any_reduced_weights) continue;
            if (&axis == &model_axes()[ragged_axis] && !any_ragged) continue;
            if (&axis == &model_axes()[query_axis] && !any_query_tokens) continue;
            if (&axis == &model_axes()[prefix_axis] && !any_shared_prefix) continue;
            if (&axis == &model_axes()[kv_block_axis] && !any_paged) continue;
            if (&axis == &model_axes()[seq_axis] && !with_seq) continue;
            if (varies(axis, rows)) {
                columns_.push_back({axis.name, axis.align, axis.cell});
            } else {
                constants.push_back(axis.caption ? axis.caption(rows.front())
                                                 : fmt::format("{}={}", axis.name, axis.cell(rows.front())));
            }
        }
    };
    sort(model_axes(), model_constants);
    if (with_run_axes) sort(run_axes(), run_constants);
    caption_ = fmt::format("{}", fmt::join(model_constants, " "));
    if (!run_constants.empty()) {
        caption_ += (caption_.empty() ? "" : ", ") + fmt::format("{}", fmt::join(run_constants, ", "));
    }
    if (!caption_.empty()) caption_ = "every line: " + caption_;
}

SummaryTable LineKeys::table(std::string title) const {
    SummaryTable table{TextTable{std::move(title), {}, {}, {}, {}}, caption_, columns_.size()};
    for (const Column& column : columns_) {
        table.text.header.push_back(column.name);
        table.text.align.push_back(column.align);
    }
    return table;
}

std::vector<std::string> LineKeys::cells(const ResultRow& row) const {
    std::vector<std::string> line;
    for (const Column& column : columns_) line.push_back(column.cell(row));
    return line;
}

std::string LineKeys::label(const ResultRow& row) const {
    std::vector<std::string> parts;
    for (const Column& column : columns_) {
        // Words name themselves ("MHA", "cached"); numbers need their axis ("N=128").
        parts.push_back(column.align == Align::left ? column.cell(row) : fmt::format("{}={}", column.name, column.cell(row)));
    }
    return fmt::format("{}", fmt::join(parts, " "));
}

void add_figures(SummaryTable& table, std::initializer_list<std::string> names) {
    for (const std::string& name : names) {
        table.text.header.push_back(name);
        table.text.align.push_back(Align::right);
    }
}

namespace {

// Figure columns with nothing in any line (a path the run did not measure) go: a column of
// dashes says less than the caption's "cached path".
void drop_empty_figures(SummaryTable& table) {
    TextTable& text = table.text;
    for (std::size_t i = text.header.size(); i-- > table.n_key_columns;) {
        const bool empty = std::all_of(text.lines.begin(), text.lines.end(),
                                       [&](const std::vector<std::string>& line) { return line[i].empty() || line[i] == missing; });
        if (!empty || text.lines.empty()) continue;
        text.header.erase(text.header.begin() + static_cast<std::ptrdiff_t>(i));
        text.align.erase(text.align.begin() + static_cast<std::ptrdiff_t>(i));
        for (std::vector<std::string>& line : text.lines) line.erase(line.begin() + static_cast<std::ptrdiff_t>(i));
    }
}

std::string intensity(const ResultRow* row) {
    if (row == nullptr || row->cost.bytes == 0) return missing;
    return format_number(static_cast<double>(row->cost.flops) / static_cast<double>(row->cost.bytes));
}

// The first row of each pair, to key the per-configuration tables with the same axes.
std::vector<ResultRow> representatives(const std::vector<ConfigPair>& pairs) {
    std::vector<ResultRow> rows;
    for (const ConfigPair& pair : pairs) rows.push_back(*(pair.cached != nullptr ? pair.cached : pair.uncached));
    return rows;
}

SummaryTable flops_table(const std::vector<ConfigPair>& pairs) {
    const std::vector<ResultRow> configs = representatives(pairs);
    const LineKeys keys(configs, false);
    std::vector<double> cached_flops, uncached_flops;
    for (const ConfigPair& pair : pairs) {
        if (pair.cached != nullptr) cached_flops.push_back(static_cast<double>(pair.cached->cost.flops));
        if (pair.uncached != nullptr) uncached_flops.push_back(static_cast<double>(pair.uncached->cost.flops));
    }
    const ColumnUnit cached_unit = flops_unit(cached_flops), uncached_unit = flops_unit(uncached_flops);
    SummaryTable table = keys.table("FLOPs per step");
    add_figures(table, {"cached\n" + cached_unit.name, "uncached\n" + uncached_unit.name, "uncached/\ncached",
                        "FLOP/byte\ncached", "FLOP/byte\nuncached"});
    for (std::size_t i = 0; i < pairs.size(); ++i) {
        const ConfigPair& pair = pairs[i];
        std::vector<std::string> line = keys.cells(configs[i]);
        line.push_back(pair.cached ? format_in(static_cast<double>(pair.cached->cost.flops), cached_unit) : missing);
        line.push_back(pair.uncached ? format_in(static_cast<double>(pair.uncached->cost.flops), uncached_unit)
                                     : missing);
        const bool both = pair.cached != nullptr && pair.uncached != nullptr && pair.cached->cost.flops > 0;
        line.push_back(both ? format_ratio(static_cast<double>(pair.uncached->cost.flops) /
                                           static_cast<double>(pair.cached->cost.flops))
                            : missing);
        line.push_back(intensity(pair.cached));
        line.push_back(intensity(pair.uncached));
        table.text.lines.push_back(std::move(line));
    }
    table.text.footnote = "FLOP/byte: the step's FLOPs over the bytes it moves; far below this machine's FLOP/s over "
                          "its GB/s, a step waits on memory";
    drop_empty_figures(table);
    return table;
}

SummaryTable latency_table(const std::vector<ResultRow>& rows, const TableOptions& options) {
    const LineKeys keys(rows, true);
    // One unit for median, min and p90, so the three compare within a line as well.
    std::vector<double> durations_ns;
    for (const ResultRow& row : rows) {
        durations_ns.insert(durations_ns.end(), {row.stats.median_ns, row.stats.min_ns, row.stats.p90_ns});
    }
    const ColumnUnit unit = duration_unit(durations_ns, options.time_unit);
    SummaryTable table = keys.table("Latency");
    add_figures(table, {"median\n" + unit.name, "CV\n%", "min\n" + unit.name, "p90\n" + unit.name, "speedup"});
    bool any_noisy = false, any_speedup = false, any_slow = false;
    for (const ResultRow& row : rows) {
        std::vector<std::string> line = keys.cells(row);
        // Both marks concern the median; flagged rather than warned about one by one: the sweep
        // prints one line for all.
        line.push_back(format_in(row.stats.median_ns, unit) + (row.noisy ? "!" : "") + (row.slow ? "?" : ""));
        line.push_back(fmt::format("{:.1f}", 100 * row.stats.cv));
        line.push_back(format_in(row.stats.min_ns, unit));
        line.push_back(format_in(row.stats.p90_ns, unit));
        // The uncached row is the baseline: its own speedup (1.00x in the CSV) says nothing.
        if (row.path == DecodePath::uncached) {
            line.emplace_back();
        } else {
            line.push_back(row.speedup ? format_ratio(*row.speedup) : missing);
        }
        any_noisy = any_noisy || row.noisy;
        any_slow = any_slow || row.slow;
        any_speedup = any_speedup || (row.path == DecodePath::cached && row.speedup);
        table.text.lines.push_back(std::move(line));
    }
    std::vector<std::string> notes{"CV: the repetitions' standard deviation over their mean; p90: 90 % of them took "
                                   "at most this"};
    if (any_speedup) notes.emplace_back("speedup: the uncached median over the cached one");
    if (any_noisy) {
        notes.emplace_back("! noisy: the median's 95 % interval is wider than ±3 % of it, so it may move on a re-run");
    }
    if (any_slow) {
        notes.emplace_back("? slow: 10x or more the time this machine allows (a busy or oversubscribed machine): "
                           "re-run it when the machine is idle, or with fewer threads");
    }
    if (std::any_of(rows.begin(), rows.end(), [](const ResultRow& r) { return r.path == DecodePath::uncached; }) &&
        std::any_of(rows.begin(), rows.end(), [](const ResultRow& r) { return r.kv_dtype != "f32"; })) {
        notes.emplace_back("kv none: the uncached forward keeps no cache; timed once per point, it is every "
                           "type's baseline");
    }
    table.text.footnote = fmt::format("{}", fmt::join(notes, "\n"));
    drop_empty_figures(table);
    return table;
}

SummaryTable throughput_table(const std::vector<ResultRow>& rows) {
    const LineKeys keys(rows, true);
    SummaryTable table = keys.table("Throughput");
    add_figures(table, {"GFLOP/s", "GB/s", "roofline\n%"});
    bool any_fits = false, any_missing = false, any_above = false;
    for (const ResultRow& row : rows) {
        std::vector<std::string> line = keys.cells(row);
        line.push_back(format_number(row.gflops));
        line.push_back(format_number(row.gbps));
        // A step whose whole working set fits in the LLC can beat DRAM bandwidth when warm; any
        // other step above 100 % says the roofline is too low.
        line.push_back((row.roofline_pct ? fmt::format("{:.1f}", *row.roofline_pct) : missing) +
                       (above_roofline(row) ? "^" : "") + (row.fits_in_llc ? "*" : ""));
        any_fits = any_fits || row.fits_in_llc;
        any_missing = any_missing || !row.roofline_pct;
        any_above = any_above || above_roofline(row);
        table.text.lines.push_back(std::move(line));
    }
    std::vector<std::string> notes;
    if (!std::all_of(rows.begin(), rows.end(), [](const ResultRow& r) { return !r.roofline_pct; })) {
        notes.emplace_back("roofline %: the least time this machine's roofline allows for the step's FLOPs and bytes, "
                           "over the median");
    }
    if (any_above) {
        notes.emplace_back("^ above 100 %: faster than the roofline allows, so the roofline is too low for this "
                           "machine (a quick one, or measured while the machine was busy); `kvbench roofline -t T` "
                           "measures it again");
    }
    if (any_fits) {
        notes.emplace_back("* the step's working set fits in the last-level cache: with --cache-state warm it can "
                           "beat DRAM bandwidth");
    }
    if (any_missing) {
        notes.emplace_back("- no roofline for this thread count: measure one with `kvbench roofline -t T` or "
                           "`kvbench sweep --measure-roofline` (a sweep without --no-roofline measures one "
                           "quickly when none is saved)");
    }
    table.text.footnote = fmt::format("{}", fmt::join(notes, "\n"));
    return table;
}

SummaryTable kv_memory_table(const std::vector<ConfigPair>& pairs) {
    const std::vector<ResultRow> configs = representatives(pairs);
    const LineKeys keys(configs, false);
    std::vector<double> kv_bytes, mha_kv_bytes;
    for (const ResultRow& row : configs) {
        kv_bytes.push_back(static_cast<double>(row.cost.kv_bytes));
        mha_kv_bytes.push_back(static_cast<double>(kv_cache_bytes_as_mha(row.config)));
    }
    // One unit for both columns: the saving reads off a line.
    std::vector<double> both = kv_bytes;
    both.insert(both.end(), mha_kv_bytes.begin(), mha_kv_bytes.end());
    const ColumnUnit unit = bytes_unit(both);
    // A reduced cache's price: its step against the same step over an f32 cache (kv_rel_error).
    const bool any_kv_error = std::any_of(pairs.begin(), pairs.end(), [](const ConfigPair& pair) {
        return pair.cached != nullptr && pair.cached->kv_rel_error;
    });
    SummaryTable table = keys.table("KV memory");
    add_figures(table, {"KV cache\n" + unit.name, "as MHA\n" + unit.name, "saved by grouping"});
    if (any_kv_error) add_figures(table, {"error vs\nf32 cache"});
    for (std::size_t i = 0; i < configs.size(); ++i) {
        const ModelConfig& c = configs[i].config;
        std::vector<std::string> line = keys.cells(configs[i]);
        line.push_back(format_in(kv_bytes[i], unit));
        line.push_back(format_in(mha_kv_bytes[i], unit));
        if (!c.is_latent() && c.n_kv_heads == c.n_heads) {
            line.emplace_back("none");
        } else {
            const double shrink = mha_kv_bytes[i] / kv_bytes[i];
            line.push_back(fmt::format("{} smaller (-{:.0f} %)", format_ratio(shrink), 100 * (1 - 1 / shrink)));
        }
        if (any_kv_error) {
            const ResultRow* cached = pairs[i].cached;
            line.push_back(cached != nullptr && cached->kv_rel_error ? fmt::format("{:.1e}", *cached->kv_rel_error)
                                                                      : std::string(missing));
        }
        table.text.lines.push_back(std::move(line));
    }
    table.text.footnote = "as MHA: the cache with one KV head per query head (G=H), at the same B, N, D, H and L";
    if (std::any_of(configs.begin(), configs.end(), [](const ResultRow& row) { return row.config.is_latent(); })) {
        table.text.footnote += "; for latent attention (MLA), K of d_n + d_r and V of d_v per head in place of the "
                               "latent (docs/counting.md#latent-attention-mla)";
    }
    if (any_kv_error) {
        table.text.footnote += "\nerror vs f32 cache: the cached step's relative error against the same step over an "
                               "f32 cache of the same values (docs/model.md#kv-cache-element-types)";
    }
    return table;
}

std::string or_unknown(const std::string& text) { return text.empty() ? "unknown" : text; }

template <typename T>
std::vector<T> distinct(const std::vector<ResultRow>& rows, T (*value)(const ResultRow&)) {
    std::vector<T> values;
    for (const ResultRow& row : rows) {
        if (std::find(values.begin(), values.end(), value(row)) == values.end()) values.push_back(value(row));
    }
    return values;
}

}  // namespace

std::vector<std::string> run_description_lines(const std::vector<ResultRow>& rows, const Environment& env) {
    const std::vector<std::size_t> threads =
        distinct<std::size_t>(rows, [](const ResultRow& r) { return r.n_threads; });
    const std::vector<std::string> cache_states =
        distinct<std::string>(rows, [](const ResultRow& r) { return r.cache_state; });
    std::string machine = fmt::format("{} ({} cores", or_unknown(env.cpu_model), env.n_cores);
    if (env.llc_bytes > 0) machine += fmt::format(", LLC {}", format_bytes(env.llc_bytes));
    machine += ')';
    // The BLAS build string alone can fill a terminal line: it gets its own.
    std::vector<std::string> lines{
        fmt::format("machine: {}", machine),
        fmt::format("BLAS:    {} ({})", or_unknown(env.blas_library), or_unknown(env.blas_threading)),
        fmt::format("build:   {} {} ({}, kernels {}{}); kvbench {}", or_unknown(env.build_type),
                    or_unknown(env.git_commit), or_unknown(env.compiler), or_unknown(env.kernel_isa),
                    env.kernel_tiles.empty() ? "" : " + " + env.kernel_tiles, or_unknown(env.tool_version)),
        fmt::format("run:     threads {}; cache {}",
                    threads.empty() ? std::string(missing) : fmt::format("{}", fmt::join(threads, ", ")),
                    cache_states.empty() ? std::string(missing) : fmt::format("{}", fmt::join(cache_states, ", ")))};
    if (!env.blas_held_back.empty()) lines.push_back(fmt::format("note:    {}", env.blas_held_back));
    if (!env.optimized_build) lines.emplace_back("WARNING: unoptimized build, these timings mean nothing");
    return lines;
}

std::string describe_run(const std::vector<ResultRow>& rows, const Environment& env, std::size_t width) {
    std::string text;
    for (const std::string& line : run_description_lines(rows, env)) {
        if (!text.empty()) text += '\n';
        text += wrap_text(line, 0, description_indent, width);
    }
    return text;
}

std::string axis_legend() {
    return "axes:    B batch, N context, D model dim, H heads, G KV heads (GQA-G), L layers, T threads";
}

std::vector<SummaryTable> summary_tables(const std::vector<ResultRow>& rows, const TableOptions& options) {
    const std::vector<ConfigPair> pairs = pair_by_config(rows);
    std::vector<SummaryTable> tables{flops_table(pairs), latency_table(rows, options), throughput_table(rows),
                                     kv_memory_table(pairs)};
    if (std::optional<SummaryTable> formats = kv_format_table(rows, options)) tables.push_back(std::move(*formats));
    if (std::optional<SummaryTable> shared = shared_prefix_table(rows, options)) tables.push_back(std::move(*shared));
    if (std::optional<SummaryTable> tokens = query_tokens_table(rows, options)) tables.push_back(std::move(*tokens));
    if (std::optional<SummaryTable> paged = paged_table(rows, options)) tables.push_back(std::move(*paged));
    return tables;
}

}  // namespace kvbench
