// Reading a word in any case (INT8, H100-SXM, Llama-3-8B): ASCII letters only, as the names the
// tool knows are ASCII, and independent of the process's locale.
#pragma once

#include <string>
#include <string_view>

namespace kvbench {

constexpr char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

constexpr bool equal_ignoring_case(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
    }
    return true;
}

inline std::string lowercase(std::string_view text) {
    std::string lower(text);
    for (char& c : lower) c = ascii_lower(c);
    return lower;
}

}  // namespace kvbench
