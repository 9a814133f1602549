// The headline's sentences from a run's rows: the cache's speed-up, each grouping against MHA, each KV type against f32.
#include "kvbench/report/headline.hpp"

#include "kvbench/engine/cost_model.hpp"
#include "kvbench/report/summary_tables.hpp"
#include "kvbench/report/units.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

namespace kvbench {

namespace {

// The smallest and largest of some figures, for "52-61 %".
struct Range {
    double low = 0;
    double high = 0;
    bool empty = true;

    void add(double value) {
        low = empty ? value : std::min(low, value);
        high = empty ? value : std::max(high, value);
        empty = false;
    }
};

// "55 %", "52-61 %" or "0.17-57 %": percentages of another row's time, whole from 10 % on and
// two significant digits below, so that a small share does not read as 0 %.
std::string percent_range(const Range& range) {
    const auto percent = [](double fraction) {
        const double value = 100 * fraction;
        return value >= 9.95 ? fmt::format("{}", std::lround(value)) : fmt::format("{:.2g}", value);
    };
    const std::string low = percent(range.low), high = percent(range.high);
    return low == high ? fmt::format("{} %", low) : fmt::format("{}-{} %", low, high);
}

// "4x" or "4-8x": ratios of sizes, whole numbers when they are.
std::string size_ratio_range(const Range& range) {
    const auto ratio = [](double value) {
        return std::abs(value - std::round(value)) < 1e-9 ? fmt::format("{:.0f}", value) : format_number(value);
    };
    const std::string low = ratio(range.low), high = ratio(range.high);
    return low == high ? low + "x" : low + "-" + high + "x";
}

// A row and another measured the same way: threads and cache state.
bool same_run(const ResultRow& a, const ResultRow& b) {
    return a.path == b.path && a.n_threads == b.n_threads && a.cache_state == b.cache_state;
}

// The same row of `rows` with `config`, measured the same way, or nullptr.
const ResultRow* twin_of(const std::vector<const ResultRow*>& rows, const ResultRow& row, const ModelConfig& config) {
    const auto found = std::find_if(rows.begin(), rows.end(),
                                    [&](const ResultRow* other) { return same_run(*other, row) && other->config == config; });
    return found == rows.end() ? nullptr : *found;
}

// Groups of figures by a label, in the order the labels first appear.
struct Labelled {
    std::vector<std::string> labels;
    std::vector<Range> ranges;

    Range& operator[](const std::string& label) {
        const auto found = std::find(labels.begin(), labels.end(), label);
        if (found != labels.end()) return ranges[static_cast<std::size_t>(found - labels.begin())];
        labels.push_back(label);
        return ranges.emplace_back();
    }
};

// "the KV cache made the step 24.1x (N=128 MHA) to 1386x (N=4096 MQA) faster"; a ratio below 1
// is a slowdown and is called one ("0.807x as fast, slower (N=16 MHA)").
std::optional<std::string> speedup_sentence(const std::vector<const ResultRow*>& cached) {
    std::vector<ResultRow> with_speedup;
    for (const ResultRow* row : cached) {
        if (row->speedup) with_speedup.push_back(*row);
    }
    if (with_speedup.empty()) return std::nullopt;
    const auto [slowest, fastest] = std::minmax_element(
        with_speedup.begin(), with_speedup.end(), [](const ResultRow& a, const ResultRow& b) { return *a.speedup < *b.speedup; });
    const auto how_fast = [](double speedup) {
        return speedup < 1 ? format_ratio(speedup) + " as fast, slower" : format_ratio(speedup) + " faster";
    };
    if (with_speedup.size() == 1) return fmt::format("the KV cache made the step {}", how_fast(*slowest->speedup));
    const LineKeys keys(with_speedup, true);
    const auto where = [&](const ResultRow& row) {
        const std::string label = keys.label(row);
        return label.empty() ? std::string() : " (" + label + ")";
    };
    if (*slowest->speedup >= 1) {
        return fmt::format("the KV cache made the step {}{} to {}{} faster", format_ratio(*slowest->speedup),
                           where(*slowest), format_ratio(*fastest->speedup), where(*fastest));
    }
    return fmt::format("the KV cache made the step {}{} to {}{}", how_fast(*slowest->speedup), where(*slowest),
                       how_fast(*fastest->speedup), where(*fastest));
}

// "GQA-4's cached step took 52-61 % of MHA's time, MQA's 31-53 %": against MHA at the same point.
std::optional<std::string> grouping_time_sentence(const std::vector<const ResultRow*>& cached) {
    Labelled shares;
    for (const ResultRow* row : cached) {
        if (row->config.n_kv_heads == row->config.n_heads || row->config.is_latent()) continue;
        ModelConfig mha = row->config;
        mha.n_kv_heads = mha.n_heads;
        const ResultRow* baseline = twin_of(cached, *row, mha);
        if (baseline == nullptr || !(baseline->stats.median_ns > 0)) continue;
        shares[grouping_label(row->config.n_heads, row->config.n_kv_heads)].add(row->stats.median_ns /
                                                                                 baseline->stats.median_ns);
    }
    if (shares.labels.empty()) return std::nullopt;
    std::string sentence = fmt::format("{}'s cached step took {} of MHA's time", shares.labels[0],
                                       percent_range(shares.ranges[0]));
    for (std::size_t i = 1; i < shares.labels.size(); ++i) {
        sentence += fmt::format(", {}'s {}", shares.labels[i], percent_range(shares.ranges[i]));
    }
    return sentence;
}

// "GQA-4's KV cache is 4x smaller than MHA's, MQA's 16x": H / G, exactly.
std::optional<std::string> grouping_size_sentence(const std::vector<const ResultRow*>& rows) {
    Labelled ratios;
    for (const ResultRow* row : rows) {
        const ModelConfig& c = row->config;
        if (c.is_latent()) {
            ratios["MLA"].add(static_cast<double>(kv_cache_bytes_as_mha(c)) / static_cast<double>(kv_cache_bytes(c)));
            continue;
        }
        if (c.n_kv_heads == c.n_heads) continue;
        ratios[grouping_label(c.n_heads, c.n_kv_heads)].add(static_cast<double>(c.n_heads) /
                                                            static_cast<double>(c.n_kv_heads));
    }
    if (ratios.labels.empty()) return std::nullopt;
    std::string sentence = fmt::format("{}'s KV cache is {} smaller than MHA's", ratios.labels[0],
                                       size_ratio_range(ratios.ranges[0]));
    for (std::size_t i = 1; i < ratios.labels.size(); ++i) {
        sentence += fmt::format(", {}'s {}", ratios.labels[i], size_ratio_range(ratios.ranges[i]));
    }
    return sentence;
}

// "int8's cache is 3.76x smaller than f32's, its step took 80-95 % of f32's time (error up to 2.1e-03)"
std::optional<std::string> kv_dtype_sentence(const std::vector<const ResultRow*>& cached) {
    Labelled shares, sizes;
    std::vector<double> worst_error;
    for (const ResultRow* row : cached) {
        if (row->config.key_dtype() == KvDtype::f32 && row->config.value_dtype() == KvDtype::f32) continue;
        ModelConfig f32 = row->config;
        f32.set_kv_dtypes(KvDtype::f32, KvDtype::f32);
        const ResultRow* baseline = twin_of(cached, *row, f32);
        if (baseline == nullptr || !(baseline->stats.median_ns > 0) || row->cost.kv_bytes == 0) continue;
        shares[row->kv_dtype].add(row->stats.median_ns / baseline->stats.median_ns);
        sizes[row->kv_dtype].add(static_cast<double>(baseline->cost.kv_bytes) / static_cast<double>(row->cost.kv_bytes));
        if (worst_error.size() < shares.labels.size()) worst_error.resize(shares.labels.size(), 0);
        const std::size_t i = static_cast<std::size_t>(
            std::find(shares.labels.begin(), shares.labels.end(), row->kv_dtype) - shares.labels.begin());
        worst_error[i] = std::max(worst_error[i], row->kv_rel_error.value_or(0));
    }
    if (shares.labels.empty()) return std::nullopt;
    std::vector<std::string> clauses;
    for (std::size_t i = 0; i < shares.labels.size(); ++i) {
        clauses.push_back(fmt::format("{}'s cache is {} smaller than f32's and its step took {} of the time (error "
                                      "up to {:.1e})",
                                      shares.labels[i], size_ratio_range(sizes.ranges[i]),
                                      percent_range(shares.ranges[i]), worst_error[i]));
    }
    return fmt::format("{}", fmt::join(clauses, "; "));
}

}  // namespace

Headline make_headline(const std::vector<ResultRow>& rows) {
    Headline headline;
    std::vector<const ResultRow*> kept, cached, slow_uncached;
    for (const ResultRow& row : rows) {
        if (row.slow) {
            ++headline.n_slow_left_out;
            if (row.path == DecodePath::uncached) slow_uncached.push_back(&row);
            continue;
        }
        kept.push_back(&row);
        if (row.path == DecodePath::cached) cached.push_back(&row);
    }
    // A speedup divides by the uncached median: a slow uncached row makes its cached twins' wrong too.
    std::vector<const ResultRow*> trusted_speedups;
    for (const ResultRow* row : cached) {
        const bool slow_baseline = std::any_of(slow_uncached.begin(), slow_uncached.end(), [&](const ResultRow* u) {
            ModelConfig config = u->config;
            config.set_kv_dtypes(row->config.key_dtype(), row->config.value_dtype());
            return config == row->config && u->n_threads == row->n_threads && u->cache_state == row->cache_state;
        });
        if (!slow_baseline) trusted_speedups.push_back(row);
    }
    for (std::optional<std::string> sentence :
         {speedup_sentence(trusted_speedups), grouping_time_sentence(cached), grouping_size_sentence(kept),
          kv_dtype_sentence(cached)}) {
        if (sentence) headline.sentences.push_back(std::move(*sentence));
    }
    return headline;
}

void write_headline(std::ostream& out, const Headline& headline, std::size_t width) {
    if (headline.empty()) return;
    out << "Headline (medians of this run";
    if (headline.n_slow_left_out > 0) {
        out << fmt::format("; {} marked ? left out", format_count(headline.n_slow_left_out, "row"));
    }
    out << ")\n";
    for (const std::string& sentence : headline.sentences) out << wrap_text(sentence, 2, 4, width) << '\n';
}

}  // namespace kvbench
