// Reading sizes and rates in bytes: one table of units, one message per broken rule.
#include "cli/byte_units.hpp"

#include "cli/digits.hpp"
#include "kvbench/engine/ascii_case.hpp"
#include "kvbench/engine/config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

namespace kvbench {

namespace {

// What a byte size's unit multiplies by, its letters in any case (callers refuse a lower-case
// b, bits, first): B = 1; KB, MB, GB, TB, PB, EB powers of 1000 (SI); KiB, MiB, ... (or Ki,
// Mi, ...) powers of 1024 (IEC); a bare K, M, G, T, P or E powers of 1024, as dd, sort -S and
// docker read them, and as the axes' suffixes are. Nothing for an unknown unit.
// Requires: unit is not empty.
std::optional<std::uint64_t> byte_unit(std::string_view unit) {
    const std::string lower = lowercase(unit);
    if (lower == "b") return 1;
    constexpr std::string_view prefixes = "kmgtpe";
    const std::size_t power = prefixes.find(lower.front());
    if (power == std::string_view::npos) return std::nullopt;
    const std::string_view rest = std::string_view(lower).substr(1);
    std::uint64_t base = 0;
    if (rest.empty() || rest == "i" || rest == "ib") {
        base = 1024;
    } else if (rest == "b") {
        base = 1000;
    } else {
        return std::nullopt;
    }
    std::uint64_t multiplier = 1;
    for (std::size_t i = 0; i <= power; ++i) multiplier *= base;
    return multiplier;
}

// A lower-case b is bits, as in a link's 10Gb/s: read as bytes, a rate would come out 8x too
// fast and a size 8x too large, so sizes and rates both refuse it. `unit` is what follows the
// number ("Gb", "gib", "b"; for a rate, without the /s).
bool names_bits(std::string_view unit) { return unit.ends_with('b'); }

// What to write for the bytes a size in bits was surely meant as: memory is not counted in bits,
// so "80Gb" is a B in the wrong case, not 10GB ("80GB or 80GiB", "8GiB", "100B"). Nothing when
// the unit would be unknown in bytes too. Requires: names_bits(unit).
std::optional<std::string> size_meant_by_bits(std::string_view digits, std::string_view unit) {
    std::string as_bytes(unit);
    as_bytes.back() = 'B';
    if (!byte_unit(as_bytes)) return std::nullopt;
    if (unit.size() == 1) return fmt::format("{}B", digits);
    const char prefix = static_cast<char>(unit[0] >= 'a' && unit[0] <= 'z' ? unit[0] - 'a' + 'A' : unit[0]);
    if (unit.size() == 3) return fmt::format("{}{}iB", digits, prefix);
    return fmt::format("{}{}B or {}{}iB", digits, prefix, digits, prefix);
}

// Past an exabyte a second no device is near, and the planner's times would round to 0.
constexpr std::uint64_t max_bytes_per_s = 1'000'000'000'000'000'000;

constexpr std::string_view rate_examples = "(e.g. 3.35TB/s, 3350GB/s or 800GiB/s)";

// What a rate in bits ("2Gb", "3.35tb", "1Gib": the part before /s) is in bytes, written as
// parse_byte_rate reads it ("0.25GB", "0.41875TB", "128MiB"); nothing when `size` is not a
// number and a prefix.
std::optional<std::string> bytes_of_bits(std::string_view size) {
    double bits = 0;
    const auto [end, error] = std::from_chars(size.data(), size.data() + size.size(), bits);
    if (error != std::errc() || !std::isfinite(bits) || !(bits > 0)) return std::nullopt;
    const std::string_view unit = size.substr(static_cast<std::size_t>(end - size.data()));
    if (unit.empty()) return std::nullopt;
    std::string_view prefix = unit.substr(0, unit.size() - 1);  // less the b
    const bool binary = prefix.size() == 2 && (prefix[1] == 'i' || prefix[1] == 'I');
    if (binary) prefix.remove_suffix(1);
    constexpr std::string_view prefixes = "kmgtpe";
    std::size_t power = 0;  // of 1000 (or 1024): 0 bytes, 1 K, 2 M, ...
    if (prefix.size() > 1) return std::nullopt;
    if (prefix.size() == 1) {
        const std::size_t at = prefixes.find(ascii_lower(prefix[0]));
        if (at == std::string_view::npos) return std::nullopt;
        power = at + 1;
    }
    double bytes = bits / 8;  // exact: a power of two
    // A decimal rate takes SI units only, so a binary one steps down a prefix until it is whole.
    while (binary && power > 0 && bytes != std::floor(bytes)) {
        bytes *= 1024;
        --power;
    }
    constexpr std::string_view written = "KMGTPE";
    const std::string bytes_unit = power == 0 ? "B" : fmt::format("{}{}B", written[power - 1], binary ? "i" : "");
    return fmt::format("{}{}", bytes, bytes_unit);
}

}  // namespace

std::uint64_t parse_byte_size(std::string_view text, std::string_view option) {
    constexpr std::string_view size_hint = "(use e.g. 8GiB, 512MiB or a number of bytes)";
    if (text.empty()) throw ConfigError(fmt::format("{}: the value is empty {}", option, size_hint));
    const auto digits_end = std::find_if_not(text.begin(), text.end(), is_digit);
    const std::string_view digits = text.substr(0, static_cast<std::size_t>(digits_end - text.begin()));
    std::string_view unit = text.substr(digits.size());
    if (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
    if (digits.empty() && text[0] == '-') {
        throw ConfigError(fmt::format("{}: \"{}\" must be at least 1 byte", option, text));
    }
    if (!digits.empty() && !unit.empty() && unit.front() == '.') {
        throw ConfigError(fmt::format("{}: \"{}\" is not a whole number of bytes or units (write 1536MiB, "
                                      "not 1.5GiB)", option, text));
    }
    if (digits.empty() || !std::all_of(unit.begin(), unit.end(), is_letter)) {
        throw ConfigError(fmt::format("{}: \"{}\" is not a size {}", option, text, size_hint));
    }
    if (names_bits(unit)) {
        if (const std::optional<std::string> meant = size_meant_by_bits(digits, unit)) {
            throw ConfigError(fmt::format("{}: \"{}\" reads as bits (a lower-case b); write {} for bytes", option,
                                          text, *meant));
        }
    }
    const auto too_big = [&] {
        return ConfigError(fmt::format("{}: \"{}\" is more than 64 bits can count (16 EiB)", option, text));
    };
    const std::optional<std::uint64_t> number = to_uint64(digits);
    if (!number) throw too_big();
    if (*number == 0) throw ConfigError(fmt::format("{}: \"{}\" must be at least 1 byte {}", option, text, size_hint));
    if (unit.empty()) {
        // "--budget 80" is 80 bytes: a unit left out, not a budget.
        if (*number < (std::uint64_t{1} << 20)) {
            throw ConfigError(fmt::format("{}: \"{}\" would be {} bytes: give the unit ({}GB = {}·10^9 bytes, "
                                          "{}GiB = {}·2^30), or write {}B for bytes",
                                          option, text, *number, text, text, text, text, text));
        }
        return *number;
    }
    const std::optional<std::uint64_t> multiplier = byte_unit(unit);
    if (!multiplier) {
        throw ConfigError(fmt::format("{}: \"{}\" has an unknown unit \"{}\" (use B, KB, MB, GB, TB = 10^3, "
                                      "10^6, 10^9, 10^12 bytes, or KiB, MiB, GiB, TiB = 2^10, 2^20, 2^30, 2^40)",
                                      option, text, unit));
    }
    if (*number > std::numeric_limits<std::uint64_t>::max() / *multiplier) throw too_big();
    return *number * *multiplier;
}

double parse_byte_rate(std::string_view value, std::string_view option) {
    const std::string_view space = option.ends_with('=') ? "" : " ";  // "--hardware bw=1TB/s", "--tier-bw 1TB/s"
    const auto fail = [&](std::string_view rule) {
        return ConfigError(fmt::format("{}{}{}: {} {}", option, space, value, rule, rate_examples));
    };
    if (value.size() < 3 || !value.ends_with("/s")) throw fail("must be a byte rate ending in /s");
    const std::string_view size = value.substr(0, value.size() - 2);
    if (names_bits(size)) {
        if (const std::optional<std::string> bytes = bytes_of_bits(size)) {
            throw ConfigError(fmt::format("{}{}{}: b is bits; write {}/s (bytes)", option, space, value, *bytes));
        }
        throw fail("b is bits; write the rate in bytes, with B");
    }
    double number = 0;
    const auto [end, error] = std::from_chars(size.data(), size.data() + size.size(), number);
    const std::string_view number_text = size.substr(0, static_cast<std::size_t>(end - size.data()));
    std::string_view unit = size.substr(number_text.size());
    if (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);  // "2 GB/s", as a size takes "8 GiB"
    if (error == std::errc::invalid_argument || (error == std::errc{} && !std::isfinite(number)) ||
        !std::all_of(unit.begin(), unit.end(), is_letter)) {
        throw fail("must be a number and a unit per second");
    }
    if (error == std::errc::result_out_of_range) {
        const bool too_small = number_text.find("e-") != std::string_view::npos ||
                               number_text.find("E-") != std::string_view::npos;
        throw fail(too_small ? "must be more than 0 bytes per second" : "must be at most 1000PB/s");
    }
    const bool decimal = number_text.find_first_of(".eE") != std::string_view::npos;
    if (decimal) {
        // SI units only, as vendors print them (3.35 TB/s).
        const std::optional<std::uint64_t> scale =
            unit.size() == 2 && unit[1] == 'B' ? byte_unit(unit) : std::nullopt;
        if (!scale) throw fail("a decimal rate takes an SI unit: KB, MB, GB, TB or PB per second");
        if (!(number > 0)) throw fail("must be more than 0 bytes per second");
        const double bytes = number * static_cast<double>(*scale);
        if (!(bytes <= static_cast<double>(max_bytes_per_s))) throw fail("must be at most 1000PB/s");
        return bytes;
    }
    const std::optional<std::uint64_t> scale = unit.empty() ? std::optional<std::uint64_t>(1) : byte_unit(unit);
    if (!scale) {
        throw fail(fmt::format("has an unknown unit \"{}\": a rate takes KB, MB, GB, TB, PB (10^3 ... 10^15 "
                               "bytes), KiB, MiB, GiB, TiB, PiB (2^10 ... 2^50) or B per second",
                               unit));
    }
    if (!(number > 0)) throw fail("must be more than 0 bytes per second");
    const std::optional<std::uint64_t> whole = to_uint64(number_text);
    if (!whole || *whole > max_bytes_per_s / *scale) throw fail("must be at most 1000PB/s");
    const std::uint64_t bytes = *whole * *scale;
    // "--tier-bw 80/s" is a unit left out, as a size's "80" is.
    if (unit.empty() && bytes < (std::uint64_t{1} << 20)) {
        throw ConfigError(fmt::format("{}{}{}: would be {} bytes per second: give the unit ({}GB/s = {}·10^9 bytes "
                                      "per second, {}GiB/s), or write {}B/s for bytes",
                                      option, space, value, bytes, bytes, bytes, bytes, bytes));
    }
    if (bytes > max_bytes_per_s) throw fail("must be at most 1000PB/s");
    return static_cast<double>(bytes);
}

}  // namespace kvbench
