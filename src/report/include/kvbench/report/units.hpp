// Human-readable quantities for the terminal and Markdown tables: "812 µs", "64.0 MiB", "4.29 GFLOP".
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace kvbench {

// Three significant figures without exponent: "0.0123", "1.23", "12.3", "123", "1234".
std::string format_number(double value);

// ns, µs, ms or s, whichever keeps the number below 1000: "812 ns", "1.23 ms".
std::string format_duration_ns(double duration_ns);

// Binary units: "512 B" below 1 KiB (exact), then "1.50 KiB", "64.0 MiB", "2.00 GiB", ... TiB.
std::string format_bytes(std::uint64_t n_bytes);

// Decimal units: "512 FLOP" below 1000 (exact), then KFLOP, MFLOP, GFLOP, TFLOP.
std::string format_flops(double n_flops);

// A factor: "1.00x", "12.3x", "1024x".
std::string format_ratio(double ratio);

// A value already in percent: "37.5 %".
std::string format_percent(double percent);

// "1 point", "3 points": a count and its noun, plural unless the count is one.
std::string format_count(std::size_t count, std::string_view noun);

// --time-unit: auto picks the unit from a column's values; the others force it.
enum class TimeUnit { auto_select, ns, us, ms, s };

// "auto", "ns", "us", "ms", "s" (the --time-unit spellings); throws std::invalid_argument otherwise.
TimeUnit parse_time_unit(std::string_view name);

// One unit for a whole table column, so that its cells compare at a glance: values are
// divided by `per_unit` and printed with three significant figures under `name`.
struct ColumnUnit {
    std::string name;     // "ms", "MFLOP", "KiB"
    double per_unit = 1;  // value of one `name` in the column's base unit (ns, FLOP, byte)
};

// The largest unit in which no value of the column reads 1000 or more (the small ones get
// decimals instead); `forced` overrides the choice for durations.
ColumnUnit duration_unit(std::span<const double> durations_ns, TimeUnit forced = TimeUnit::auto_select);
ColumnUnit flops_unit(std::span<const double> n_flops);
ColumnUnit bytes_unit(std::span<const double> n_bytes);

// format_number(value / unit.per_unit), without the unit: the column header carries it.
std::string format_in(double value, const ColumnUnit& unit);

}  // namespace kvbench
