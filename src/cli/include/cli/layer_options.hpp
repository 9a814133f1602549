// What each layer of `sweep` and `generate` is (docs/model.md, "The full layer"): the block, its
// MLP width, the weights' element type and the experts, laid over the grid's spec.
#pragma once

#include "kvbench/measure/sweep.hpp"

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace kvbench {

// What the user typed; text until apply_layer_options parses it.
struct LayerCliOptions {
    std::optional<std::string> block;           // --block LIST of attn, full; unset: the model's, else attn
    std::optional<std::string> ffn_dim;         // --ffn-dim LIST; unset: the model's
    std::string weight_dtype = "f32";           // --weight-dtype LIST
    std::optional<std::string> experts;         // --experts E
    std::optional<std::string> experts_active;  // --experts-active K
    std::optional<std::string> shared_experts;  // --shared-experts S
    std::optional<std::string> expert_dim;      // --expert-dim Fe
};

// Registers --block, --ffn-dim, --weight-dtype, --experts, --experts-active, --shared-experts
// and --expert-dim on `command`.
void add_layer_options(CLI::App& command, LayerCliOptions& options);

// Sets spec's base, blocks, MLP widths and weight types. With `model` (--model or
// --model-config: kvbench::model_config_of of its preset) the spec starts from it: its block
// (full when its MLP is known), MLP width, experts, sinks and windows, each still overridable
// (its latent attention is apply_latent_options' part).
// Call it before apply_attention_options, whose --window and --sinks win. Throws ConfigError
// naming the option: an unknown --block or --weight-dtype, a number out of range, --ffn-dim or
// --experts without a full block to put them in, --block full with neither.
void apply_layer_options(const LayerCliOptions& options, const std::optional<ModelConfig>& model, SweepSpec& spec);

// The --weight-dtype line of sweep's and generate's --help.
inline constexpr const char* weight_dtype_help =
    "Weight element types (LIST of f32, bf16, f16, int8; int8 with one f32 scale per output "
    "channel), an axis: every weight matrix is drawn in f32 and stored in it, the norms stay "
    "f32. Rows of a reduced type report weight_rel_error against the same step with f32 weights";

}  // namespace kvbench
