// CLI11's parse errors in kvbench's words: one line naming the option and the rule, with a
// suggestion for a typo, so no parser text reaches the user.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace kvbench {

// The message for `error` raised while parsing `app` (its subcommands included), without the
// "kvbench: error: " prefix and the --help hint, which the caller adds.
std::string describe_parse_error(const CLI::App& app, const CLI::ParseError& error);

}  // namespace kvbench
