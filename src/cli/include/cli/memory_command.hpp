// `kvbench memory`: the KV cache's memory bill for real models, and what fits in a budget.
#pragma once

#include "cli/output_options.hpp"

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace kvbench {

// What the user typed; lists and sizes stay text until run_memory_command parses them, so their
// errors name the flag.
struct MemoryCliOptions {
    std::vector<std::string> models;         // --model, comma-separated preset names
    std::vector<std::string> model_configs;  // --model-config FILE, repeatable
    std::optional<std::string> presets;      // --presets FILE; unset: the built-in presets
    std::string seq = "4096";
    std::string batch = "1";
    std::vector<std::string> kv_dtypes{"f16"};
    std::string weight_dtype = "f16";
    std::optional<std::string> params;       // --params: parameters of --model-config models
    std::optional<std::string> budget;       // e.g. "80GiB"
    std::optional<std::string> window;       // N or "none"; unset: each model's own
    std::string block_size = "1";
    std::optional<std::string> shared_prefix;  // --shared-prefix: positions or percentages of N
    bool no_twins = false;
    OutputCliOptions out;  // -o, -f, --export, -q, -v (output_options.hpp)
};

CLI::App* add_memory_command(CLI::App& app, MemoryCliOptions& options);

// Plans every model, KV dtype, grouping, context and batch and writes the sheet. Throws
// ConfigError naming the flag on bad input, before writing anything. Returns 0.
int run_memory_command(const MemoryCliOptions& options);

}  // namespace kvbench
