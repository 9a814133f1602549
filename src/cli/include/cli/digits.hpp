// Reading digits and letters of an option's value: ASCII only, independent of the locale, and
// whole numbers exactly to 64 bits (what value lists, sizes and rates share).
#pragma once

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string_view>

namespace kvbench {

constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }
constexpr bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline bool all_digits(std::string_view text) { return !text.empty() && std::all_of(text.begin(), text.end(), is_digit); }

// The digits of `text` as a number, or nothing when they do not fit in 64 bits.
// Requires: all_digits(text).
inline std::optional<std::uint64_t> to_uint64(std::string_view text) {
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc{} || end != text.data() + text.size()) return std::nullopt;
    return value;
}

}  // namespace kvbench
