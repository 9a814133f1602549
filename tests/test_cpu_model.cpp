// cpu_model_from_cpuinfo: the CPU's name in a result's provenance, from /proc/cpuinfo as x86 and
// arm64 kernels write it.
#include "kvbench/measure/cpu_model.hpp"

#include <doctest/doctest.h>

#include <sstream>
#include <string>

namespace {

std::string model_of(const std::string& cpuinfo) {
    std::istringstream in(cpuinfo);
    return kvbench::cpu_model_from_cpuinfo(in);
}

// Two processors of an arm64 server whose kernel writes only the MIDR fields (a Graviton 2).
const std::string neoverse_n1 =
    "processor\t: 0\nBogoMIPS\t: 243.75\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32\n"
    "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\n"
    "CPU revision\t: 1\n\n"
    "processor\t: 1\nBogoMIPS\t: 243.75\nCPU implementer\t: 0x41\nCPU architecture: 8\n"
    "CPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n";

}  // namespace

TEST_CASE("an x86 cpu is named by its model name") {
    CHECK(model_of("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9B45\n"
                   "processor\t: 1\nmodel name\t: AMD EPYC 9B45\n") == "AMD EPYC 9B45");
}

TEST_CASE("an arm64 cpu with only the midr fields is named from them, codes included") {
    CHECK(model_of(neoverse_n1) == "Arm Neoverse-N1 (implementer 0x41, part 0xd0c, r3p1)");
    // A Graviton 3 differs in its part, and so in its name.
    std::string neoverse_v1 = neoverse_n1;
    for (std::size_t at = neoverse_v1.find("0xd0c"); at != std::string::npos; at = neoverse_v1.find("0xd0c")) {
        neoverse_v1.replace(at, 5, "0xd40");
    }
    CHECK(model_of(neoverse_v1) == "Arm Neoverse-V1 (implementer 0x41, part 0xd40, r3p1)");
    // A maker the table knows, a core it does not; then neither.
    CHECK(model_of("CPU implementer\t: 0x61\nCPU variant\t: 0x1\nCPU part\t: 0x22\nCPU revision\t: 1\n") ==
          "Apple arm64 CPU (implementer 0x61, part 0x022, r1p1)");
    CHECK(model_of("CPU implementer\t: 0x6d\nCPU part\t: 0xd49\n") == "arm64 CPU (implementer 0x6d, part 0xd49)");
}

TEST_CASE("the midr fields come before an arm64 kernel's generic Processor line") {
    CHECK(model_of("Processor\t: AArch64 Processor rev 1 (aarch64)\n" + neoverse_n1) ==
          "Arm Neoverse-N1 (implementer 0x41, part 0xd0c, r3p1)");
    CHECK(model_of("Processor\t: AArch64 Processor rev 1 (aarch64)\nHardware\t: Qualcomm SDM845\n") ==
          "Qualcomm SDM845");
    CHECK(model_of("Processor\t: AArch64 Processor rev 1 (aarch64)\n") == "AArch64 Processor rev 1 (aarch64)");
}

TEST_CASE("cpuinfo without a name or readable midr fields gives unknown") {
    CHECK(model_of("") == "unknown");
    CHECK(model_of("model name\t:\n") == "unknown");
    CHECK(model_of("CPU implementer\t: arm\nCPU part\t: 0xd0c\n") == "unknown");
    CHECK(model_of("CPU implementer\t: 0x41\n") == "unknown");
}
