// `kvbench compare BASE NEW`: two result files row by row, with a verdict per row and an exit status for CI.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace kvbench {

struct CompareCliOptions {
    std::string base_path;          // BASE
    std::string new_path;           // NEW
    std::string threshold = "5%";   // --threshold
    std::string metric = "latency"; // --metric
    std::string format = "table";   // --format
    std::string fail_on = "slower"; // --fail-on
    double alpha = 0.05;            // --alpha
};

// Registers the `compare` subcommand and its options, filling options on parse.
CLI::App* add_compare_command(CLI::App& app, CompareCliOptions& options);

// Prints the comparison to stdout. Returns 1 when the gate fails (a row slower than the
// threshold, or other counts; only the counts with --fail-on counts), 0 otherwise.
// Throws ConfigError on bad input (unreadable files, not result files, a bad threshold).
int run_compare_command(const CompareCliOptions& options);

}  // namespace kvbench
