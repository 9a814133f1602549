// Parses a sweep axis: "1,4,16", "128-4096*2", "64-256+64" or a mix of them.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace kvbench {

// Most values one list may expand to: a guard against typos like 1-1000000.
inline constexpr std::size_t max_value_list_size = 10000;

// Values in the order written, duplicates removed (first kept). Ranges are
// inclusive of their start and of their end when the step lands on it.
// Throws ConfigError naming `option` and the offending text on: an empty item,
// a non-number, zero or a negative value, a value above `max_value`, a range
// whose end is below its start, a geometric factor below 2, an arithmetic step of 0,
// or more than max_value_list_size values. "-5" is read as a negative number, not a range.
std::vector<std::size_t> parse_value_list(std::string_view text, std::string_view option,
                                          std::size_t max_value = std::size_t{1} << 30);

}  // namespace kvbench
