// Human-readable quantities: three significant figures and the unit that keeps the number below 1000.
#include "kvbench/report/units.hpp"

#include <fmt/format.h>

#include <array>
#include <algorithm>
#include <cmath>
#include <span>
#include <stdexcept>
#include <string_view>

namespace kvbench {

namespace {

// Decimals that give three significant figures, after rounding: 9.996 rounds
// to 10.0, not 10.00, so the exponent is taken from the rounded value.
int sig3_decimals(double value) {
    const double magnitude = std::fabs(value);
    int exponent = static_cast<int>(std::floor(std::log10(magnitude)));
    int decimals = exponent < 2 ? 2 - exponent : 0;
    const double rounding_step = 0.5 * std::pow(10.0, -decimals);
    if (magnitude >= std::pow(10.0, exponent + 1) - rounding_step && decimals > 0) {
        ++exponent;
        --decimals;
    }
    return decimals;
}

double round_sig3(double value) {
    if (value == 0 || !std::isfinite(value)) return value;
    const double scale = std::pow(10.0, sig3_decimals(value));
    return std::round(value * scale) / scale;
}

// Climbs `units` (each `base` times the previous) while the number would read 1000 or more.
std::string format_scaled(double value, std::span<const std::string_view> units, double base) {
    std::size_t unit = 0;
    while (unit + 1 < units.size() && std::fabs(round_sig3(value)) >= 1000) {
        value /= base;
        ++unit;
    }
    return fmt::format("{} {}", format_number(value), units[unit]);
}

// Of `units` (each `base` times the previous), the one whose widest cell is narrowest, the
// larger on a tie: 0.2 to 352 ms reads "0.205" to "352" in ms rather than "205" to "352000"
// in µs, and a column spanning many decades does not print 0.000000954 to save a digit at the top.
ColumnUnit column_unit(std::span<const double> values, std::span<const std::string_view> units, double first,
                       double base) {
    ColumnUnit best{std::string(units[0]), first};
    std::size_t best_width = ~std::size_t{0};
    if (values.empty()) return best;
    double per_unit = first;
    for (const std::string_view name : units) {
        std::size_t width = 0;
        for (const double value : values) width = std::max(width, format_number(value / per_unit).size());
        if (width <= best_width) {
            best = {std::string(name), per_unit};
            best_width = width;
        }
        per_unit *= base;
    }
    return best;
}

constexpr std::array<std::string_view, 4> duration_units{"ns", "µs", "ms", "s"};

}  // namespace

std::string format_number(double value) {
    if (value == 0) return "0";
    if (!std::isfinite(value)) return fmt::format("{}", value);
    return fmt::format("{:.{}f}", value, sig3_decimals(value));
}

std::string format_duration_ns(double duration_ns) {
    return format_scaled(duration_ns, duration_units, 1000);
}

std::string format_bytes(std::uint64_t n_bytes) {
    if (n_bytes < 1024) return fmt::format("{} B", n_bytes);
    static constexpr std::array<std::string_view, 4> units{"KiB", "MiB", "GiB", "TiB"};
    return format_scaled(static_cast<double>(n_bytes) / 1024, units, 1024);
}

std::string format_flops(double n_flops) {
    if (std::fabs(n_flops) < 999.5) return fmt::format("{:.0f} FLOP", n_flops);
    static constexpr std::array<std::string_view, 4> units{"KFLOP", "MFLOP", "GFLOP", "TFLOP"};
    return format_scaled(n_flops / 1000, units, 1000);
}

std::string format_ratio(double ratio) { return format_number(ratio) + "x"; }

std::string format_percent(double percent) { return fmt::format("{:.1f} %", percent); }

std::string format_count(std::size_t count, std::string_view noun) {
    return fmt::format("{} {}{}", count, noun, count == 1 ? "" : "s");
}

TimeUnit parse_time_unit(std::string_view name) {
    if (name == "auto") return TimeUnit::auto_select;
    if (name == "ns") return TimeUnit::ns;
    if (name == "us") return TimeUnit::us;
    if (name == "ms") return TimeUnit::ms;
    if (name == "s") return TimeUnit::s;
    throw std::invalid_argument(fmt::format("time unit \"{}\" is not one of auto, ns, us, ms, s", name));
}

ColumnUnit duration_unit(std::span<const double> durations_ns, TimeUnit forced) {
    if (forced == TimeUnit::auto_select) return column_unit(durations_ns, duration_units, 1, 1000);
    const auto index = static_cast<std::size_t>(forced) - 1;
    return {std::string(duration_units[index]), std::pow(1000.0, static_cast<double>(index))};
}

ColumnUnit flops_unit(std::span<const double> n_flops) {
    static constexpr std::array<std::string_view, 5> units{"FLOP", "KFLOP", "MFLOP", "GFLOP", "TFLOP"};
    return column_unit(n_flops, units, 1, 1000);
}

ColumnUnit bytes_unit(std::span<const double> n_bytes) {
    static constexpr std::array<std::string_view, 5> units{"B", "KiB", "MiB", "GiB", "TiB"};
    return column_unit(n_bytes, units, 1, 1024);
}

std::string format_in(double value, const ColumnUnit& unit) { return format_number(value / unit.per_unit); }

}  // namespace kvbench
