// A device the planner predicts for without running on it: its memory, peak bandwidth and dense
// peak FLOP/s per element type, from data/hardware.json or typed on the command line
// (docs/hardware.md).
#pragma once

#include "kvbench/engine/kv_dtype.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvbench {

// The element types a device's matrix units publish peaks for; the planner picks the one the
// weights are stored in (compute_type_of).
enum class ComputeType { f32, bf16, fp8, int8 };

inline constexpr ComputeType compute_types[] = {ComputeType::f32, ComputeType::bf16, ComputeType::fp8,
                                                ComputeType::int8};

const char* compute_type_name(ComputeType type);  // "f32", "bf16", "fp8", "int8"

// The matrix units a step whose weights are stored in `weight_dtype` runs on: f16 and bf16 share
// a peak; int4 weights are widened to 16 bits before the product, as weight-only quantisation
// kernels do, so they run at the bf16 peak.
ComputeType compute_type_of(KvDtype weight_dtype);

struct HardwareProfile {
    std::string name;         // what --hardware takes: "h100-sxm"; "custom" for a typed one
    std::string description;  // "NVIDIA H100 SXM 80GB"
    std::string kind;         // gpu, apple, cpu or custom
    std::optional<std::uint64_t> memory_bytes;  // unset: not a property of the part (a CPU socket)
    double bandwidth_bytes_per_s = 0;           // peak memory bandwidth
    // Dense peak FLOP/s (ops/s for int8) per ComputeType, by its index; unset: not published.
    std::optional<double> peak_flops[4];
    std::string status;  // sourced, partial (docs/hardware.md) or user

    std::optional<double> peak_flops_of(ComputeType type) const { return peak_flops[static_cast<int>(type)]; }
};

// Reads a profile file's text (data/hardware.json's schema) and checks every record. Throws
// ConfigError "<file_name>: profile '<name>': field '<field>': <rule>" on the first broken one:
// a missing field, a wrong type, a bandwidth or FLOP/s that is not a positive number, a
// duplicated name, or text that is not JSON.
std::vector<HardwareProfile> parse_hardware_profiles(std::string_view json_text, std::string_view file_name);

// The profiles compiled into the binary from data/hardware.json, parsed once.
const std::vector<HardwareProfile>& builtin_hardware();

// The text of data/hardware.json as compiled in (generated at build time).
std::string_view builtin_hardware_json();

// The profile called `name`, exactly, or nullptr.
const HardwareProfile* find_hardware(const std::vector<HardwareProfile>& profiles, std::string_view name);

}  // namespace kvbench
