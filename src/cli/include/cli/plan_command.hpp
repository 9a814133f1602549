// `kvbench plan`: the largest batch and the longest context that meet a time per output token
// and fit a device, predicted from exact counts, published peaks and this machine's measured
// efficiency (docs/planning.md).
#pragma once

#include "cli/output_options.hpp"

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace kvbench {

// What the user typed; values stay text until run_plan_command parses them, so errors name the flag.
struct PlanCliOptions {
    std::optional<std::string> model;         // --model NAME
    std::optional<std::string> model_config;  // --model-config FILE
    std::optional<std::string> presets;       // --presets FILE
    std::optional<std::string> params;        // --params, for --model-config
    std::string seq = "4096";
    std::string batch = "1";
    std::optional<std::string> tpot;          // --tpot 50ms (required)
    std::optional<std::string> hardware;      // --hardware NAME or bw=...,flops=...,mem=... (required)
    std::optional<std::string> mem;           // --mem SIZE: per-device memory instead of the profile's
    std::string kv_dtype = "f16";
    std::string weight_dtype = "f16";
    std::string tp = "1";
    std::string pp = "1";
    std::optional<std::string> calibrate;     // --calibrate FILE
    std::optional<std::string> efficiency;    // --efficiency E or bw=E,compute=E
    std::optional<std::string> shared_prefix; // --shared-prefix P: tokens every sequence starts with
    OutputCliOptions out;  // -o, -f, --export, -q, -v (output_options.hpp)
};

CLI::App* add_plan_command(CLI::App& app, PlanCliOptions& options);

// Predicts every batch and context asked and writes the sheet. Throws ConfigError naming the
// flag on bad input, before writing anything. Returns 0.
int run_plan_command(const PlanCliOptions& options);

}  // namespace kvbench
