// Human-readable quantities for the terminal and Markdown tables: "812 µs", "64.0 MiB", "4.29 GFLOP".
#pragma once

#include <cstdint>
#include <string>

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

}  // namespace kvbench
