// trim(): a line of /proc or /sys without its surrounding blanks. Private to src/measure
// (environment.cpp, cpu_model.cpp).
#pragma once

#include <string>
#include <string_view>

namespace kvbench {

inline std::string trim(std::string_view text) {
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) return {};
    const auto last = text.find_last_not_of(" \t\r\n");
    return std::string(text.substr(first, last - first + 1));
}

}  // namespace kvbench
