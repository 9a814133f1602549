// CLI11's parse errors in kvbench's words: one line naming the option and the rule, with a
// suggestion for a typo, so no parser text reaches the user.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace kvbench {

// The message for `error` raised while parsing `args` (argv less the program) with `app` (its
// subcommands included), without the "kvbench: error: " prefix and the --help hint, which the
// caller adds. `args` tells a stray word after an option's value (-n 128 256) from one after
// the command (kvbench hardware extra).
std::string describe_parse_error(const CLI::App& app, const CLI::ParseError& error,
                                 const std::vector<std::string>& args);

// An error's text without the JSON library's tags ("[json.exception.parse_error.101] "): what
// follows them names the position ("parse error at line 1, column 9: ..."), and the message
// around them the file. Every error main prints goes through it.
std::string without_library_tags(std::string message);

}  // namespace kvbench
