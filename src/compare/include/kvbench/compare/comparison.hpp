// Two result files matched row by row on one metric, each pair with a verdict: faster, slower or the same within noise.
#pragma once

#include "kvbench/compare/result_file.hpp"

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
    Verdict verdict = Verdict::same;
    std::string counts_note;  // which exact count differs, e.g. "flops 100 -> 120"
};

struct CompareOptions {
    Metric metric = Metric::latency;
    double threshold_pct = 5;
    double alpha = 0.05;
};

struct Comparison {
    Metric metric = Metric::latency;
    double threshold_pct = 5;
    double alpha = 0.05;
    std::string provenance_note;  // first line of every format: same machine or not, and what still compares
    std::vector<ComparedRow> rows;
    std::vector<std::string> only_in_base;
    std::vector<std::string> only_in_new;
    std::size_t n_without_metric = 0;  // matched rows the metric does not apply to (speedup of uncached rows)
    std::optional<double> geomean_ratio;  // geometric mean of new / base over the compared rows
};

// Matches rows by their key columns. Throws ConfigError when the files cannot be matched
// (different key columns: a sweep against a generate report), or the metric needs columns
// the files do not have (gflops of a Google Benchmark file).
Comparison compare_results(const ResultFile& base, const ResultFile& other, const CompareOptions& options);

std::size_t count_verdicts(const Comparison& comparison, Verdict verdict);

}  // namespace kvbench
