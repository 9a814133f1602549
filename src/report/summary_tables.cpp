// Turns Rows into the three summary tables' text cells, in human units; no layout here.
#include "kvbench/report/summary_tables.hpp"

#include "kvbench/report/units.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace kvbench {

namespace {

constexpr const char* missing = "-";

// The cached and uncached rows of one ModelConfig; either may be absent.
struct ConfigPair {
    ModelConfig config;
    const ResultRow* cached = nullptr;
    const ResultRow* uncached = nullptr;
};

std::vector<ConfigPair> pair_by_config(const std::vector<ResultRow>& rows) {
    std::vector<ConfigPair> pairs;
    for (const ResultRow& row : rows) {
        auto pair = std::find_if(pairs.begin(), pairs.end(),
                                 [&](const ConfigPair& p) { return p.config == row.config; });
        if (pair == pairs.end()) pair = pairs.insert(pairs.end(), ConfigPair{row.config});
        const ResultRow*& slot = row.path == DecodePath::cached ? pair->cached : pair->uncached;
        if (slot == nullptr) slot = &row;  // first one wins: FLOPs and bytes do not depend on threads
    }
    return pairs;
}

// The columns naming a point. A dh column only when some row sets the head dimension apart
// from D/H (--head-dim, docs/model.md#explicit-head-dimension): otherwise dh is D/H and the
// tables keep their usual shape.
struct PointColumns {
    bool head_dim = false;

    explicit PointColumns(const std::vector<ResultRow>& rows)
        : head_dim(std::any_of(rows.begin(), rows.end(),
                               [](const ResultRow& r) { return r.config.explicit_head_dim != 0; })) {}

    std::vector<std::string> header() const {
        std::vector<std::string> names{"B", "N", "D", "H", "G", "L", "grouping"};
        if (head_dim) names.insert(names.begin() + 4, "dh");
        return names;
    }

    std::vector<std::string> cells(const ModelConfig& c) const {
        std::vector<std::string> line{fmt::format("{}", c.n_batch),    fmt::format("{}", c.seq_len),
                                      fmt::format("{}", c.model_dim),  fmt::format("{}", c.n_heads),
                                      fmt::format("{}", c.n_kv_heads), fmt::format("{}", c.n_layers),
                                      grouping_label(c.n_heads, c.n_kv_heads)};
        if (head_dim) line.insert(line.begin() + 4, fmt::format("{}", c.head_dim()));
        return line;
    }

    // Point columns, then `n_figures` right-aligned columns.
    std::vector<Align> then_numbers(std::size_t n_figures) const {
        std::vector<Align> align(header().size() - 1, Align::right);
        align.push_back(Align::left);  // grouping
        align.insert(align.end(), n_figures, Align::right);
        return align;
    }
};

std::string intensity(const ResultRow* row) {
    if (row == nullptr || row->cost.bytes == 0) return missing;
    return format_number(static_cast<double>(row->cost.flops) / static_cast<double>(row->cost.bytes));
}

std::string flops_of(const ResultRow* row) {
    return row == nullptr ? missing : format_flops(static_cast<double>(row->cost.flops));
}

TextTable flops_table(const std::vector<ConfigPair>& pairs, const PointColumns& point) {
    TextTable table{"FLOPs per step", point.header(), point.then_numbers(5), {}, {}};
    for (const char* name :
         {"cached", "uncached", "uncached/cached", "cached FLOP/B", "uncached FLOP/B"}) {
        table.header.emplace_back(name);
    }
    for (const ConfigPair& pair : pairs) {
        std::vector<std::string> line = point.cells(pair.config);
        line.push_back(flops_of(pair.cached));
        line.push_back(flops_of(pair.uncached));
        const bool both = pair.cached != nullptr && pair.uncached != nullptr && pair.cached->cost.flops > 0;
        line.push_back(both ? format_ratio(static_cast<double>(pair.uncached->cost.flops) /
                                           static_cast<double>(pair.cached->cost.flops))
                            : missing);
        line.push_back(intensity(pair.cached));
        line.push_back(intensity(pair.uncached));
        table.lines.push_back(std::move(line));
    }
    return table;
}

TextTable latency_table(const std::vector<ResultRow>& rows, const PointColumns& point) {
    // A cache column only when the run mixes cold and warm: otherwise describe_run says which.
    const bool mixed_cache_states =
        std::any_of(rows.begin(), rows.end(),
                    [&](const ResultRow& r) { return r.cache_state != rows.front().cache_state; });
    TextTable table{"Latency", point.header(), {}, {}, {}};
    table.header.emplace_back("T");
    if (mixed_cache_states) table.header.emplace_back("cache");
    table.header.emplace_back("path");
    for (const char* name : {"median", "CV", "min", "p90", "GFLOP/s", "GB/s", "roofline", "speedup"}) {
        table.header.emplace_back(name);
    }
    table.align = point.then_numbers(0);
    table.align.push_back(Align::right);  // T
    if (mixed_cache_states) table.align.push_back(Align::left);
    table.align.push_back(Align::left);  // path
    table.align.insert(table.align.end(), 8, Align::right);

    for (const ResultRow& row : rows) {
        std::vector<std::string> line = point.cells(row.config);
        line.push_back(fmt::format("{}", row.n_threads));
        if (mixed_cache_states) line.push_back(row.cache_state);
        line.emplace_back(path_name(row.path));
        line.push_back(format_duration_ns(row.stats.median_ns));
        // Flagged rather than warned about one by one: the sweep prints one line for all.
        line.push_back(format_percent(100 * row.stats.cv) + (row.noisy ? "!" : ""));
        line.push_back(format_duration_ns(row.stats.min_ns));
        line.push_back(format_duration_ns(row.stats.p90_ns));
        line.push_back(format_number(row.gflops));
        line.push_back(format_number(row.gbps));
        // A step whose whole working set fits in the LLC can beat DRAM bandwidth when warm.
        line.push_back((row.roofline_pct ? format_percent(*row.roofline_pct) : missing) +
                       (row.fits_in_llc ? "*" : ""));
        if (row.fits_in_llc) {
            table.footnote =
                "* the step's working set fits in the last-level cache: with --cache-state warm it "
                "can beat DRAM bandwidth";
        }
        line.push_back(row.speedup ? format_ratio(*row.speedup) : missing);
        table.lines.push_back(std::move(line));
    }
    if (std::any_of(rows.begin(), rows.end(), [](const ResultRow& r) { return r.noisy; })) {
        if (!table.footnote.empty()) table.footnote += "\n  ";
        table.footnote += "! noisy: CV above 5 % and MdAPE above 2 %, so the median may move on a re-run";
    }
    return table;
}

TextTable kv_memory_table(const std::vector<ConfigPair>& pairs, const PointColumns& point) {
    TextTable table{"KV memory", point.header(), point.then_numbers(3), {}, {}};
    for (const char* name : {"KV cache", "MHA KV cache", "saved by grouping"}) table.header.emplace_back(name);
    for (const ConfigPair& pair : pairs) {
        const ModelConfig& c = pair.config;
        const std::uint64_t kv_bytes = (pair.cached != nullptr ? pair.cached : pair.uncached)->cost.kv_bytes;
        // kv_bytes holds a factor G (docs/counting.md#kv-bytes), so dividing first is exact and cannot overflow.
        const std::uint64_t mha_kv_bytes = kv_bytes / c.n_kv_heads * c.n_heads;
        std::vector<std::string> line = point.cells(c);
        line.push_back(format_bytes(kv_bytes));
        line.push_back(format_bytes(mha_kv_bytes));
        if (c.n_kv_heads == c.n_heads) {
            line.emplace_back(missing);
        } else {
            const double shrink = static_cast<double>(c.n_heads) / static_cast<double>(c.n_kv_heads);
            line.push_back(fmt::format("-{:.1f} % ({} smaller)", 100 * (1 - 1 / shrink), format_ratio(shrink)));
        }
        table.lines.push_back(std::move(line));
    }
    return table;
}

std::string or_unknown(const std::string& text) { return text.empty() ? "unknown" : text; }

}  // namespace

std::string describe_run(const std::vector<ResultRow>& rows, const Environment& env) {
    std::vector<std::size_t> threads;
    std::vector<std::string> cache_states;
    for (const ResultRow& row : rows) {
        if (std::find(threads.begin(), threads.end(), row.n_threads) == threads.end()) {
            threads.push_back(row.n_threads);
        }
        if (std::find(cache_states.begin(), cache_states.end(), row.cache_state) == cache_states.end()) {
            cache_states.push_back(row.cache_state);
        }
    }
    std::string machine = fmt::format("machine: {} ({} cores", or_unknown(env.cpu_model), env.n_cores);
    if (env.llc_bytes > 0) machine += fmt::format(", LLC {}", format_bytes(env.llc_bytes));
    machine += ')';
    std::string text = fmt::format(
        "{}; BLAS: {} ({}); threads: {}; cache: {}; build: {} {} ({}, kernels {}); kvbench {}", machine,
        or_unknown(env.blas_library), or_unknown(env.blas_threading),
        threads.empty() ? std::string(missing) : fmt::format("{}", fmt::join(threads, ", ")),
        cache_states.empty() ? std::string(missing) : fmt::format("{}", fmt::join(cache_states, ", ")),
        or_unknown(env.build_type), or_unknown(env.git_commit), or_unknown(env.compiler),
        or_unknown(env.kernel_isa), or_unknown(env.tool_version));
    if (!env.optimized_build) text += "; WARNING: unoptimized build, these timings mean nothing";
    return text;
}

std::vector<TextTable> summary_tables(const std::vector<ResultRow>& rows) {
    const std::vector<ConfigPair> pairs = pair_by_config(rows);
    const PointColumns point(rows);
    return {flops_table(pairs, point), latency_table(rows, point), kv_memory_table(pairs, point)};
}

}  // namespace kvbench
