// `kvbench models`: the model presets, with their shapes, parameters, grouping and window.
#pragma once

#include "cli/output_options.hpp"

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace kvbench {

struct ModelsCliOptions {
    std::optional<std::string> presets;  // --presets FILE; unset: the built-in presets
    OutputCliOptions out;  // -o, -f, --export, -q, -v (output_options.hpp)
};

CLI::App* add_models_command(CLI::App& app, ModelsCliOptions& options);

// Lists the presets. Throws ConfigError naming the file, model and field of a broken preset. Returns 0.
int run_models_command(const ModelsCliOptions& options);

}  // namespace kvbench
