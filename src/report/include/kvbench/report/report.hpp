// ResultRow: everything one measured (point, path) reports, built in one place; the writers for every format.
// Writers only format: every figure they print is already in the ResultRow or the Environment.
#pragma once

#include "kvbench/engine/config.hpp"
#include "kvbench/engine/cost_model.hpp"
#include "kvbench/measure/environment.hpp"
#include "kvbench/measure/roofline.hpp"
#include "kvbench/measure/runner.hpp"
#include "kvbench/measure/stats.hpp"
#include "kvbench/measure/sweep.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace kvbench {

struct ResultRow {
    DecodePath path = DecodePath::cached;
    ModelConfig config;
    std::size_t n_threads = 1;
    std::string kv_dtype = "f32";
    std::string cache_state = "cold";           // "cold" or "warm" (docs/measuring.md)
    StepCost cost;                              // docs/counting.md, exact
    Stats stats;                                // of samples_ns
    std::vector<std::int64_t> samples_ns;       // every timed repetition, in order; empty when read back from a CSV
    double gflops = 0;                          // cost.flops / median_s / 1e9
    double gbps = 0;                            // cost.bytes / median_s / 1e9
    std::optional<double> roofline_pct;         // empty when no roofline was measured
    std::optional<double> speedup;              // uncached median / this median; empty without uncached
    std::optional<double> verify_rel_error;     // the equivalence check (docs/model.md), when --verify ran
    // Cached rows of a reduced kv_dtype: the step's relative error against the same step over
    // an f32 cache of the same values (docs/model.md, "KV-cache element types").
    std::optional<double> kv_rel_error;
    // Rows of reduced weights (cached): the step against the same step with the f32 weights they
    // were converted from, over the same cache (docs/model.md, "Weight element types").
    std::optional<double> weight_rel_error;
    // Routed experts the step read, summed over its layers (its seeded router's choice, which
    // cost.bytes counts); empty without experts.
    std::optional<std::uint64_t> experts_read;
    bool fits_in_llc = false;                   // working set below the last-level cache
    // FLOPs the kernels executed in one step: flops plus the masked products that diagonal
    // tiles of the uncached attention compute anyway. Empty when not measured.
    std::optional<std::uint64_t> flops_executed;
    // The median's 95 % interval is wider than ±3 % of it (is_noisy): it may move on a re-run.
    bool noisy = false;
    // The median took slow_factor or more times the time this machine allows (is_slow): a busy,
    // oversubscribed or throttled machine, which a steady CV does not reveal.
    bool slow = false;
    std::string reps_policy;                    // describe_reps_policy() of the options it ran with
    // What a rerun needs beyond the configuration (docs/csv.md#reproducibility-columns).
    std::uint64_t seed = 1;                     // of the weights and inputs
    std::size_t n_warmup = 0;                   // warm-up repetitions asked for (at most, with --min-time)
    std::optional<double> roofline_peak_gflops; // the roofline behind roofline_pct; empty without one
    std::optional<double> roofline_peak_gbps;
    std::string roofline_source = "none";       // Roofline::source, or "none"
    // The provenance cells of a row another run measured (environment_columns() by name,
    // schema_version aside): --resume keeps a row with the timestamp, command line, shard and
    // build it was measured with. Empty for a row this run measured: the writers give it the run's.
    std::map<std::string, std::string> provenance;
};

// The one place a row is built: from the point, its measurement, the options it ran with
// (cache state), the machine's roofline (nullptr: none) and environment (LLC size). One row
// per measured path, cached first; the cached row's speedup is the same point's uncached
// median over its own. An uncached row is an f32 row whatever the point's kv_dtype (its K and
// V are f32 activations). Requires: every measured path has at least one sample.
std::vector<ResultRow> make_result_rows(const GridPoint& point, const PointMeasurement& measured,
                                        const RunOptions& options, const Roofline* roofline,
                                        const Environment& env);

// The configuration an uncached row names: the point's, with f32 K and V and no blocks (the
// forward keeps no cache); its shared prefix stays, as the point's.
ModelConfig uncached_row_config(const ModelConfig& config);

// One row of one measured path whose cost is given (make_result_rows passes step_cost; a
// generation's prefill step costs a full forward whatever the path). Leaves speedup empty.
// Requires: measured has at least one sample.
ResultRow make_result_row(DecodePath path, const GridPoint& point, const PathMeasurement& measured,
                          const StepCost& cost, const RunOptions& options, const Roofline* roofline,
                          const Environment& env, std::optional<double> verify_rel_error);

// Whether a row beats its roofline where nothing explains it: roofline_pct above 100, unless a
// warm step's working set fits in the last-level cache (then it may beat DRAM bandwidth). The
// roofline is then lower than the machine: a quick one, or one measured while it was busy.
bool above_roofline(const ResultRow& row);

// The marks of a row that its figures may mislead, space-separated in this order: "noisy",
// "slow", "above_roofline" (the flags column; data/report_schema.json lists the words). Empty
// when none applies.
std::string row_flags(const ResultRow& row);

// Fills the speedup of cached rows whose point left the uncached path to another kv_dtype
// (GridPoint::times_uncached) from the uncached row of the same configuration, if present.
void fill_speedups_across_kv_dtypes(std::vector<ResultRow>& rows);

// docs/csv.md's columns in order, then the extra ones. The single source of the CSV header.
const std::vector<std::string>& csv_columns();

// jsonl: one JSON object per row and line, each line complete in itself (docs/csv.md#jsonl).
// sql: a script of SQL statements that adds the run to a results database; sqlite: the database
// file itself, to which the run is added (docs/database.md).
enum class OutputFormat { table, csv, json, jsonl, md, sql, sqlite };

void write_table(std::ostream& out, const std::vector<ResultRow>& rows, const Environment& env);
void write_csv(std::ostream& out, const std::vector<ResultRow>& rows, const Environment& env);
// RFC 4180: a field holding a comma, quote, CR or LF is quoted, its quotes doubled.
std::string csv_quote_field(std::string_view field);
void write_json(std::ostream& out, const std::vector<ResultRow>& rows, const Environment& env);
void write_markdown(std::ostream& out, const std::vector<ResultRow>& rows, const Environment& env);
void write_jsonl(std::ostream& out, const std::vector<ResultRow>& rows, const Environment& env);
void write_report(std::ostream& out, OutputFormat format, const std::vector<ResultRow>& rows,
                  const Environment& env);

// Writes the whole report to a temporary file beside `path`, then renames it
// over `path`: the file is complete or absent, never partial. Throws
// std::runtime_error naming the path when it cannot.
void write_report_file(const std::filesystem::path& path, OutputFormat format,
                       const std::vector<ResultRow>& rows, const Environment& env);

}  // namespace kvbench
