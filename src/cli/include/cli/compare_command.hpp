// `kvbench compare BASE NEW`: two result files row by row, with a verdict per row and an exit status for CI.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace kvbench {

struct CompareCliOptions {
    std::string base_path;          // BASE: a result file, or runs of --db (run:12, commit:abc123, machine:epyc)
    std::string new_path;           // NEW: the same
    std::string threshold = "5%";   // --threshold
    std::string metric = "latency"; // --metric
    std::string format = "table";   // --format
    std::string fail_on = "slower"; // --fail-on
    double alpha = 0.05;            // --alpha
    std::optional<std::string> db;  // --db: the results database BASE and NEW may name runs of; unset: $KVBENCH_DB
    bool allow_missing = false;     // --allow-missing: rows of BASE missing from NEW are listed, not a failure
    bool require_interval = false;  // --require-interval: SLOWER only when the whole interval is beyond the threshold
};

// "5%" or "5" (percent), "0.05%"; a bare number between 0 and 1 is refused as ambiguous (a
// fraction, or a percentage?). Throws ConfigError naming --threshold.
double parse_threshold(const std::string& text);

// Registers the `compare` subcommand and its options, filling options on parse.
CLI::App* add_compare_command(CLI::App& app, CompareCliOptions& options);

// Prints the comparison to stdout. Returns 1 when the gate fails (a row slower than the
// threshold, or other counts; only the counts with --fail-on counts); else 3 when NEW does not
// cover BASE (no row in common, or BASE rows missing from NEW without --allow-missing); else 0.
// Throws ConfigError on bad input (unreadable files, not result files, a bad threshold).
int run_compare_command(const CompareCliOptions& options);

}  // namespace kvbench
