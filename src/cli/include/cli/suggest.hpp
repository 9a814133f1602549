// "Did you mean --seq?": the closest known name to a mistyped one, or the spelling another tool uses.
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

// Names as a sentence lists them: "a", "a or b", "a, b or c".
std::string or_list(const std::vector<std::string>& names);

// What a mistyped name most likely meant, as the text to follow "did you mean ". A name cut
// short is more likely than a typo, so the candidates that begin with `typed` come first, in
// their order ("h100" -> "h100-sxm or h100-pcie"), when there are at most
// max_prefix_suggestions of them; otherwise closest_name's nearest. Compares case as given.
inline constexpr std::size_t max_prefix_suggestions = 3;
std::optional<std::string> suggest_name(std::string_view typed, const std::vector<std::string>& candidates);

// What an unknown option most likely meant, as the text to follow "did you mean ": `known` are
// the options of `command` ("sweep", "generate", ..., "" at the top level), spelled "-n" and "--seq".
// In order: another tool's spelling whose intent is clear ("--csv" -> "--format csv", sweep's
// "-p" -> "-n (context length)", hyperfine's "--runs" -> "--reps"), the same letters in another
// case or with other dashes ("-L" -> "-l", "-seq" -> "--seq"), suggest_name's long names. A short
// option is never matched by distance: every letter is one edit from every other.
std::optional<std::string> suggest_option(std::string_view typed, std::string_view command,
                                          const std::vector<std::string>& known);

// What an unknown subcommand most likely meant: "run" and "bench" -> "sweep", or suggest_name's.
std::optional<std::string> suggest_command(std::string_view typed, const std::vector<std::string>& known);

}  // namespace kvbench
