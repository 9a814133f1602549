// A point's variant as text and back: every field variant_of writes is one apply_variant reads.
#include "kvbench/engine/config_variant.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <vector>

namespace kvbench {

namespace {

[[noreturn]] void unreadable(std::string_view variant, std::string_view part, std::string_view why) {
    throw ConfigError(fmt::format("variant '{}': cannot read '{}': {}", variant, part, why));
}

std::vector<std::string_view> split(std::string_view text, char separator) {
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t end = std::min(text.find(separator, start), text.size());
        if (end > start) parts.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return parts;
}

std::size_t whole_number(std::string_view variant, std::string_view part, std::string_view digits) {
    std::size_t value = 0;
    const auto [stop, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (digits.empty() || error != std::errc() || stop != digits.data() + digits.size()) {
        unreadable(variant, part, "not a whole number");
    }
    return value;
}

std::string windows_text(const ModelConfig& config) {
    const std::vector<std::uint32_t>& windows = config.layer_windows;
    if (std::all_of(windows.begin(), windows.end(), [](std::uint32_t w) { return w == 0; })) return "";
    const std::uint32_t widest = *std::max_element(windows.begin(), windows.end());
    const bool one_window = std::all_of(windows.begin(), windows.end(), [&](std::uint32_t w) { return w == 0 || w == widest; });
    if (one_window) return fmt::format("W={}:{}", widest, window_pattern(config));
    return fmt::format("W={}", fmt::join(windows, "/"));
}

}  // namespace

std::string variant_of(const ModelConfig& config) {
    std::vector<std::string> parts;
    if (config.has_experts()) {
        parts.push_back(fmt::format("E={}/{}", config.moe.n_experts, config.moe.n_active));
        parts.push_back(fmt::format("S={}", config.moe.n_shared));
        parts.push_back(fmt::format("Fe={}", config.moe.expert_dim));
        if (config.moe.n_dense_layers != 0) parts.push_back(fmt::format("dense={}", config.moe.n_dense_layers));
    }
    if (config.is_latent()) {
        const MlaShape& mla = config.mla;
        parts.push_back(fmt::format("mla r={} dr={} dn={} dv={}", mla.kv_lora_rank, mla.rope_dim, mla.nope_dim, mla.v_head_dim));
        if (mla.q_lora_rank != 0) parts.push_back(fmt::format("qr={}", mla.q_lora_rank));
    }
    if (std::string windows = windows_text(config); !windows.empty()) parts.push_back(std::move(windows));
    if (config.attention_sinks) parts.emplace_back("sinks");
    return fmt::format("{}", fmt::join(parts, " "));
}

void apply_variant(ModelConfig& config, std::string_view variant) {
    for (const std::string_view part : split(variant, ' ')) {
        const std::size_t equals = part.find('=');
        const std::string_view key = part.substr(0, equals);
        const std::string_view value = equals == std::string_view::npos ? std::string_view() : part.substr(equals + 1);
        const auto number = [&] { return whole_number(variant, part, value); };
        if (part == "mla") {
            continue;  // its widths follow as r=, dr=, dn=, dv=
        } else if (part == "sinks") {
            config.attention_sinks = true;
        } else if (key == "E") {
            const std::vector<std::string_view> counts = split(value, '/');
            if (counts.size() != 2) unreadable(variant, part, "give E=<experts>/<active>");
            config.moe.n_experts = whole_number(variant, part, counts[0]);
            config.moe.n_active = whole_number(variant, part, counts[1]);
        } else if (key == "S") {
            config.moe.n_shared = number();
        } else if (key == "Fe") {
            config.moe.expert_dim = number();
        } else if (key == "dense") {
            config.moe.n_dense_layers = number();
        } else if (key == "r") {
            config.mla.kv_lora_rank = number();
        } else if (key == "dr") {
            config.mla.rope_dim = number();
        } else if (key == "dn") {
            config.mla.nope_dim = number();
        } else if (key == "dv") {
            config.mla.v_head_dim = number();
        } else if (key == "qr") {
            config.mla.q_lora_rank = number();
        } else if (key == "W") {
            const std::size_t colon = value.find(':');
            if (colon != std::string_view::npos) {
                const auto window = static_cast<std::uint32_t>(whole_number(variant, part, value.substr(0, colon)));
                config.layer_windows = layer_windows_for(window, std::string(value.substr(colon + 1)), config.n_layers);
            } else {
                config.layer_windows.clear();
                for (const std::string_view w : split(value, '/')) {
                    config.layer_windows.push_back(static_cast<std::uint32_t>(whole_number(variant, part, w)));
                }
            }
        } else {
            unreadable(variant, part, "not a part of a variant");
        }
    }
}

}  // namespace kvbench
