// Latent attention (MLA) on `sweep` and `generate`: its widths, typed or from --model, laid over
// every point of the grid.
#pragma once

#include "kvbench/engine/config.hpp"
#include "kvbench/measure/sweep.hpp"

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace kvbench {

// What the user typed, text until apply_latent_options parses it, and the model's widths.
struct LatentCliOptions {
    std::optional<std::string> kv_lora_rank;  // --kv-lora-rank r
    std::optional<std::string> rope_dim;      // --rope-dim d_r (--qk-rope-head-dim)
    std::optional<std::string> nope_dim;      // --nope-dim d_n (--qk-nope-head-dim)
    std::optional<std::string> v_head_dim;    // --v-head-dim d_v
    std::optional<std::string> q_lora_rank;   // --q-lora-rank
    MlaShape model;  // --model or --model-config's latent attention (add_model_options sets it); none: r = 0
    bool kv_heads_typed = false;  // -g given on the command line (not the default list, nor a preset's)
};

// Registers --kv-lora-rank, --rope-dim, --nope-dim, --v-head-dim and --q-lora-rank on `command`,
// and notes after the parse whether its --kv-heads was typed.
void add_latent_options(CLI::App& command, LatentCliOptions& options);

// Sets spec.base.mla to the model's widths with each typed one in its place; a latent grid has
// one KV vector per position for all heads, so its --kv-heads axis becomes {1}. Returns the
// note that says what the latent cache saves against the multi-head cache it replaces (for
// each --heads value), or nothing when the grid is not latent.
// Throws ConfigError naming the option for a width that is not a whole number from 1 to 2^20,
// for a width given without --kv-lora-rank (nor a latent --model), and for a typed list of
// --kv-heads on a latent grid.
std::optional<std::string> apply_latent_options(const LatentCliOptions& options, SweepSpec& spec);

}  // namespace kvbench
