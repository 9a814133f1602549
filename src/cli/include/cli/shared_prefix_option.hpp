// --shared-prefix of `sweep` (docs/model.md, "Shared prefixes"): the positions the batch's
// sequences share, a system prompt, as an axis.
#pragma once

#include "kvbench/engine/shared_prefix_length.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvbench {

// Registers --shared-prefix on `command`, writing what the user typed into `text`. Its
// percentages are of `whole`: each point's shortest context in `sweep`, the shortest prompt in
// `generate`.
void add_shared_prefix_option(CLI::App& command, std::optional<std::string>& text, std::string_view whole);

// "0,2048,50%": each value P positions, or a whole percentage of each point's shortest context
// (0 to 99).
// Throws ConfigError naming --shared-prefix and the value for an empty value, a value that is
// not a whole number from 0 to 2^30, or a percentage above 99 (whether P fits each N is validate()'s).
std::vector<SharedPrefixLength> parse_shared_prefixes(const std::string& text);

// Throws ConfigError naming --shared-prefix and --seq unless `positions` is less than every
// context of `seqs`, so that each sequence holds the prefix and its own tokens after it
// (`memory` and `plan`, whose contexts are a list). Requires: seqs not empty.
void require_prefix_below_every_seq(std::uint64_t positions, const std::vector<std::uint64_t>& seqs);

}  // namespace kvbench
