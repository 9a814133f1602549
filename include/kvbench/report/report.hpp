// Row = config + cost + stats of one measured point; the writers for every output format.
// Writers only format: every figure they print is already in the Row or the Environment.
#pragma once

#include "kvbench/engine/config.hpp"
#include "kvbench/engine/cost_model.hpp"
#include "kvbench/measure/environment.hpp"
#include "kvbench/measure/stats.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace kvbench {

struct Row {
    DecodePath path = DecodePath::cached;
    ModelConfig config;
    std::size_t n_threads = 1;
    std::string kv_dtype = "f32";
    std::string cache_state = "cold";           // "cold" or "warm" (SPEC §3)
    StepCost cost;                              // SPEC §2, exact
    Stats stats;                                // of samples_ns
    std::vector<std::int64_t> samples_ns;       // every timed repetition, in order
    double gflops = 0;                          // cost.flops / median_s / 1e9
    double gbps = 0;                            // cost.bytes / median_s / 1e9
    std::optional<double> roofline_pct;         // empty when no roofline was measured
    std::optional<double> speedup;              // uncached median / this median; empty without uncached
    std::optional<double> verify_rel_error;     // SPEC §1 check, when --verify ran
    bool fits_in_llc = false;                   // working set below the last-level cache
    // FLOPs the kernels executed in one step: flops plus the masked products that diagonal
    // tiles of the uncached attention compute anyway. Empty when not measured.
    std::optional<std::uint64_t> flops_executed;
};

// Fills the derived fields (cost, stats, gflops, gbps) from the config and samples;
// roofline_pct, speedup, verify_rel_error and fits_in_llc are left for the caller.
// Requires: samples_ns not empty.
Row make_row(DecodePath path, const ModelConfig& config, std::size_t n_threads,
             std::string cache_state, std::vector<std::int64_t> samples_ns);

// Sets each row's speedup to the uncached median of the same configuration (same
// ModelConfig, threads, kv_dtype and cache_state) over the row's own median; leaves
// it empty where that configuration has no uncached row.
void assign_speedups(std::vector<Row>& rows);

// SPEC §4's columns in order, then the extra ones. The single source of the CSV header.
const std::vector<std::string>& csv_columns();

enum class OutputFormat { table, csv, json, md };

void write_table(std::ostream& out, const std::vector<Row>& rows, const Environment& env);
void write_csv(std::ostream& out, const std::vector<Row>& rows, const Environment& env);
void write_json(std::ostream& out, const std::vector<Row>& rows, const Environment& env);
void write_markdown(std::ostream& out, const std::vector<Row>& rows, const Environment& env);
void write_report(std::ostream& out, OutputFormat format, const std::vector<Row>& rows,
                  const Environment& env);

// Writes the whole report to a temporary file beside `path`, then renames it
// over `path`: the file is complete or absent, never partial. Throws
// std::runtime_error naming the path when it cannot.
void write_report_file(const std::filesystem::path& path, OutputFormat format,
                       const std::vector<Row>& rows, const Environment& env);

}  // namespace kvbench
