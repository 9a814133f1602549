// `kvbench help [COMMAND]`: the help of kvbench or of one command, as `--help` prints it.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace kvbench {

// Registers `help` on `app`; `topic` receives the command named after it, if any.
CLI::App* add_help_command(CLI::App& app, std::string& topic);

// Prints the help of `topic` (one of app's commands), or kvbench's own when it is empty. Throws
// ConfigError, with a suggestion, for a command that does not exist.
int run_help_command(const CLI::App& app, const std::string& topic);

}  // namespace kvbench
