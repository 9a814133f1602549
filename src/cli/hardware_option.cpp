// Reading --hardware: a built-in profile's name, or bw=...,flops=...,mem=... .
#include "cli/hardware_option.hpp"

#include "cli/byte_units.hpp"
#include "cli/suggest.hpp"
#include "kvbench/engine/ascii_case.hpp"
#include "kvbench/engine/config.hpp"
#include "kvbench/files/input_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace kvbench {

namespace {

constexpr std::string_view spec_hint = "(e.g. --hardware bw=3.35TB/s,flops=989T,mem=80GB, or a name from "
                                       "`kvbench hardware`)";

// A positive finite decimal ("3.35", "989", "1e12") at the start of `text`, and what follows it.
std::optional<std::pair<double, std::string_view>> leading_number(std::string_view text) {
    double value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || !std::isfinite(value) || !(value > 0)) return std::nullopt;
    return std::pair{value, text.substr(static_cast<std::size_t>(end - text.data()))};
}

// 10^(3·k) for the SI prefix K, M, G, T, P (k = 1 ... 5), in any case.
std::optional<double> si_prefix(char prefix) {
    constexpr std::string_view prefixes = "kmgtp";
    const char lower = static_cast<char>(prefix >= 'A' && prefix <= 'Z' ? prefix - 'A' + 'a' : prefix);
    const std::size_t power = prefixes.find(lower);
    if (power == std::string_view::npos) return std::nullopt;
    return std::pow(1000.0, static_cast<double>(power + 1));
}

double parse_flops(std::string_view value) {
    const auto number = leading_number(value);
    if (!number) {
        throw ConfigError(fmt::format("--hardware flops={}: must be a positive number of FLOP/s, e.g. 989T or "
                                      "989e12",
                                      value));
    }
    const std::string_view suffix = number->second;
    const std::optional<double> scale = suffix.empty() ? 1.0 : suffix.size() == 1 ? si_prefix(suffix[0]) : std::nullopt;
    if (!scale) {
        throw ConfigError(fmt::format("--hardware flops={}: unknown suffix \"{}\" (K, M, G, T, P = 10^3 ... "
                                      "10^15: 989T)",
                                      value, suffix));
    }
    if (!(number->first * *scale <= 1e21)) {
        throw ConfigError(fmt::format("--hardware flops={}: must be at most 1e21 FLOP/s", value));
    }
    return number->first * *scale;
}

// One KEY=VALUE of a typed profile or a profile file's line; `where` names it in errors ("--hardware
// bw=...,foo=1" typed, "--hardware my.gpu: line 3" in a file).
void apply_profile_entry(HardwareProfile& profile, const std::string& key, std::string_view value,
                         const std::string& where) {
    if (key == "bw") {
        profile.bandwidth_bytes_per_s = parse_byte_rate(value, "--hardware bw=");
    } else if (key == "flops") {
        const double flops = parse_flops(value);
        for (const ComputeType type : compute_types) profile.peak_flops[static_cast<int>(type)] = flops;
    } else if (key == "mem") {
        profile.memory_bytes = parse_byte_size(value, "--hardware mem");
    } else {
        throw ConfigError(fmt::format("{}: unknown key \"{}\" (bw, flops or mem) {}", where, key, spec_hint));
    }
}

HardwareProfile parse_typed_profile(std::string_view text) {
    HardwareProfile profile;
    profile.name = "custom";
    profile.kind = "custom";
    profile.status = "user";
    std::vector<std::string> seen;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        const std::string_view part = text.substr(start, comma - start);
        start = comma + 1;
        const std::size_t equals = part.find('=');
        if (equals == std::string_view::npos) {
            throw ConfigError(fmt::format("--hardware {}: \"{}\" is not KEY=VALUE with KEY bw, flops or mem {}",
                                          text, part, spec_hint));
        }
        const std::string key(part.substr(0, equals));
        const std::string_view value = part.substr(equals + 1);
        if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
            throw ConfigError(fmt::format("--hardware {}: {} is given twice", text, key));
        }
        seen.push_back(key);
        apply_profile_entry(profile, key, value, fmt::format("--hardware {}", text));
    }
    if (profile.bandwidth_bytes_per_s == 0) {
        throw ConfigError(fmt::format("--hardware {}: bw= is required: a decode step is bound by bandwidth {}", text,
                                      spec_hint));
    }
    profile.description = fmt::format("custom: {}", text);
    return profile;
}

// A profile file: JSON in data/hardware.json's schema holding one profile, or lines of
// KEY=VALUE (bw, flops, mem as the typed spec takes them, and name), with # comments.
HardwareProfile read_hardware_file(const std::string& path) {
    std::string text;
    try {
        text = read_input_file(path);
    } catch (const InputFileError& error) {
        throw ConfigError(fmt::format("--hardware {}: {}", path, error.what()));
    }
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && text[first] == '{') {
        const std::vector<HardwareProfile> profiles = parse_hardware_profiles(text, "--hardware " + path);
        if (profiles.size() != 1) {
            throw ConfigError(fmt::format("--hardware {}: holds {} profiles; a profile file holds one (the schema of "
                                          "data/hardware.json, with one record in \"profiles\")",
                                          path, profiles.size()));
        }
        return profiles.front();
    }
    // A NUL would end the line where a message prints it: a profile file is text.
    if (const std::size_t nul = text.find('\0'); nul != std::string::npos) {
        throw ConfigError(fmt::format("--hardware {}: line {}: holds a NUL byte; a profile file is text (lines of "
                                      "KEY=VALUE, or JSON)",
                                      path, 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nul),
                                                           '\n')));
    }
    std::string spec;
    std::optional<std::string> name;
    std::vector<std::pair<std::string, std::size_t>> seen;  // each key and its line
    std::istringstream lines(text);
    std::size_t line_number = 0;
    for (std::string line; std::getline(lines, line);) {
        ++line_number;
        line = line.substr(0, line.find('#'));
        line.erase(std::remove_if(line.begin(), line.end(), [](char c) { return c == ' ' || c == '\t' || c == '\r'; }),
                   line.end());
        if (line.empty()) continue;
        if (line.find('=') == std::string::npos || line.find(',') != std::string::npos) {
            throw ConfigError(fmt::format("--hardware {}: line {}: \"{}\" is not one KEY=VALUE (bw=3.35TB/s, "
                                          "flops=989T, mem=80GB, name=my-gpu)",
                                          path, line_number, line));
        }
        // Each line checked where it stands, so that its error names the file and the line.
        const std::size_t equals = line.find('=');
        const std::string key = line.substr(0, equals);
        const std::string where = fmt::format("--hardware {}: line {}", path, line_number);
        const auto earlier = std::find_if(seen.begin(), seen.end(), [&key](const auto& s) { return s.first == key; });
        if (earlier != seen.end()) {
            throw ConfigError(fmt::format("{}: {} is given twice (first on line {})", where, key, earlier->second));
        }
        seen.emplace_back(key, line_number);
        if (key == "name") {
            name = line.substr(equals + 1);
            if (name->empty()) throw ConfigError(fmt::format("{}: name= is empty (name=my-gpu, or no name line)", where));
            continue;
        }
        try {
            HardwareProfile checked;
            apply_profile_entry(checked, key, std::string_view(line).substr(equals + 1), where);
        } catch (const ConfigError& error) {
            const std::string message = error.what();
            if (message.starts_with(where)) throw;
            throw ConfigError(fmt::format("{}: {}", where, message));
        }
        spec += (spec.empty() ? "" : ",") + line;
    }
    if (spec.empty()) {
        throw ConfigError(fmt::format("--hardware {}: no KEY=VALUE line; a profile file needs at least bw=RATE", path));
    }
    if (std::none_of(seen.begin(), seen.end(), [](const auto& s) { return s.first == "bw"; })) {
        throw ConfigError(fmt::format("--hardware {}: no bw= line: a decode step is bound by bandwidth (bw=3.35TB/s)",
                                      path));
    }
    HardwareProfile profile = parse_typed_profile(spec);
    profile.description = fmt::format("{}: {}", path, spec);
    if (name) profile.name = *name;
    return profile;
}

}  // namespace

HardwareProfile parse_hardware_option(std::string_view text) {
    if (text.find('=') != std::string_view::npos) return parse_typed_profile(text);
    const std::vector<HardwareProfile>& profiles = builtin_hardware();
    if (const HardwareProfile* profile = find_hardware(profiles, text)) return *profile;
    // Anything at that path is the file meant, and read_hardware_file says why a directory, a FIFO
    // or a symlink loop is none: "unknown profile and no such file" would send the user looking.
    if (input_path_exists(std::string(text))) return read_hardware_file(std::string(text));
    std::vector<std::string> names;
    for (const HardwareProfile& profile : profiles) names.push_back(profile.name);
    const std::optional<std::string> hint = suggest_name(lowercase(text), names);
    throw ConfigError(fmt::format("--hardware {}: unknown profile{} and no such file; `kvbench hardware` lists "
                                  "them, or type one as bw=3.35TB/s,flops=989T,mem=80GB",
                                  text, hint ? fmt::format(" (did you mean {}?)", *hint) : ""));
}

}  // namespace kvbench
