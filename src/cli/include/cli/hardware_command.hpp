// `kvbench hardware`: the hardware profiles that --hardware names, with their figures.
#pragma once

#include "cli/output_options.hpp"

#include <CLI/CLI.hpp>

namespace kvbench {

struct HardwareCliOptions {
    OutputCliOptions out;  // -o, -f, --export, -q, -v (output_options.hpp)
};

CLI::App* add_hardware_command(CLI::App& app, HardwareCliOptions& options);

// Lists the built-in profiles. Returns 0.
int run_hardware_command(const HardwareCliOptions& options);

}  // namespace kvbench
