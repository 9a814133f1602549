// Matching rows, the metric of each row, and the verdict of each pair: U test, overlap rule or none.
#include "kvbench/compare/comparison.hpp"

#include "kvbench/compare/mann_whitney.hpp"
#include "kvbench/engine/config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <map>
#include <set>

namespace kvbench {

namespace {

using Key = std::vector<std::string>;

// Both sides need this many repetitions for the U test: google/benchmark's
// tools/gbench/report.py asks for 2 (UTEST_MIN_REPETITIONS); below it the overlap rule.
constexpr std::size_t min_u_test_samples = 2;

std::optional<double> number(const ResultEntry& entry, const std::string& column) {
    const std::optional<std::string> text = entry.cell(column);
    if (!text) return std::nullopt;
    double value = 0;
    const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
    if (error != std::errc() || end != text->data() + text->size()) {
        throw ConfigError(fmt::format("column {}: '{}' is not a number", column, *text));
    }
    return value;
}

// Short names of the configuration columns in a row's label (docs/model.md#configuration's symbols).
std::string short_name(const std::string& column) {
    static const std::map<std::string, std::string> names = {
        {"batch", "B"}, {"seq", "N"}, {"dim", "D"}, {"heads", "H"}, {"kv_heads", "G"},
        {"layers", "L"}, {"threads", "T"}, {"head_dim", "dh"}};
    const auto found = names.find(column);
    return found == names.end() ? column + "=" : found->second + "=";
}

// path, B, N, D, H, G always; the other key columns only when they vary, so labels stay short.
std::vector<bool> shown_columns(const std::vector<std::string>& columns, const std::vector<Key>& keys) {
    static const std::set<std::string> always = {"benchmark", "path", "batch", "seq", "dim", "heads", "kv_heads"};
    std::vector<bool> shown(columns.size(), false);
    for (std::size_t c = 0; c < columns.size(); ++c) {
        if (always.contains(columns[c])) {
            shown[c] = true;
            continue;
        }
        for (const Key& key : keys) shown[c] = shown[c] || key[c] != keys.front()[c];
    }
    return shown;
}

std::string label_of(const std::vector<std::string>& columns, const std::vector<bool>& shown, const Key& key) {
    std::string label;
    for (std::size_t c = 0; c < columns.size(); ++c) {
        if (!shown[c]) continue;
        if (!label.empty()) label += ' ';
        const bool bare = columns[c] == "path" || columns[c] == "benchmark" || columns[c] == "phase";
        label += bare ? key[c] : short_name(columns[c]) + key[c];
    }
    return label;
}

// The row a grouped row is measured against for mha_ratio: same everything, kv_heads = heads.
Key mha_key(const std::vector<std::string>& columns, const ResultEntry& entry) {
    Key key = entry.key;
    const auto heads = std::find(columns.begin(), columns.end(), "heads");
    const auto kv_heads = std::find(columns.begin(), columns.end(), "kv_heads");
    if (heads == columns.end() || kv_heads == columns.end()) return key;
    key[static_cast<std::size_t>(kv_heads - columns.begin())] = key[static_cast<std::size_t>(heads - columns.begin())];
    return key;
}

// The metric of one row as a function of a time in microseconds, or nothing when it does
// not apply. Every metric other than latency is (constant / time), so a repetition's
// value is the constant over that repetition's time.
std::optional<std::function<double(double)>> metric_of_time(const ResultFile& file, const ResultEntry& entry,
                                                            const std::map<Key, const ResultEntry*>& index,
                                                            Metric metric) {
    const double median_us = number(entry, "latency_us_median").value_or(0);
    switch (metric) {
    case Metric::latency:
        return [](double us) { return us; };
    case Metric::gflops: {
        const std::optional<double> flops = number(entry, "flops");
        if (!flops) return std::nullopt;
        return [f = *flops](double us) { return f / (us * 1e3); };  // FLOP per ns = GFLOP/s
    }
    case Metric::roofline_pct:
    case Metric::speedup: {
        if (metric == Metric::speedup && entry.cell("path") != "cached") return std::nullopt;
        const std::optional<double> value = number(entry, metric == Metric::speedup ? "speedup" : "roofline_pct");
        if (!value) return std::nullopt;
        return [c = *value * median_us](double us) { return c / us; };
    }
    case Metric::mha_ratio: {
        if (entry.cell("kv_heads") == entry.cell("heads")) return std::nullopt;
        const auto mha = index.find(mha_key(file.key_columns, entry));
        if (mha == index.end()) return std::nullopt;
        const std::optional<double> mha_us = number(*mha->second, "latency_us_median");
        if (!mha_us) return std::nullopt;
        return [m = *mha_us](double us) { return m / us; };
    }
    }
    return std::nullopt;
}

std::optional<MetricValues> metric_values(const ResultFile& file, const ResultEntry& entry,
                                          const std::map<Key, const ResultEntry*>& index, Metric metric) {
    const auto of_time = metric_of_time(file, entry, index, metric);
    const std::optional<double> median_us = number(entry, "latency_us_median");
    if (!of_time || !median_us) return std::nullopt;
    const auto& f = *of_time;
    MetricValues values;
    values.median = f(*median_us);
    const double at_min = f(number(entry, "latency_us_min").value_or(*median_us));
    const double at_max = f(number(entry, "latency_us_max").value_or(*median_us));
    values.min = std::min(at_min, at_max);
    values.max = std::max(at_min, at_max);
    values.reps = static_cast<std::size_t>(number(entry, "reps").value_or(1));
    for (double ns : entry.samples_ns) values.samples.push_back(f(ns / 1e3));
    return values;
}

// flops, bytes and kv_bytes are exact (docs/counting.md): any difference means different work.
std::string counts_difference(const ResultEntry& base, const ResultEntry& other) {
    std::vector<std::string> differences;
    for (const char* column : {"flops", "bytes", "kv_bytes"}) {
        const std::optional<std::string> a = base.cell(column);
        const std::optional<std::string> b = other.cell(column);
        if (a && b && *a != *b) differences.push_back(fmt::format("{} {} -> {}", column, *a, *b));
    }
    return fmt::format("{}", fmt::join(differences, ", "));
}

// How much worse than BASE, in percent: positive when worse, whichever way the metric improves.
double worse_pct_of(double change_pct, Metric metric) { return lower_is_better(metric) ? change_pct : -change_pct; }

// The least a row is worse by, with 1 − alpha confidence: the interval's end nearest to "better".
std::optional<double> least_worse_pct(const ComparedRow& row, Metric metric) {
    if (!row.shift) return std::nullopt;
    const double low = worse_pct_of(row.percent_of_base(row.shift->low), metric);
    const double high = worse_pct_of(row.percent_of_base(row.shift->high), metric);
    return std::min(low, high);
}

void judge(ComparedRow& row, const CompareOptions& options) {
    const MetricValues& a = row.base;
    const MetricValues& b = row.other;
    row.change_pct = a.median != 0 ? 100 * (b.median - a.median) / a.median : 0;
    if (a.samples.size() >= min_u_test_samples && b.samples.size() >= min_u_test_samples) {
        row.shift = hodges_lehmann(a.samples, b.samples, 1 - options.alpha);
    }
    if (!row.counts_note.empty()) {
        row.verdict = Verdict::counts_differ;
        return;
    }
    bool significant = false;
    if (row.shift) {
        row.test = Test::u_test;
        const UTest u = mann_whitney_u(a.samples, b.samples);
        row.p_value = u.p_value;
        significant = u.p_value < options.alpha;
    } else if (a.reps >= 2 && b.reps >= 2) {
        // Without samples: a change counts only when the two [min, max] ranges do not overlap.
        row.test = Test::overlap;
        significant = b.min > a.max || b.max < a.min;
    } else {
        row.verdict = Verdict::unknown;
        return;
    }
    const double worse_pct = worse_pct_of(row.change_pct, options.metric);
    if (!significant || worse_pct == 0) {
        // Ranges are a blunt test: one wild repetition hides a change of any size.
        const bool blunt = row.test == Test::overlap && std::abs(row.change_pct) > options.threshold_pct;
        row.verdict = blunt ? Verdict::unclear : Verdict::same;
    } else if (worse_pct < 0) {
        row.verdict = Verdict::faster;
    } else if (options.require_interval) {
        const std::optional<double> least = least_worse_pct(row, options.metric);
        row.verdict = least && *least > options.threshold_pct ? Verdict::regression : Verdict::slower;
    } else {
        row.verdict = worse_pct > options.threshold_pct ? Verdict::regression : Verdict::slower;
    }
}

std::string describe_differences(const ResultFile& base, const ResultFile& other, const std::vector<std::string>& columns) {
    std::vector<std::string> differences;
    for (const std::string& column : columns) {
        const auto a = base.provenance.find(column);
        const auto b = other.provenance.find(column);
        if (a == base.provenance.end() || b == other.provenance.end() || a->second == b->second) continue;
        differences.push_back(fmt::format("{} '{}' vs '{}'", column, a->second, b->second));
    }
    return fmt::format("{}", fmt::join(differences, ", "));
}

// What tells two machines of one CPU model name apart (KVM guests of one family differ in cores
// and caches): a column of these that either file lacks leaves "same machine" unknown. A CSV
// keeps neither cores nor caches.
std::vector<std::string> unrecorded_machine_columns(const ResultFile& base, const ResultFile& other) {
    std::vector<std::string> unrecorded;
    for (const char* column : {"cpu_model", "n_cores", "cache_sizes"}) {
        if (!base.provenance.contains(column) || !other.provenance.contains(column)) unrecorded.emplace_back(column);
    }
    return unrecorded;
}

std::string provenance_note(const ResultFile& base, const ResultFile& other) {
    std::vector<std::string> parts;
    const std::string machine = describe_differences(base, other, machine_columns());
    const std::vector<std::string> unrecorded = unrecorded_machine_columns(base, other);
    const std::string blas = describe_differences(base, other, blas_columns());
    const std::string build = describe_differences(base, other, build_columns());
    if (!machine.empty()) {
        parts.push_back("different machines (" + machine + ")");
    } else if (!unrecorded.empty()) {
        parts.push_back(fmt::format("machines not known to be the same ({} not in both files: a CSV keeps no cores "
                                    "or caches)",
                                    fmt::join(unrecorded, ", ")));
    }
    if (!blas.empty()) parts.push_back("different BLAS (" + blas + ")");
    if (!build.empty()) parts.push_back("different build settings (" + build + ")");
    const auto commit_a = base.provenance.find("git_commit");
    const auto commit_b = other.provenance.find("git_commit");
    std::string commits;
    if (commit_a != base.provenance.end() && commit_b != other.provenance.end()) {
        commits = fmt::format("commit {} -> {}", commit_a->second, commit_b->second);
    }
    if (parts.empty()) {
        return fmt::format("same machine, BLAS and build settings{}: every metric compares",
                           commits.empty() ? "" : " (" + commits + ")");
    }
    return fmt::format("{}{}: latency and gflops compare the setups as much as the code; flops, bytes and kv_bytes "
                       "still compare exactly, speedup, mha_ratio and roofline_pct only roughly (they depend on the CPU)",
                       fmt::join(parts, "; "), commits.empty() ? "" : " (" + commits + ")");
}

}  // namespace

const char* metric_name(Metric metric) {
    switch (metric) {
    case Metric::latency: return "latency";
    case Metric::speedup: return "speedup";
    case Metric::roofline_pct: return "roofline_pct";
    case Metric::gflops: return "gflops";
    case Metric::mha_ratio: return "mha_ratio";
    }
    return "?";
}

const char* metric_unit(Metric metric) {
    switch (metric) {
    case Metric::latency: return "us";
    case Metric::speedup: return "x";
    case Metric::roofline_pct: return "%";
    case Metric::gflops: return "GFLOP/s";
    case Metric::mha_ratio: return "x";
    }
    return "";
}

bool lower_is_better(Metric metric) { return metric == Metric::latency; }

const char* verdict_name(Verdict verdict) {
    switch (verdict) {
    case Verdict::faster: return "faster";
    case Verdict::same: return "same";
    case Verdict::slower: return "slower";
    case Verdict::regression: return "SLOWER";
    case Verdict::counts_differ: return "COUNTS DIFFER";
    case Verdict::unknown: return "unknown";
    case Verdict::unclear: return "unclear";
    }
    return "?";
}

Comparison compare_results(const ResultFile& base, const ResultFile& other, const CompareOptions& options) {
    // A file without rows has no kind of row to tell: it has no row in common (exit 3), not another kind.
    if (base.key_columns != other.key_columns && !base.rows.empty() && !other.rows.empty()) {
        throw ConfigError(fmt::format("the files describe different kinds of rows: BASE ({}) is keyed by {}, NEW ({}) by {}",
                                      base.kind, fmt::join(base.key_columns, ","), other.kind,
                                      fmt::join(other.key_columns, ",")));
    }
    if (options.metric != Metric::latency && base.kind == "Google Benchmark JSON") {
        throw ConfigError(fmt::format("--metric {}: Google Benchmark files have latency only", metric_name(options.metric)));
    }
    std::map<Key, const ResultEntry*> base_index;
    std::map<Key, const ResultEntry*> other_index;
    for (const ResultEntry& entry : base.rows) base_index[entry.key] = &entry;
    for (const ResultEntry& entry : other.rows) other_index[entry.key] = &entry;

    std::vector<Key> all_keys;
    for (const ResultEntry& entry : base.rows) all_keys.push_back(entry.key);
    for (const ResultEntry& entry : other.rows) all_keys.push_back(entry.key);
    const std::vector<bool> shown = all_keys.empty() ? std::vector<bool>() : shown_columns(base.key_columns, all_keys);
    const auto label = [&](const Key& key) { return label_of(base.key_columns, shown, key); };

    Comparison comparison;
    comparison.metric = options.metric;
    comparison.threshold_pct = options.threshold_pct;
    comparison.alpha = options.alpha;
    comparison.require_interval = options.require_interval;
    comparison.n_base_rows = base.rows.size();
    comparison.provenance_note = provenance_note(base, other);
    double log_sum = 0;
    std::size_t n_logs = 0;
    for (const ResultEntry& entry : base.rows) {
        const auto match = other_index.find(entry.key);
        if (match == other_index.end()) {
            comparison.only_in_base.push_back(label(entry.key));
            continue;
        }
        const std::optional<MetricValues> a = metric_values(base, entry, base_index, options.metric);
        const std::optional<MetricValues> b = metric_values(other, *match->second, other_index, options.metric);
        if (!a || !b) {
            ++comparison.n_without_metric;
            continue;
        }
        ComparedRow row;
        row.label = label(entry.key);
        row.base = *a;
        row.other = *b;
        row.counts_note = counts_difference(entry, *match->second);
        judge(row, options);
        if (row.test == Test::overlap) ++comparison.n_without_samples;
        if (a->median > 0 && b->median > 0) {
            log_sum += std::log(b->median / a->median);
            ++n_logs;
        }
        comparison.rows.push_back(std::move(row));
    }
    for (const ResultEntry& entry : other.rows) {
        if (!base_index.contains(entry.key)) comparison.only_in_new.push_back(label(entry.key));
    }
    if (n_logs > 0) comparison.geomean_ratio = std::exp(log_sum / static_cast<double>(n_logs));
    return comparison;
}

std::vector<std::string> row_labels(const std::vector<std::string>& key_columns, const std::vector<Key>& keys) {
    std::vector<std::string> labels;
    if (keys.empty()) return labels;
    const std::vector<bool> shown = shown_columns(key_columns, keys);
    for (const Key& key : keys) labels.push_back(label_of(key_columns, shown, key));
    return labels;
}

std::vector<std::optional<MetricValues>> metric_of_rows(const ResultFile& file, Metric metric) {
    std::map<Key, const ResultEntry*> index;
    for (const ResultEntry& entry : file.rows) index[entry.key] = &entry;
    std::vector<std::optional<MetricValues>> values;
    for (const ResultEntry& entry : file.rows) values.push_back(metric_values(file, entry, index, metric));
    return values;
}

std::size_t count_verdicts(const Comparison& comparison, Verdict verdict) {
    return static_cast<std::size_t>(std::count_if(comparison.rows.begin(), comparison.rows.end(),
                                                  [&](const ComparedRow& row) { return row.verdict == verdict; }));
}

}  // namespace kvbench
