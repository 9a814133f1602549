// --hardware: a named profile (`kvbench hardware` lists them) or one typed as
// bw=RATE,flops=N[,mem=SIZE] (docs/hardware.md, "A device of your own").
#pragma once

#include "kvbench/plan/hardware_profile.hpp"

#include <string_view>

namespace kvbench {

// A text with '=' is a typed profile, named "custom": bw= a byte rate (3.35TB/s, 3350GB/s,
// 800GiB/s; a decimal needs an SI unit), flops= a dense peak applied to every element type
// (989T, 989e12, 67.5T; K, M, G, T, P = 10^3 ... 10^15), mem= a byte size as --budget reads it
// (80GB, 80GiB). bw is required, the others optional, each at most once. Any other text names a
// built-in profile or, failing that, a profile file: JSON in data/hardware.json's schema with
// one profile, or KEY=VALUE lines (the typed keys and name=, # comments). Throws ConfigError
// naming --hardware, the part and the rule, with the nearest profile name for an unknown one.
HardwareProfile parse_hardware_option(std::string_view text);

}  // namespace kvbench
