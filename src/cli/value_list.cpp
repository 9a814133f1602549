// Parses option values: sweep axes in llama-bench's syntax ("1,4,16", "128-4096*2", "64-256+64",
// "1-8" and mixes), whole numbers, parameter counts and words of a set.
#include "cli/value_list.hpp"

#include "cli/digits.hpp"
#include "cli/suggest.hpp"
#include "kvbench/engine/ascii_case.hpp"
#include "kvbench/engine/config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <optional>
#include <string>
#include <unordered_set>

namespace kvbench {

namespace {

constexpr std::string_view syntax_hint = "(use 1,4,16 or 128-4096*2 or 64-256+64)";

constexpr std::string_view suffix_hint = "(K = 1024, M = 1024^2, G = 1024^3: 4K, 32Ki, 1M)";

// What a count's suffix multiplies by: none, K/k/Ki = 1024, M/m/Mi = 1024^2, G/g/Gi = 1024^3
// (binary, as --max-memory's units and as "a 32K context" means 32768 positions).
std::optional<std::size_t> count_suffix_multiplier(std::string_view suffix) {
    if (suffix.empty()) return 1;
    if (suffix.size() == 2 && suffix[1] == 'i') suffix.remove_suffix(1);
    if (suffix.size() != 1) return std::nullopt;
    switch (suffix[0]) {
        case 'k': case 'K': return std::size_t{1} << 10;
        case 'm': case 'M': return std::size_t{1} << 20;
        case 'g': case 'G': return std::size_t{1} << 30;
        default: return std::nullopt;
    }
}

// Everything one item needs to say what is wrong with it.
struct ItemContext {
    std::string_view option;
    std::string_view item;  // the whole comma-separated item, e.g. "128-4096*2"
    std::size_t max_value;

    [[noreturn]] void fail(std::string_view part, std::string_view rule) const {
        if (part == item) throw ConfigError(fmt::format("{}: \"{}\" {}", option, item, rule));
        throw ConfigError(fmt::format("{}: \"{}\" in \"{}\" {}", option, part, item, rule));
    }

    [[noreturn]] void fail_below(std::string_view part, std::size_t min_value, std::string_view role) const {
        if (role.empty()) fail(part, fmt::format("must be at least {}", min_value));
        fail(item, fmt::format("has {} {}, which must be at least {}", role, part, min_value));
    }

    // One number of the item: digits only, at least `min_value`, at most max_value.
    // A leading '-' followed by a digit is a negative number, hence below the minimum.
    // `role` ("factor", "step") names a range's stride in the below-minimum message.
    std::size_t parse_number(std::string_view part, std::size_t min_value, std::string_view role = {}) const {
        if (part.empty()) {
            throw ConfigError(fmt::format("{}: \"{}\" is missing a number {}", option, item, syntax_hint));
        }
        if (part.size() > 1 && part[0] == '-' && is_digit(part[1])) fail_below(part, min_value, role);
        const std::size_t digits_end = std::min(part.find_first_not_of("0123456789"), part.size());
        const std::string_view digits = part.substr(0, digits_end);
        const std::optional<std::size_t> multiplier = count_suffix_multiplier(part.substr(digits_end));
        if (digits.empty() || !multiplier) {
            const bool bad_suffix = !digits.empty() && is_letter(part[digits_end]) &&
                                    std::all_of(part.begin() + static_cast<std::ptrdiff_t>(digits_end), part.end(),
                                                is_letter);
            if (bad_suffix) fail(part, fmt::format("has an unknown suffix {}", suffix_hint));
            fail(part, fmt::format("is not a whole number {}", syntax_hint));
        }
        std::size_t value = 0;
        const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
        // Only digits reach here, so the one possible failure is a number too big for size_t.
        const bool overflows = error != std::errc{} || end != digits.data() + digits.size() ||
                               value > std::numeric_limits<std::size_t>::max() / *multiplier;
        if (overflows || value * *multiplier > max_value) fail(part, fmt::format("must be at most {}", max_value));
        value *= *multiplier;
        if (value < min_value) fail_below(part, min_value, role);
        return value;
    }
};

enum class Stride { plus, times };

// Appends the values of one item; `n_generated` counts every value appended so far.
void expand_item(const ItemContext& ctx, std::vector<std::size_t>& values, std::size_t& n_generated) {
    const std::string_view item = ctx.item;
    // A '-' at position 0 is a sign, not a range dash: parse_number rejects it.
    const std::size_t dash = item.find('-', 1);
    std::size_t first = 0;
    std::size_t last = 0;
    std::size_t stride = 1;
    Stride kind = Stride::plus;
    if (dash == std::string_view::npos) {
        first = last = ctx.parse_number(item, 1);
    } else {
        const std::string_view end_and_stride = item.substr(dash + 1);
        const std::size_t op = end_and_stride.find_first_of("*+");
        const std::string_view stride_suffix =
            op == std::string_view::npos ? std::string_view{} : end_and_stride.substr(op);  // "*2", "+64" or ""
        first = ctx.parse_number(item.substr(0, dash), 1);
        last = ctx.parse_number(end_and_stride.substr(0, op), 1);
        if (op != std::string_view::npos) {
            kind = end_and_stride[op] == '*' ? Stride::times : Stride::plus;
            // A factor of 1 or a step of 0 would never reach the end.
            stride = kind == Stride::times ? ctx.parse_number(end_and_stride.substr(op + 1), 2, "factor")
                                           : ctx.parse_number(end_and_stride.substr(op + 1), 1, "step");
        }
        if (last < first) {
            ctx.fail(item, fmt::format("ends below its start (write {}-{}{})", last, first, stride_suffix));
        }
    }

    // Count before generating, so that 1-1000000000 is refused without allocating.
    std::size_t n_values = 0;
    if (kind == Stride::plus) {
        n_values = (last - first) / stride + 1;
    } else {
        for (std::size_t v = first;; v *= stride) {
            ++n_values;
            if (v > last / stride) break;  // the next value would pass `last` (or overflow)
        }
    }
    if (n_values > max_value_list_size - n_generated) {
        ctx.fail(item, fmt::format("makes the list longer than {} values (use a larger step or factor)",
                                   max_value_list_size));
    }
    n_generated += n_values;
    std::size_t v = first;
    for (std::size_t i = 0; i < n_values; ++i) {
        values.push_back(v);
        if (i + 1 < n_values) v = kind == Stride::plus ? v + stride : v * stride;
    }
}

}  // namespace

std::vector<std::size_t> parse_value_list(std::string_view text, std::string_view option,
                                          std::size_t max_value) {
    if (text.empty()) throw ConfigError(fmt::format("{}: the list is empty {}", option, syntax_hint));
    std::vector<std::size_t> expanded;
    std::size_t n_generated = 0;
    std::size_t begin = 0;
    while (true) {
        const std::size_t comma = text.find(',', begin);
        const std::string_view item = text.substr(begin, comma == std::string_view::npos
                                                             ? std::string_view::npos
                                                             : comma - begin);
        if (item.empty()) {
            throw ConfigError(fmt::format("{}: \"{}\" has an empty item {}", option, text, syntax_hint));
        }
        expand_item(ItemContext{option, item, max_value}, expanded, n_generated);
        if (comma == std::string_view::npos) break;
        begin = comma + 1;
    }

    std::vector<std::size_t> values;
    std::unordered_set<std::size_t> seen;
    for (const std::size_t v : expanded) {
        if (seen.insert(v).second) values.push_back(v);
    }
    return values;
}

std::optional<std::string> likely_geometric_list(std::string_view text) {
    constexpr std::size_t long_range = 16;
    std::string rewritten;
    bool changed = false;
    std::size_t begin = 0;
    while (true) {
        const std::size_t comma = text.find(',', begin);
        const std::string_view item = text.substr(begin, comma == std::string_view::npos ? comma : comma - begin);
        const std::size_t dash = item.find('-', 1);
        const bool plain_range = dash != std::string_view::npos && item.find_first_of("*+") == std::string_view::npos;
        std::string written(item);
        if (plain_range) {
            // The ends alone: the range itself may be longer than parse_value_list allows.
            constexpr std::size_t no_max = std::numeric_limits<std::size_t>::max();
            try {
                const std::size_t first = parse_value_list(item.substr(0, dash), "", no_max).front();
                const std::size_t last = parse_value_list(item.substr(dash + 1), "", no_max).front();
                if (last >= first && last - first >= long_range) {
                    written += "*2";
                    changed = true;
                }
            } catch (const ConfigError&) {
                return std::nullopt;
            }
        }
        rewritten += (rewritten.empty() ? "" : ",") + written;
        if (comma == std::string_view::npos) break;
        begin = comma + 1;
    }
    if (!changed) return std::nullopt;
    return rewritten;
}

std::size_t parse_count(std::string_view text, std::string_view option, std::size_t min_value,
                        std::size_t max_value) {
    if (text.empty()) throw ConfigError(fmt::format("{}: the value is empty (give a whole number)", option));
    if (text.find(',') != std::string_view::npos || text.find('-', 1) != std::string_view::npos) {
        throw ConfigError(fmt::format("{}: \"{}\" must be one number, not a list or range", option, text));
    }
    const std::size_t value = parse_value_list(text, option, max_value).front();
    if (value < min_value) throw ConfigError(fmt::format("{}: \"{}\" must be at least {}", option, text, min_value));
    return value;
}

std::string not_a_choice_message(std::string_view text, std::string_view option,
                                 const std::vector<std::string>& choices) {
    const std::optional<std::string> near = suggest_name(lowercase(text), choices);
    return fmt::format("{}: \"{}\" is not one of {}{}", option, text, or_list(choices),
                       near ? fmt::format(" (did you mean {}?)", *near) : std::string());
}

std::string parse_choice(std::string_view text, std::string_view option, const std::vector<std::string>& choices) {
    const std::string lower = lowercase(text);
    if (std::find(choices.begin(), choices.end(), lower) != choices.end()) return lower;
    throw ConfigError(not_a_choice_message(text, option, choices));
}

std::uint64_t parse_whole_number(std::string_view text, std::string_view option, std::uint64_t min_value,
                                 std::uint64_t max_value) {
    if (text.empty()) throw ConfigError(fmt::format("{}: the value is empty (give a whole number)", option));
    // "-3" is a negative number, so the rule it breaks is the minimum, not the syntax.
    const bool negative = text[0] == '-' && all_digits(text.substr(1));
    if (negative) throw ConfigError(fmt::format("{}: \"{}\" must be at least {}", option, text, min_value));
    if (!all_digits(text)) throw ConfigError(fmt::format("{}: \"{}\" is not a whole number", option, text));
    const std::optional<std::uint64_t> value = to_uint64(text);
    if (!value || *value > max_value) {
        throw ConfigError(fmt::format("{}: \"{}\" must be at most {}", option, text, max_value));
    }
    if (*value < min_value) throw ConfigError(fmt::format("{}: \"{}\" must be at least {}", option, text, min_value));
    return *value;
}

std::uint64_t parse_parameter_count(std::string_view text, std::string_view option, std::uint64_t min_value,
                                    std::uint64_t max_value) {
    constexpr std::string_view count_hint = "(K = 10^3, M = 10^6, B = 10^9, T = 10^12: 8B, 7.2B, 500M)";
    if (text.empty()) throw ConfigError(fmt::format("{}: the value is empty {}", option, count_hint));
    const std::size_t point = text.find('.');
    const std::size_t suffix_at = static_cast<std::size_t>(
        std::find_if(text.begin(), text.end(), is_letter) - text.begin());
    const std::string_view whole = text.substr(0, std::min(point, suffix_at));
    const std::string_view fraction =
        point < suffix_at ? text.substr(point + 1, suffix_at - point - 1) : std::string_view();
    const std::string_view suffix = text.substr(std::min(suffix_at, text.size()));
    const bool well_formed = all_digits(whole) && (point >= suffix_at || all_digits(fraction));
    if (!well_formed) throw ConfigError(fmt::format("{}: \"{}\" is not a parameter count {}", option, text, count_hint));
    std::uint64_t multiplier = 1;
    if (!suffix.empty()) {
        constexpr std::string_view suffixes = "kmbt";
        const char lower = static_cast<char>(suffix.front() >= 'A' && suffix.front() <= 'Z' ? suffix.front() - 'A' + 'a'
                                                                                           : suffix.front());
        const std::size_t power = suffix.size() == 1 ? suffixes.find(lower) : std::string_view::npos;
        if (power == std::string_view::npos) {
            throw ConfigError(fmt::format("{}: \"{}\" has an unknown suffix \"{}\" {}", option, text, suffix, count_hint));
        }
        for (std::size_t i = 0; i <= power; ++i) multiplier *= 1000;
    }
    const auto out_of_range = [&] {
        return ConfigError(fmt::format("{}: \"{}\" must be between {} and {}", option, text, min_value, max_value));
    };
    const std::optional<std::uint64_t> whole_value = to_uint64(whole);
    if (!whole_value || *whole_value > max_value / multiplier) throw out_of_range();
    // 7.2B is 7·10^9 + 2·10^8: the fraction's first digits count in units of the suffix, and
    // any beyond its power of ten must be zeros, or the count is not a whole number.
    std::size_t suffix_digits = 0;
    for (std::uint64_t m = multiplier; m > 1; m /= 10) ++suffix_digits;
    const std::string_view beyond = fraction.substr(std::min(fraction.size(), suffix_digits));
    if (beyond.find_first_not_of('0') != std::string_view::npos) {
        throw ConfigError(fmt::format("{}: \"{}\" is not a whole number of parameters {}", option, text, count_hint));
    }
    std::uint64_t significant = 0;
    std::uint64_t scale = 1;
    for (std::size_t i = 0; i < std::min(fraction.size(), suffix_digits); ++i) {
        significant = significant * 10 + static_cast<std::uint64_t>(fraction[i] - '0');
        scale *= 10;
    }
    const std::uint64_t whole_part = *whole_value * multiplier;
    const std::uint64_t fraction_part = significant * (multiplier / scale);
    if (fraction_part > max_value - whole_part) throw out_of_range();
    const std::uint64_t value = whole_part + fraction_part;
    if (value < min_value) throw out_of_range();
    return value;
}

}  // namespace kvbench
