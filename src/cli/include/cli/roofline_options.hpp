// --roofline, --measure-roofline and --no-roofline: where a run's roofline comes from, the same
// three choices for sweep and generate.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace kvbench {

// Registers the three options on `command`, bound to the command's own fields. `without_file`
// says where the roofline comes from when none of them is given.
void add_roofline_options(CLI::App& command, std::optional<std::string>& file, bool& measure, bool& none,
                          const std::string& without_file);

}  // namespace kvbench
