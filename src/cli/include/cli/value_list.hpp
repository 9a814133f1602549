// Parses option values: a sweep axis ("1,4,16", "128-4096*2", "64-256+64", "1K-32K*2" or a mix),
// one whole number (--reps 20), a parameter count (--params 8B) or one word of a set
// (--cache-state warm), with one message per broken rule.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvbench {

// Most values one list may expand to: a guard against typos like 1-1000000.
inline constexpr std::size_t max_value_list_size = 10000;

// Values in the order written, duplicates removed (first kept). Ranges are
// inclusive of their start and of their end when the step lands on it. Every number
// may end in a binary suffix: K, k or Ki = 1024, M/m/Mi = 1024^2, G/g/Gi = 1024^3
// ("4K" = 4096, as a "4K context" is; the same K as --max-memory's).
// Throws ConfigError naming `option` and the offending text on: an empty item,
// a non-number, zero or a negative value, a value above `max_value`, a range
// whose end is below its start, a geometric factor below 2, an arithmetic step of 0,
// or more than max_value_list_size values, an unknown suffix. "-5" is read as a negative
// number, not a range.
std::vector<std::size_t> parse_value_list(std::string_view text, std::string_view option,
                                          std::size_t max_value = std::size_t{1} << 30);

// What a list with a long step-1 range most likely meant: `text` with each plain range of more
// than 16 values made geometric ("128-4096" -> "128-4096*2"). Nothing when it has no such range
// (or does not parse).
std::optional<std::string> likely_geometric_list(std::string_view text);

// One whole number that may carry the suffixes of parse_value_list ("512", "4K"), in
// [min_value, max_value]. Throws ConfigError as parse_value_list does, and on a list or range.
std::size_t parse_count(std::string_view text, std::string_view option, std::size_t min_value,
                        std::size_t max_value);

// The word of `choices` that `text` names, in any case ("Warm" is "warm"). Throws ConfigError
// with not_a_choice_message.
std::string parse_choice(std::string_view text, std::string_view option, const std::vector<std::string>& choices);

// The error line for a `text` that is none of `choices`: the option, the text, the choices, and
// suggest_name's guess when it has one. Shared with the options CLI11 checks, so that every
// choice is refused in the same words (--metric: "lat" is not one of ... (did you mean latency?)).
std::string not_a_choice_message(std::string_view text, std::string_view option,
                                 const std::vector<std::string>& choices);

// One whole number in [min_value, max_value], digits only. Throws ConfigError naming `option`
// and the text on: nothing, a non-number (1.5, abc, 0x10, +4), a negative number, or a value
// outside the range (one too big for 64 bits included).
std::uint64_t parse_whole_number(std::string_view text, std::string_view option, std::uint64_t min_value,
                                 std::uint64_t max_value);

// A parameter count as models are named: digits, optionally a decimal fraction, and a
// decimal suffix in any case: K = 10^3, M = 10^6, B = 10^9, T = 10^12 ("8B", "7.2B", "500M",
// "1.5T", or "8030261248"), in [min_value, max_value]. Throws ConfigError naming `option` and
// the text on: nothing, a non-number, an unknown suffix, a fraction without a suffix or one
// that leaves a fraction of a parameter, zero, or a value outside the range.
std::uint64_t parse_parameter_count(std::string_view text, std::string_view option, std::uint64_t min_value,
                                    std::uint64_t max_value);

}  // namespace kvbench
