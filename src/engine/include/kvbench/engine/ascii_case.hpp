// Reading a word in any case (INT8, H100-SXM, Llama-3-8B): ASCII letters only, as the names the
// tool knows are ASCII, and independent of the process's locale.
#pragma once

#include <optional>
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

// Why a record named `name` cannot join `earlier` (records with a `name`) in a file whose names
// `option` reads in any case: it repeats one, or differs from one only in case, which would
// leave the choice to the order; none when the name is new. `kind` names a record ("model").
template <class Records>
std::optional<std::string> name_clash(const Records& earlier, std::string_view name, std::string_view kind,
                                      std::string_view option) {
    for (const auto& record : earlier) {
        if (!equal_ignoring_case(record.name, name)) continue;
        if (record.name == name) return std::string("appears twice");
        return "differs from " + std::string(kind) + " '" + std::string(record.name) + "' only in case, and " +
               std::string(option) + " reads names in any case";
    }
    return std::nullopt;
}

}  // namespace kvbench
