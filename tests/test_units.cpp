// Human units: three significant figures and the unit that keeps the number below 1000.
#include "kvbench/report/units.hpp"

#include <doctest/doctest.h>

using namespace kvbench;

TEST_CASE("numbers keep three significant figures at every magnitude") {
    CHECK(format_number(0) == "0");
    CHECK(format_number(1.234) == "1.23");
    CHECK(format_number(12.34) == "12.3");
    CHECK(format_number(123.4) == "123");
    CHECK(format_number(1234.4) == "1234");
    CHECK(format_number(0.012345) == "0.0123");
    CHECK(format_number(-1.234) == "-1.23");
}

TEST_CASE("a number that rounds up to the next power of ten keeps three figures") {
    CHECK(format_number(9.996) == "10.0");
    CHECK(format_number(0.09996) == "0.100");
    CHECK(format_number(99.96) == "100");
}

TEST_CASE("durations pick ns, µs, ms or s") {
    CHECK(format_duration_ns(812) == "812 ns");
    CHECK(format_duration_ns(8.5) == "8.50 ns");
    CHECK(format_duration_ns(812'000) == "812 µs");
    CHECK(format_duration_ns(1'234'000) == "1.23 ms");
    CHECK(format_duration_ns(2.5e9) == "2.50 s");
    CHECK(format_duration_ns(3600e9) == "3600 s");
}

TEST_CASE("a duration that rounds to 1000 of a unit moves to the next unit") {
    CHECK(format_duration_ns(999.96e3) == "1.00 ms");
    CHECK(format_duration_ns(999.4) == "999 ns");
}

TEST_CASE("bytes are exact below one KiB and binary above") {
    CHECK(format_bytes(0) == "0 B");
    CHECK(format_bytes(512) == "512 B");
    CHECK(format_bytes(1023) == "1023 B");
    CHECK(format_bytes(1024) == "1.00 KiB");
    CHECK(format_bytes(1536) == "1.50 KiB");
    CHECK(format_bytes(std::uint64_t{64} << 20) == "64.0 MiB");
    CHECK(format_bytes(std::uint64_t{2} << 30) == "2.00 GiB");
    CHECK(format_bytes(std::uint64_t{3} << 40) == "3.00 TiB");
    CHECK(format_bytes((std::uint64_t{1} << 20) - 1) == "1.00 MiB");
}

TEST_CASE("flops are exact below 1000 and decimal above") {
    CHECK(format_flops(512) == "512 FLOP");
    CHECK(format_flops(1500) == "1.50 KFLOP");
    CHECK(format_flops(4.29e9) == "4.29 GFLOP");
    CHECK(format_flops(12.3e6) == "12.3 MFLOP");
    CHECK(format_flops(2e15) == "2000 TFLOP");
}

TEST_CASE("ratios and percentages carry their sign of unit") {
    CHECK(format_ratio(1.0) == "1.00x");
    CHECK(format_ratio(38.18) == "38.2x");
    CHECK(format_ratio(1024) == "1024x");
    CHECK(format_percent(37.54) == "37.5 %");
    CHECK(format_percent(0) == "0.0 %");
}
