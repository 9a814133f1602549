// Shell quoting and the recorded command line.
#include "cli/command_line.hpp"

#include <filesystem>

namespace kvbench {

namespace {

std::string& recorded() {
    static std::string line;
    return line;
}

}  // namespace

std::string shell_quote(const std::string& word) {
    constexpr std::string_view safe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-";
    if (!word.empty() && word.find_first_not_of(safe) == std::string::npos) return word;
    std::string quoted(1, '\'');
    for (const char c : word) {
        if (c == '\'') {
            quoted.append("'\\''");
        } else {
            quoted.push_back(c);
        }
    }
    quoted.push_back('\'');
    return quoted;
}

void record_command_line(int argc, const char* const* argv) {
    std::string line = argc > 0 ? shell_quote(std::filesystem::path(argv[0]).filename().string()) : "kvbench";
    for (int i = 1; i < argc; ++i) {
        line.push_back(' ');
        line.append(shell_quote(argv[i]));
    }
    recorded() = std::move(line);
}

const std::string& command_line() { return recorded(); }

}  // namespace kvbench
