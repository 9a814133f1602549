// `kvbench reload`: recompute or reload a prefix's KV cache. Its reload time from a slower tier
// against the prefill measured here, and the prefix length where they break even
// (docs/planning.md, "Recompute or reload").
#pragma once

#include "cli/output_options.hpp"

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace kvbench {

// What the user typed; values stay text until run_reload_command parses them, so errors name the flag.
struct ReloadCliOptions {
    std::vector<std::string> models;        // --model NAME,...
    std::optional<std::string> presets;     // --presets FILE
    std::string kv_dtype = "f16";           // --kv-dtype, a list
    std::string prefix = "512,2K,8K";       // -n/--prefix, a list of prefix lengths P
    std::optional<std::string> tier_bw;     // --tier-bw RATE
    std::optional<std::string> tier_path;   // --tier-path DIR|FILE: measure the tier by reading it
    std::optional<std::string> probe_size;  // --probe-size: bytes the tier probe reads; unset: 256MiB
    std::string layers = "1";               // --layers: layers the prefill measures, scaled to L
    std::string n_reps = "3";               // --reps
    std::optional<std::string> threads;     // -t; unset: default_thread_count()
    bool yes = false;                       // -y: prefills of more than an hour
    bool dry_run = false;                   // --dry-run: the prefills' estimates; nothing measured
    OutputCliOptions out;  // -o, -f, --export, -q, -v (output_options.hpp)
};

CLI::App* add_reload_command(CLI::App& app, ReloadCliOptions& options);

// Measures the tier (unless --tier-bw gives it) and each model's prefill at every prefix, then
// writes the sheet; with --dry-run, writes what each prefill would cost instead, measuring and
// probing nothing. Throws ConfigError naming the flag on bad input, before measuring. Returns 0.
int run_reload_command(const ReloadCliOptions& options);

}  // namespace kvbench
