// kvbench merge (docs/sharding.md#merge): the runs of shard reports or databases joined into one report, when they belong together.
#pragma once

#include "kvbench/report/database.hpp"
#include "kvbench/report/report.hpp"
#include "kvbench/report/schema.hpp"

#include <cstddef>
#include <filesystem>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace kvbench {

// One run of a merge: a report file is one run; a results database gives each of its runs.
struct MergeRun {
    std::string source;               // the file, or "FILE run 3" for a database's run
    RunRecord record;                 // a database run keeps its key; a file's run gets a new one
    std::vector<ReportCellRow> rows;  // by current column name; a CSV's and JSON Lines' carry their provenance
    std::size_t cut_line = 0;         // a JSON Lines shard's last line, cut short and dropped, or 0
};

// Every run of `path`: a results database (told by its first bytes) or a kvbench CSV, JSON or
// JSON Lines report (told by its text, as compare tells it). Throws ConfigError naming the file
// when it cannot be read or is not kvbench's.
std::vector<MergeRun> read_merge_input(const std::filesystem::path& path);

// Runs that belong together, their rows in one order.
struct MergedReport {
    std::vector<MergeRun> runs;
    std::vector<std::pair<std::size_t, std::size_t>> order;  // (run, row) in configuration order
    std::vector<std::string> warnings;  // a shard's last line cut; different machine classes; shards missing
};

// Checks that `runs` are shards of one grid and orders their rows by configuration (D, H, dh, G
// descending so MHA leads as in the default grid, L, B, N, T, kv_dtype, then generate's prompt,
// new tokens; the path, cached first; the step). Throws ConfigError when they measured different
// commands (a sweep and a generation), come from different builds (tool_version, git_commit,
// build_type, compiler), ran with different settings (reps_policy, seed, warmup, cache_state),
// hold one configuration twice, or are shards of different counts or the same shard twice.
// A JSON Lines shard's last line cut short (left out), machines of different classes
// (machine_class, CPU model) and shards missing are warnings.
MergedReport merge_runs(std::vector<MergeRun> runs);

// The merged rows as one report: csv, json, jsonl or sql. Each CSV and JSON Lines row carries its
// own run's provenance; a JSON report's environment is the first run's, and a row of another
// run adds the provenance fields that differ from it. Requires: one of those four formats.
void write_merged(std::ostream& out, OutputFormat format, const MergedReport& merged);

// Adds each run to the database at `path` (created if missing), one transaction per run; a run
// the database already holds (its key) is skipped and named in `skipped`. Returns the runs added.
// Throws std::runtime_error when the database cannot be written.
std::size_t add_merged_runs(const std::filesystem::path& path, const MergedReport& merged,
                            std::vector<std::string>& skipped);

}  // namespace kvbench
