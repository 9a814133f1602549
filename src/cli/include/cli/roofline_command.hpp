// `kvbench roofline`: measures the machine's peak read bandwidth and sgemm rate and saves them for later runs.
#pragma once

#include <CLI/CLI.hpp>

#include <cstddef>
#include <optional>
#include <string>

namespace kvbench {

// What the user typed; run_roofline_command parses it, so errors name the flag in kvbench's words.
struct RooflineCliOptions {
    std::optional<std::string> threads;  // --threads, a list as sweep's; unset: default_thread_count()
    std::optional<std::string> output;   // -o/--output; unset means default_roofline_path(n_threads)
    std::string n_reps = "5";            // --reps
    std::string buffer_mib = "0";        // --buffer-mib; 0 means probe_bytes()
    std::string sgemm_dim = "3072";      // --sgemm-dim
    bool dry_run = false;                // --dry-run: say what would be measured and where it goes
};

// Registers the `roofline` subcommand and its options, filling options on parse.
CLI::App* add_roofline_command(CLI::App& app, RooflineCliOptions& options);

// Measures on each thread count of --threads, prints a summary to stdout, saves one JSON each.
// Creates the default directory when no --output was given. Throws ConfigError on bad
// options (before measuring anything), another exception on failure. Returns 0.
int run_roofline_command(const RooflineCliOptions& options);

}  // namespace kvbench
