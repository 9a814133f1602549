// `kvbench roofline`: measures the machine's peak read bandwidth and sgemm rate and saves them for later runs.
#pragma once

#include <CLI/CLI.hpp>

#include <cstddef>
#include <optional>
#include <string>

namespace kvbench {

struct RooflineCliOptions {
    std::size_t n_threads = 0;          // --threads; add_roofline_command sets it to available_cores()
    std::optional<std::string> output;  // -o/--output; unset means default_roofline_path(n_threads)
    std::size_t n_reps = 5;             // --reps
    std::size_t buffer_mib = 0;         // --buffer-mib; 0 means probe_bytes()
    std::size_t sgemm_dim = 3072;       // --sgemm-dim
};

// Registers the `roofline` subcommand and its options, filling options on parse.
CLI::App* add_roofline_command(CLI::App& app, RooflineCliOptions& options);

// Measures on options.n_threads threads, prints a summary to stdout, saves the JSON.
// Creates the default directory when no --output was given. Throws on failure.
// Returns 0.
int run_roofline_command(const RooflineCliOptions& options);

}  // namespace kvbench
