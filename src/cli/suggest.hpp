// "Did you mean --seq?": the closest known name to a mistyped one.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvbench {

// Edit distance: insertions, deletions, substitutions and swaps of adjacent characters each cost 1.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `typed`, if it is near enough to be a typo
// (distance at most a third of the longer name, and at least 1 edit allowed).
std::optional<std::string> closest_name(std::string_view typed, const std::vector<std::string>& candidates);

}  // namespace kvbench
