// Human-readable quantities: three significant figures and the unit that keeps the number below 1000.
#include "kvbench/report/units.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <span>
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

}  // namespace

std::string format_number(double value) {
    if (value == 0) return "0";
    if (!std::isfinite(value)) return fmt::format("{}", value);
    return fmt::format("{:.{}f}", value, sig3_decimals(value));
}

std::string format_duration_ns(double duration_ns) {
    static constexpr std::array<std::string_view, 4> units{"ns", "µs", "ms", "s"};
    return format_scaled(duration_ns, units, 1000);
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

}  // namespace kvbench
