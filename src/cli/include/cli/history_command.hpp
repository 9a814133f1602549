// `kvbench history`: a metric of chosen points across the commits and machines of a results database.
#pragma once

#include "cli/output_options.hpp"

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace kvbench {

struct HistoryCliOptions {
    std::optional<std::string> db;        // --db; unset: $KVBENCH_DB
    std::optional<std::string> seq;       // the point filters: sweep's axes, as lists
    std::optional<std::string> batch;
    std::optional<std::string> dim;
    std::optional<std::string> heads;
    std::optional<std::string> kv_heads;
    std::optional<std::string> layers;
    std::optional<std::string> threads;
    std::optional<std::string> kv_dtype;
    std::optional<std::string> cache_state;
    std::string paths = "both";
    std::string metric = "latency";
    std::vector<std::string> commits;     // --commit, repeatable or comma-separated
    std::vector<std::string> machines;    // --machine, repeatable or comma-separated
    OutputCliOptions out;                 // -o, -f (table, csv, json), --export, -q
};

CLI::App* add_history_command(CLI::App& app, HistoryCliOptions& options);

// Prints the history (or writes it to -o). Returns 0; throws ConfigError on bad input (no
// database, a bad filter) and std::runtime_error when a file cannot be written.
int run_history_command(const HistoryCliOptions& options);

}  // namespace kvbench
