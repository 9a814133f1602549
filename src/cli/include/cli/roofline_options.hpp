// --roofline, --measure-roofline and --no-roofline: where a run's roofline comes from, the same
// three choices for sweep and generate.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace kvbench {

// Registers the three options on `command`, bound to the command's own fields. `without_file`
// says where the roofline comes from when none of them is given; `none_turns_off`, what
// --no-roofline gives up, which differs because only a sweep measures a missing roofline.
void add_roofline_options(CLI::App& command, std::optional<std::string>& file, bool& measure, bool& none,
                          const std::string& without_file, const std::string& none_turns_off);

}  // namespace kvbench
