// `kvbench models`: the model presets, with their shapes, parameters, grouping and window.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace kvbench {

struct ModelsCliOptions {
    std::optional<std::string> presets;  // --presets FILE; unset: the built-in presets
    std::string format = "table";
    std::optional<std::string> output;
};

CLI::App* add_models_command(CLI::App& app, ModelsCliOptions& options);

// Lists the presets. Throws ConfigError naming the file, model and field of a broken preset. Returns 0.
int run_models_command(const ModelsCliOptions& options);

}  // namespace kvbench
