// Sizes and rates in bytes: every unit, the bits a lower-case b stands for, and every error message.
#include "cli/byte_units.hpp"

#include "kvbench/engine/config.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>

using namespace kvbench;

namespace {

// The ConfigError message parse_byte_size throws, or "" when it does not throw.
std::string size_error_of(std::string_view text) {
    try {
        parse_byte_size(text, "--max-memory");
    } catch (const ConfigError& error) {
        return error.what();
    }
    return "";
}

// The ConfigError message parse_byte_rate throws, or "" when it does not throw.
std::string rate_error_of(std::string_view text, std::string_view option = "--tier-bw") {
    try {
        parse_byte_rate(text, option);
    } catch (const ConfigError& error) {
        return error.what();
    }
    return "";
}

constexpr std::uint64_t bytes_per_gib = std::uint64_t{1} << 30;

}  // namespace

// ---- a byte size (--max-memory) ----

TEST_CASE("a byte size reads IEC units as powers of 1024, the prefix in any case, with or without a space") {
    CHECK(parse_byte_size("1073741824", "--max-memory") == bytes_per_gib);
    CHECK(parse_byte_size("8GiB", "--max-memory") == 8 * bytes_per_gib);
    CHECK(parse_byte_size("8giB", "--max-memory") == 8 * bytes_per_gib);
    CHECK(parse_byte_size("8Gi", "--max-memory") == 8 * bytes_per_gib);
    CHECK(parse_byte_size("8 GiB", "--max-memory") == 8 * bytes_per_gib);
    CHECK(parse_byte_size("512MiB", "--max-memory") == bytes_per_gib / 2);
    CHECK(parse_byte_size("64KiB", "--max-memory") == 64 * 1024);
    CHECK(parse_byte_size("2TiB", "--max-memory") == 2 * 1024 * bytes_per_gib);
    CHECK(parse_byte_size("100B", "--max-memory") == 100);
    CHECK(parse_byte_size("15EiB", "--max-memory") == 15 * (std::uint64_t{1} << 60));
}

TEST_CASE("a byte size reads SI units as powers of 1000: 80GB is 80e9 bytes, 7.4 % less than 80GiB") {
    CHECK(parse_byte_size("80GB", "--budget") == 80'000'000'000);
    CHECK(parse_byte_size("80gB", "--budget") == 80'000'000'000);
    CHECK(parse_byte_size("80 GB", "--budget") == 80'000'000'000);
    CHECK(parse_byte_size("512MB", "--budget") == 512'000'000);
    CHECK(parse_byte_size("64kB", "--budget") == 64'000);
    CHECK(parse_byte_size("2TB", "--budget") == 2'000'000'000'000);
    CHECK(parse_byte_size("1PB", "--budget") == 1'000'000'000'000'000);
    CHECK(parse_byte_size("18EB", "--budget") == 18'000'000'000'000'000'000u);
}

TEST_CASE("a byte size with a lower-case b is refused as bits, naming the bytes to write") {
    const auto bits_error = [](std::string_view text, std::string_view meant) {
        return fmt::format("--max-memory: \"{}\" reads as bits (a lower-case b); write {} for bytes", text, meant);
    };
    CHECK(size_error_of("80Gb") == bits_error("80Gb", "80GB or 80GiB"));
    CHECK(size_error_of("80gb") == bits_error("80gb", "80GB or 80GiB"));
    CHECK(size_error_of("512mb") == bits_error("512mb", "512MB or 512MiB"));
    CHECK(size_error_of("64kb") == bits_error("64kb", "64KB or 64KiB"));
    CHECK(size_error_of("2 Tb") == bits_error("2 Tb", "2TB or 2TiB"));
    CHECK(size_error_of("1Pb") == bits_error("1Pb", "1PB or 1PiB"));
    CHECK(size_error_of("8gib") == bits_error("8gib", "8GiB"));
    CHECK(size_error_of("8GIb") == bits_error("8GIb", "8GiB"));
    CHECK(size_error_of("2000000b") == bits_error("2000000b", "2000000B"));
    // Bits before the size's other rules: the unit is what to fix first.
    CHECK(size_error_of("0Gb") == bits_error("0Gb", "0GB or 0GiB"));
    // A b that is not a unit's stays an unknown unit.
    CHECK(size_error_of("8xb").find("has an unknown unit \"xb\"") != std::string::npos);
    // Every suggestion is read back as bytes, and the prefix's case stays free.
    for (const char* bytes : {"80GB", "80GiB", "8GiB", "64KB", "80gB", "8giB", "8gIB", "8gi", "2000000B"}) {
        CAPTURE(bytes);
        CHECK(size_error_of(bytes).empty());
    }
}

TEST_CASE("a byte size's bare K, M, G and T are binary, as the axes' suffixes and dd's are") {
    CHECK(parse_byte_size("8G", "--max-memory") == 8 * bytes_per_gib);
    CHECK(parse_byte_size("8g", "--max-memory") == 8 * bytes_per_gib);
    CHECK(parse_byte_size("64k", "--max-memory") == 64 * 1024);
    CHECK(parse_byte_size("3M", "--max-memory") == 3 * 1024 * 1024);
    CHECK(parse_byte_size("1T", "--max-memory") == 1024 * bytes_per_gib);
}

TEST_CASE("a byte size without a unit below 1 MiB is refused, naming the units") {
    CHECK(size_error_of("80") ==
          "--max-memory: \"80\" would be 80 bytes: give the unit (80GB = 80·10^9 bytes, 80GiB = 80·2^30), or "
          "write 80B for bytes");
    CHECK(size_error_of("1048575") ==
          "--max-memory: \"1048575\" would be 1048575 bytes: give the unit (1048575GB = 1048575·10^9 bytes, "
          "1048575GiB = 1048575·2^30), or write 1048575B for bytes");
    CHECK(parse_byte_size("1048576", "--max-memory") == 1024 * 1024);
    CHECK(parse_byte_size("80B", "--max-memory") == 80);
}

TEST_CASE("a byte size that is zero, negative or fractional is refused with the rule") {
    CHECK(size_error_of("0") == "--max-memory: \"0\" must be at least 1 byte (use e.g. 8GiB, 512MiB or a number of bytes)");
    CHECK(size_error_of("0GiB") == "--max-memory: \"0GiB\" must be at least 1 byte (use e.g. 8GiB, 512MiB or a number of bytes)");
    CHECK(size_error_of("-1GiB") == "--max-memory: \"-1GiB\" must be at least 1 byte");
    CHECK(size_error_of("1.5GiB") ==
          "--max-memory: \"1.5GiB\" is not a whole number of bytes or units (write 1536MiB, not 1.5GiB)");
}

TEST_CASE("a byte size that is not one names the syntax") {
    for (const char* text : {"lots", "GiB", "8GB/s", "8  GiB", "0x10", "+8G", " 8G", "8G "}) {
        CAPTURE(text);
        CHECK(size_error_of(text) ==
              fmt::format("--max-memory: \"{}\" is not a size (use e.g. 8GiB, 512MiB or a number of bytes)", text));
    }
    CHECK(size_error_of("") == "--max-memory: the value is empty (use e.g. 8GiB, 512MiB or a number of bytes)");
}

TEST_CASE("a byte size with an unknown unit names the unit and both families") {
    for (const char* unit : {"XiB", "bytes", "GIBS", "iB"}) {
        const std::string text = fmt::format("8{}", unit);
        CAPTURE(text);
        CHECK(size_error_of(text) == fmt::format("--max-memory: \"{}\" has an unknown unit \"{}\" (use B, KB, MB, GB, "
                                                 "TB = 10^3, 10^6, 10^9, 10^12 bytes, or KiB, MiB, GiB, TiB = 2^10, "
                                                 "2^20, 2^30, 2^40)",
                                                 text, unit));
    }
}

TEST_CASE("a byte size beyond 64 bits is refused, in digits or through its unit") {
    for (const char* text : {"16EiB", "18446744073709551616", "99999999999GiB", "18446744073709551615k"}) {
        CAPTURE(text);
        CHECK(size_error_of(text) == fmt::format("--max-memory: \"{}\" is more than 64 bits can count (16 EiB)", text));
    }
    CHECK(parse_byte_size("18446744073709551615", "--max-memory") == ~std::uint64_t{0});
}

// ---- a byte rate (--tier-bw, --hardware bw=) ----

TEST_CASE("a rate in bits (lower-case b) is refused with its bytes, in the unit it was written in") {
    CHECK(rate_error_of("2Gb/s") == "--tier-bw 2Gb/s: b is bits; write 0.25GB/s (bytes)");
    CHECK(rate_error_of("3.35tb/s", "--hardware bw=") ==
          "--hardware bw=3.35tb/s: b is bits; write 0.41875TB/s (bytes)");
    // A decimal takes SI units only: a binary rate in bits comes back whole in a smaller unit.
    CHECK(rate_error_of("1Gib/s") == "--tier-bw 1Gib/s: b is bits; write 128MiB/s (bytes)");
    // Every suggestion is read back as the bytes it names.
    CHECK(parse_byte_rate("0.41875TB/s", "--tier-bw") == doctest::Approx(3.35e12 / 8));
    CHECK(parse_byte_rate("128MiB/s", "--tier-bw") == doctest::Approx(1073741824.0 / 8));
    // B is bytes in any prefix's case.
    CHECK(parse_byte_rate("2GB/s", "--tier-bw") == doctest::Approx(2e9));
    CHECK(parse_byte_rate("2gB/s", "--tier-bw") == doctest::Approx(2e9));
    CHECK(parse_byte_rate("2.5gB/s", "--tier-bw") == doctest::Approx(2.5e9));
}

TEST_CASE("a rate is at most 1000PB/s, however it is written") {
    CHECK(parse_byte_rate("1000PB/s", "--tier-bw") == doctest::Approx(1e18));
    CHECK(parse_byte_rate("1000000000000000000B/s", "--tier-bw") == doctest::Approx(1e18));
    for (const std::string rate : {"1001PB/s", "889PiB/s", "1000000000000000001B/s", "1000.001PB/s", "1e4PB/s"}) {
        CAPTURE(rate);
        CHECK(rate_error_of(rate).find("must be at most 1000PB/s") != std::string::npos);
    }
}

TEST_CASE("a rate reads whole numbers in any unit a size takes, and decimals in SI units") {
    CHECK(parse_byte_rate("3350GB/s", "--tier-bw") == doctest::Approx(3.35e12));
    CHECK(parse_byte_rate("800GiB/s", "--tier-bw") == doctest::Approx(800.0 * bytes_per_gib));
    CHECK(parse_byte_rate("2 GB/s", "--tier-bw") == doctest::Approx(2e9));
    CHECK(parse_byte_rate("4G/s", "--tier-bw") == doctest::Approx(4.0 * bytes_per_gib));
    CHECK(parse_byte_rate("1048576/s", "--tier-bw") == doctest::Approx(1048576));
    CHECK(parse_byte_rate("3.35TB/s", "--tier-bw") == doctest::Approx(3.35e12));
    CHECK(parse_byte_rate("2.5e3MB/s", "--tier-bw") == doctest::Approx(2.5e9));
}

TEST_CASE("a rate's error is one line: the option, the value, the rule for rates and examples") {
    const std::string examples = "(e.g. 3.35TB/s, 3350GB/s or 800GiB/s)";
    for (const char* zero : {"0GB/s", "0/s", "0.0TB/s", "-2GB/s", "1e-999GB/s"}) {
        CAPTURE(zero);
        CHECK(rate_error_of(zero) == fmt::format("--tier-bw {}: must be more than 0 bytes per second {}", zero, examples));
    }
    for (const char* huge : {"1000000PB/s", "99999999999999999999GB/s", "16EiB/s", "1e999GB/s"}) {
        CAPTURE(huge);
        CHECK(rate_error_of(huge, "--hardware bw=") ==
              fmt::format("--hardware bw={}: must be at most 1000PB/s {}", huge, examples));
    }
    for (const char* garbled : {"lots/s", "GB/s", "+2GB/s", "0x10GB/s", "2-4GB/s", "inf/s"}) {
        CAPTURE(garbled);
        CHECK(rate_error_of(garbled) == fmt::format("--tier-bw {}: must be a number and a unit per second {}", garbled,
                                                    examples));
    }
    CHECK(rate_error_of("2GB") == "--tier-bw 2GB: must be a byte rate ending in /s " + examples);
    CHECK(rate_error_of("1.5GiB/s") ==
          "--tier-bw 1.5GiB/s: a decimal rate takes an SI unit: KB, MB, GB, TB or PB per second " + examples);
    CHECK(rate_error_of("8XiB/s") == "--tier-bw 8XiB/s: has an unknown unit \"XiB\": a rate takes KB, MB, GB, TB, "
                                     "PB (10^3 ... 10^15 bytes), KiB, MiB, GiB, TiB, PiB (2^10 ... 2^50) or B per "
                                     "second " +
                                         examples);
    CHECK(rate_error_of("80/s") == "--tier-bw 80/s: would be 80 bytes per second: give the unit (80GB/s = 80·10^9 "
                                   "bytes per second, 80GiB/s), or write 80B/s for bytes");
}
