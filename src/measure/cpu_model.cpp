#include "kvbench/measure/cpu_model.hpp"

#include "trim.hpp"

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <optional>
#include <span>
#include <string_view>
#include <utility>

namespace kvbench {
namespace {

// /proc/cpuinfo writes the MIDR fields in hex ("0x41") or, for the revision, in decimal.
std::optional<unsigned> parse_number(const std::string& text) {
    if (text.empty()) return std::nullopt;
    std::size_t used = 0;
    try {
        const unsigned long value = std::stoul(text, &used, 0);
        if (used != text.size() || value > 0xffffu) return std::nullopt;
        return static_cast<unsigned>(value);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

using CodeNames = std::span<const std::pair<unsigned, std::string_view>>;

// The name of code in names; empty when it is not there.
std::string_view name_of(unsigned code, CodeNames names) {
    for (const auto& [known, name] : names) {
        if (known == code) return name;
    }
    return {};
}

// The implementers and Arm's own cores most arm64 servers and boards use (the codes are
// Linux's arch/arm64/include/asm/cputype.h); any other is named by its codes alone.
constexpr std::pair<unsigned, std::string_view> implementer_names[] = {
    {0x41, "Arm"}, {0x42, "Broadcom"}, {0x43, "Cavium"}, {0x46, "Fujitsu"},
    {0x48, "HiSilicon"}, {0x4e, "NVIDIA"}, {0x61, "Apple"}, {0xc0, "Ampere"},
};
constexpr std::pair<unsigned, std::string_view> arm_core_names[] = {
    {0xd03, "Cortex-A53"}, {0xd07, "Cortex-A57"}, {0xd08, "Cortex-A72"}, {0xd0b, "Cortex-A76"},
    {0xd0c, "Neoverse-N1"}, {0xd0d, "Cortex-A77"}, {0xd40, "Neoverse-V1"}, {0xd41, "Cortex-A78"},
    {0xd47, "Cortex-A710"}, {0xd49, "Neoverse-N2"}, {0xd4f, "Neoverse-V2"}, {0xd84, "Neoverse-V3"},
    {0xd8e, "Neoverse-N3"},
};

std::optional<std::string> arm64_name(const std::map<std::string, std::string, std::less<>>& fields) {
    const auto field = [&](std::string_view key) -> std::optional<unsigned> {
        const auto found = fields.find(key);
        return found == fields.end() ? std::nullopt : parse_number(found->second);
    };
    const std::optional<unsigned> implementer = field("CPU implementer");
    const std::optional<unsigned> part = field("CPU part");
    if (!implementer || !part) return std::nullopt;
    std::string codes = fmt::format("implementer {:#04x}, part {:#05x}", *implementer, *part);
    const std::optional<unsigned> variant = field("CPU variant");
    const std::optional<unsigned> revision = field("CPU revision");
    if (variant && revision) codes += fmt::format(", r{}p{}", *variant, *revision);

    const std::string_view maker = name_of(*implementer, implementer_names);
    const std::string_view core = *implementer == 0x41 ? name_of(*part, arm_core_names) : std::string_view{};
    if (maker.empty()) return fmt::format("arm64 CPU ({})", codes);
    if (core.empty()) return fmt::format("{} arm64 CPU ({})", maker, codes);
    return fmt::format("{} {} ({})", maker, core, codes);
}

}  // namespace

std::string cpu_model_from_cpuinfo(std::istream& cpuinfo) {
    // Each field's first value, the first processor's: on a big.LITTLE board the others differ.
    std::map<std::string, std::string, std::less<>> fields;
    std::string line;
    while (std::getline(cpuinfo, line)) {
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        fields.try_emplace(trim(std::string_view(line).substr(0, colon)),
                           trim(std::string_view(line).substr(colon + 1)));
    }
    const auto named = [&](std::string_view key) -> std::optional<std::string> {
        const auto found = fields.find(key);
        if (found == fields.end() || found->second.empty()) return std::nullopt;
        return found->second;
    };
    // "Processor" last: old arm64 kernels write "AArch64 Processor rev 1 (aarch64)" there for
    // every core, which the MIDR fields beside it tell apart.
    if (auto model = named("model name")) return *model;
    if (auto hardware = named("Hardware")) return *hardware;
    if (auto arm64 = arm64_name(fields)) return *arm64;
    return named("Processor").value_or("unknown");
}

std::string read_cpu_model() {
    std::ifstream cpuinfo("/proc/cpuinfo");
    return cpu_model_from_cpuinfo(cpuinfo);
}

}  // namespace kvbench
