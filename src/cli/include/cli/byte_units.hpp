// Reading amounts of bytes: a size (--budget 80GB, --max-memory 8GiB) and a rate (--tier-bw 2GB/s,
// --hardware bw=3.35TB/s), in the units docs/memory.md and docs/hardware.md give.
#pragma once

#include <cstdint>
#include <string_view>

namespace kvbench {

// A byte count: digits, then optionally a space and a unit, its prefix in any case and its B
// upper case: B; SI KB, MB, GB, TB, PB, EB = 10^3 ... 10^18 ("80GB" is 80·10^9 bytes, as a GPU's
// 80 GB is); IEC KiB, MiB, GiB, TiB, PiB, EiB (or Ki, Mi, ...) = 2^10 ... 2^60; a bare K, M, G,
// T, P, E is IEC ("8G" is 8 GiB, as dd and docker read it, and as -n 4K is 4096). A number
// without a unit is bytes, and must be at least 1 MiB: "--budget 80" is a unit left out, not
// 80 bytes (80B says so). Throws ConfigError naming `option` and the text on: nothing, a
// fraction (1.5GiB), a sign, a unit in bits (80Gb, 8gib: a lower-case b, with the bytes to
// write, 80GB or 80GiB), an unknown unit, 0, a unitless number below 1 MiB, or a size that does
// not fit in 64 bits.
std::uint64_t parse_byte_size(std::string_view text, std::string_view option);

// A byte rate ending in /s, in bytes per second: whole numbers in any unit a size takes
// (3350GB/s, 800GiB/s), a decimal with an SI unit (3.35TB/s); the B upper case, since a
// lower-case b is bits (2Gb/s is refused, its bytes suggested: 0.25GB/s). More than 0 and at
// most 1000PB/s in every spelling. Throws ConfigError naming `option` ("--tier-bw", or
// "--hardware bw=") and the value, with the rule and examples, on anything else.
double parse_byte_rate(std::string_view value, std::string_view option);

}  // namespace kvbench
