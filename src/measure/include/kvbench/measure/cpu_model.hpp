// The CPU's name for a result's provenance, read from /proc/cpuinfo.
#pragma once

#include <istream>
#include <string>

namespace kvbench {

// The CPU /proc/cpuinfo describes first: its "model name" (x86) or "Hardware" (some arm64
// boards). Most arm64 kernels, as on Graviton or Ampere servers, give neither, only the MIDR
// fields; the CPU is then named from them, with the codes themselves, so that two different
// arm64 cores never share a name: "Arm Neoverse-N1 (implementer 0x41, part 0xd0c, r3p1)". All
// arm64 builds run the portable path (kernel_isa), so this name is what tells their results
// apart. Else "Processor", else "unknown".
std::string cpu_model_from_cpuinfo(std::istream& cpuinfo);

// cpu_model_from_cpuinfo of this machine's /proc/cpuinfo.
std::string read_cpu_model();

}  // namespace kvbench
