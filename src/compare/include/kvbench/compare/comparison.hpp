// Two result files matched row by row on one metric, each pair with a verdict: faster, slower or the same within noise.
#pragma once

#include "kvbench/compare/result_file.hpp"
#include "kvbench/compare/shift_interval.hpp"

#include <optional>
#include <string>
#include <vector>

namespace kvbench {

// latency is a row's own time; the others are machine-independent ratios (speedup,
// mha_ratio, roofline_pct) or a rate (gflops). docs/compare.md#metrics defines each.
enum class Metric { latency, speedup, roofline_pct, gflops, mha_ratio };

const char* metric_name(Metric metric);
const char* metric_unit(Metric metric);
bool lower_is_better(Metric metric);

enum class Verdict {
    faster,        // significantly better (p < alpha, or ranges apart)
    same,          // within noise
    slower,        // significantly worse, by no more than the threshold
    regression,    // significantly worse by more than the threshold: fails the gate
    counts_differ, // flops, bytes or kv_bytes differ: the two rows did not do the same work
    unknown,       // a side has one sample and no spread: no way to tell noise from change
    unclear,       // no samples (CSV): the ranges overlap, yet the medians differ by more than the threshold
};

const char* verdict_name(Verdict verdict);

// A row's metric as a distribution: its median, range and per-repetition values.
struct MetricValues {
    double median = 0;
    double min = 0;
    double max = 0;
    std::size_t reps = 0;
    std::vector<double> samples;  // one per repetition, when the file keeps them
};

enum class Test { u_test, overlap, none };

struct ComparedRow {
    std::string label;
    MetricValues base;
    MetricValues other;
    double change_pct = 0;  // (new − base) / base, in percent of the metric
    Test test = Test::none;
    std::optional<double> p_value;  // the U test's
    // The Hodges–Lehmann shift new − base with its (1 − alpha) interval, in the metric's unit;
    // with samples on both sides only.
    std::optional<ShiftInterval> shift;
    Verdict verdict = Verdict::same;
    std::string counts_note;  // which exact count differs, e.g. "flops 100 -> 120"

    // A shift in percent of BASE's median.
    double percent_of_base(double value) const { return base.median != 0 ? 100 * value / base.median : 0; }
};

struct CompareOptions {
    Metric metric = Metric::latency;
    double threshold_pct = 5;
    double alpha = 0.05;
    // A row fails (SLOWER) only when its whole interval is worse by more than the threshold: the
    // change exceeds the threshold with 1 − alpha confidence (docs/compare.md#the-interval-as-the-gate).
    bool require_interval = false;
};

struct Comparison {
    Metric metric = Metric::latency;
    double threshold_pct = 5;
    double alpha = 0.05;
    bool require_interval = false;
    std::string provenance_note;  // first line of every format: same machine or not, and what still compares
    std::vector<ComparedRow> rows;
    std::vector<std::string> only_in_base;
    std::vector<std::string> only_in_new;
    std::size_t n_without_metric = 0;  // matched rows the metric does not apply to (speedup of uncached rows)
    std::size_t n_without_samples = 0; // compared rows judged by their ranges: a side keeps no samples (CSV)
    std::size_t n_base_rows = 0;       // BASE's rows, matched or not
    std::optional<double> geomean_ratio;  // geometric mean of new / base over the compared rows
};

// Matches rows by their key columns. Throws ConfigError when the files cannot be matched
// (different key columns: a sweep against a generate report), or the metric needs columns
// the files do not have (gflops of a Google Benchmark file).
Comparison compare_results(const ResultFile& base, const ResultFile& other, const CompareOptions& options);

std::size_t count_verdicts(const Comparison& comparison, Verdict verdict);

// The label of each key, as the comparison names rows: path, B, N, D, H, G always, the other key
// columns where they vary among `keys` ("cached B=1 N=1024 D=1024 H=16 G=4").
std::vector<std::string> row_labels(const std::vector<std::string>& key_columns,
                                    const std::vector<std::vector<std::string>>& keys);

// The metric of each row of `file` (std::nullopt where it does not apply, docs/compare.md#metrics).
std::vector<std::optional<MetricValues>> metric_of_rows(const ResultFile& file, Metric metric);

}  // namespace kvbench
