// libFuzzer harness for the option-value parsers: parse_value_list, likely_geometric_list,
// parse_count, parse_choice, parse_whole_number and parse_byte_size. Any input must either parse into values that keep the parsers' promises
// or be refused with ConfigError; anything else (a crash, a sanitizer report, another
// exception, a broken promise) is a finding.
#include "cli/value_list.hpp"

#include "cli/byte_units.hpp"
#include "kvbench/engine/config.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace {

// abort() rather than assert(): the check must also hold in a build with NDEBUG.
void require(bool promise) {
    if (!promise) std::abort();
}

void check_value_list(std::string_view text, std::size_t max_value) {
    try {
        const std::vector<std::size_t> values = kvbench::parse_value_list(text, "--seq", max_value);
        require(!values.empty() && values.size() <= kvbench::max_value_list_size);
        std::unordered_set<std::size_t> seen;
        for (const std::size_t v : values) {
            require(v >= 1 && v <= max_value);
            require(seen.insert(v).second);  // duplicates removed
        }
    } catch (const kvbench::ConfigError&) {
    }
}

// A likely intent must itself be a list that parses (the caller prints it as advice).
void check_likely_geometric(std::string_view text) {
    try {
        if (const std::optional<std::string> geometric = kvbench::likely_geometric_list(text)) {
            require(!kvbench::parse_value_list(*geometric, "--seq", ~std::size_t{0}).empty());
        }
    } catch (const kvbench::ConfigError&) {
        // A rewritten range may still be longer than max_value_list_size: refused, not a crash.
    }
}

void check_count(std::string_view text) {
    try {
        const std::size_t value = kvbench::parse_count(text, "--prompt", 2, 4096);
        require(value >= 2 && value <= 4096);
    } catch (const kvbench::ConfigError&) {
    }
}

void check_choice(std::string_view text) {
    try {
        const std::string word = kvbench::parse_choice(text, "--cache-state", {"cold", "warm"});
        require(word == "cold" || word == "warm");
    } catch (const kvbench::ConfigError&) {
    }
}

void check_whole_number(std::string_view text, std::uint64_t min_value, std::uint64_t max_value) {
    try {
        const std::uint64_t value = kvbench::parse_whole_number(text, "--reps", min_value, max_value);
        require(value >= min_value && value <= max_value);
    } catch (const kvbench::ConfigError&) {
    }
}

void check_byte_size(std::string_view text) {
    try {
        require(kvbench::parse_byte_size(text, "--max-memory") >= 1);
    } catch (const kvbench::ConfigError&) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    check_value_list(text, std::size_t{1} << 30);  // the axes' default maximum
    check_value_list(text, 64);                      // a small maximum, so ranges reach it
    check_whole_number(text, 1, 1000000);            // --reps
    check_whole_number(text, 0, ~std::uint64_t{0});  // --seed: the whole 64-bit range
    check_byte_size(text);
    check_likely_geometric(text);
    check_count(text);
    check_choice(text);
    return 0;
}
