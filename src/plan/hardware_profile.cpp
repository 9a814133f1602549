// Parsing and checking kvbench's hardware profile file (data/hardware.json).
#include "kvbench/plan/hardware_profile.hpp"

#include "kvbench/engine/ascii_case.hpp"
#include "kvbench/engine/config.hpp"
#include "kvbench/files/json_unique_keys.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>

namespace kvbench {

namespace {

using nlohmann::json;

// The file's units: GB as 10^9 bytes, bandwidth in GB/s, peaks in TFLOP/s.
constexpr double giga = 1e9;
constexpr double tera = 1e12;

struct ProfileContext {
    std::string_view file_name;
    std::string profile;  // "'h100-sxm'", or "#3" before the name is known

    [[noreturn]] void fail(std::string_view field, std::string_view rule) const {
        throw ConfigError(fmt::format("{}: profile {}: field '{}': {}", file_name, profile, field, rule));
    }
};

std::string text_field(const json& record, std::string_view field, const ProfileContext& context) {
    const auto it = record.find(field);
    if (it == record.end()) context.fail(field, "missing");
    if (!it->is_string() || it->get<std::string>().empty()) context.fail(field, "must be a non-empty string");
    return it->get<std::string>();
}

// A positive finite number, or null when `nullable`.
std::optional<double> number_field(const json& object, std::string_view field, const ProfileContext& context,
                                   std::string_view shown_as, bool nullable) {
    const auto it = object.find(field);
    if (it == object.end()) context.fail(shown_as, nullable ? "missing (null if not published)" : "missing");
    if (it->is_null() && nullable) return std::nullopt;
    if (!it->is_number() || !(it->get<double>() > 0) || !std::isfinite(it->get<double>())) {
        context.fail(shown_as, fmt::format("must be a positive number{}, not {}", nullable ? " or null" : "",
                                           it->dump()));
    }
    // GB, GB/s and TFLOP/s from a millionth to a billion: past either end no device is near, and
    // bytes or times computed from them would round to 0 or leave the range of an integer.
    if (it->get<double>() < 1e-6 || it->get<double>() > 1e9) {
        context.fail(shown_as, fmt::format("must be from 1e-06 to 1e+09, not {}", it->dump()));
    }
    return it->get<double>();
}

HardwareProfile parse_profile(const json& record, const ProfileContext& numbered) {
    if (!record.is_object()) numbered.fail("(record)", "must be an object {\"name\": ..., \"bandwidth_gb_per_s\": ...}");
    ProfileContext context = numbered;
    HardwareProfile profile;
    profile.name = text_field(record, "name", context);
    context.profile = fmt::format("'{}'", profile.name);
    profile.description = text_field(record, "description", context);
    profile.kind = text_field(record, "kind", context);
    profile.status = text_field(record, "status", context);
    if (profile.status != "sourced" && profile.status != "partial") {
        context.fail("status", fmt::format("must be sourced or partial, not {}", profile.status));
    }
    if (const std::optional<double> memory_gb = number_field(record, "memory_gb", context, "memory_gb", true)) {
        profile.memory_bytes = static_cast<std::uint64_t>(std::llround(*memory_gb * giga));
    }
    profile.bandwidth_bytes_per_s = *number_field(record, "bandwidth_gb_per_s", context, "bandwidth_gb_per_s", false) * giga;
    const auto peaks = record.find("peak_tflops");
    if (peaks == record.end() || !peaks->is_object()) {
        context.fail("peak_tflops", "must be an object {\"f32\": ..., \"bf16\": ..., \"fp8\": ..., \"int8\": ...}");
    }
    for (const ComputeType type : compute_types) {
        const std::string key = compute_type_name(type);
        if (const std::optional<double> tflops = number_field(*peaks, key, context, "peak_tflops." + key, true)) {
            profile.peak_flops[static_cast<int>(type)] = *tflops * tera;
        }
    }
    return profile;
}

}  // namespace

const char* compute_type_name(ComputeType type) {
    switch (type) {
        case ComputeType::f32: return "f32";
        case ComputeType::bf16: return "bf16";
        case ComputeType::fp8: return "fp8";
        case ComputeType::int8: return "int8";
    }
    return "?";
}

ComputeType compute_type_of(KvDtype weight_dtype) {
    switch (weight_dtype) {
        case KvDtype::f32: return ComputeType::f32;
        case KvDtype::f16:
        case KvDtype::bf16:
        case KvDtype::int4:
        case KvDtype::q8_0:  // weight-only block types compute in bf16, as int4 does
        case KvDtype::q4_0: return ComputeType::bf16;
        case KvDtype::fp8:
        case KvDtype::e4m3:
        case KvDtype::e5m2: return ComputeType::fp8;
        case KvDtype::int8: return ComputeType::int8;
    }
    return ComputeType::bf16;
}

std::vector<HardwareProfile> parse_hardware_profiles(std::string_view json_text, std::string_view file_name) {
    json document;
    try {
        document = parse_json_unique_keys<json>(json_text);
    } catch (const json::parse_error& error) {
        throw ConfigError(fmt::format("{}: not JSON: {}", file_name, error.what()));
    } catch (const RefusedJson& error) {
        throw ConfigError(fmt::format("{}: {}", file_name, error.what()));
    }
    if (!document.is_object() || !document.contains("profiles") || !document["profiles"].is_array()) {
        throw ConfigError(fmt::format("{}: must be an object with a \"profiles\" array", file_name));
    }
    std::vector<HardwareProfile> profiles;
    std::size_t index = 0;
    for (const json& record : document["profiles"]) {
        ++index;
        HardwareProfile profile = parse_profile(record, ProfileContext{file_name, fmt::format("#{}", index)});
        // --hardware reads a name in any case (find_hardware).
        if (const auto clash = name_clash(profiles, profile.name, "profile", "--hardware")) {
            ProfileContext{file_name, fmt::format("'{}'", profile.name)}.fail("name", *clash);
        }
        profiles.push_back(std::move(profile));
    }
    if (profiles.empty()) throw ConfigError(fmt::format("{}: the \"profiles\" array is empty", file_name));
    return profiles;
}

const std::vector<HardwareProfile>& builtin_hardware() {
    // A broken data/hardware.json fails the build's tests, not a user's run.
    static const std::vector<HardwareProfile> profiles = parse_hardware_profiles(builtin_hardware_json(), "data/hardware.json");
    return profiles;
}

const HardwareProfile* find_hardware(const std::vector<HardwareProfile>& profiles, std::string_view name) {
    for (const HardwareProfile& profile : profiles) {
        // In any case: H100-SXM is h100-sxm.
        if (equal_ignoring_case(profile.name, name)) return &profile;
    }
    return nullptr;
}

}  // namespace kvbench
