// `kvbench merge`: the reports of a grid's shards (files or databases) joined into one report.
#pragma once

#include "cli/output_options.hpp"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace kvbench {

struct MergeCliOptions {
    std::vector<std::string> inputs;  // INPUT...: csv, json or jsonl reports, or results databases
    OutputCliOptions out;             // -o (csv, json, jsonl, sql, sqlite), -f, --export, -q
};

CLI::App* add_merge_command(CLI::App& app, MergeCliOptions& options);

// Writes the merged report. Returns 0, or 1 when a file could not be written; throws
// ConfigError when the inputs do not belong together (merge.hpp says which cases).
int run_merge_command(const MergeCliOptions& options);

}  // namespace kvbench
