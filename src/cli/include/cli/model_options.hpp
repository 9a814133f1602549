// --model NAME, --model-config FILE and --presets FILE: naming a real model on the command line.
#pragma once

#include "kvbench/plan/model_preset.hpp"

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvbench {

// The presets of --presets FILE, or the built-in ones when unset. Throws ConfigError naming
// --presets when the file cannot be read, and the file, model and field when a record is broken.
std::vector<ModelPreset> load_presets(const std::optional<std::string>& presets_file);

// Adds --presets FILE, read by load_presets, to a command that names presets.
void add_presets_option(CLI::App& command, std::optional<std::string>& presets_file);

// The preset called `name`, in any case (Llama-3-8B is llama-3-8b). Throws ConfigError
// "--model <name>: unknown model (did you mean <closest>?); `kvbench models` lists them" otherwise.
const ModelPreset& find_model(const std::vector<ModelPreset>& presets, std::string_view name);

// find_model for each of `names`, in their order, a model named twice (in any case) once, as a
// repeated --kv-dtype is measured once.
std::vector<ModelPreset> find_models(const std::vector<ModelPreset>& presets, const std::vector<std::string>& names);

// A Hugging Face config.json, named after its directory (".../Llama-3-8B/config.json" is
// "Llama-3-8B"), or a file of another name after that name ("llama-3-8b.json": "llama-3-8b"). Throws ConfigError naming --model-config.
ModelPreset read_model_config(const std::string& path);

// Adds --model and --model-config to `sweep` or `generate`. After parsing, the model's D, H, G
// and L replace the defaults of the given option values, unless the user typed that flag
// (`--model llama-3-8b --layers 2` keeps two layers). A model whose head dim is not D / H
// (Gemma-7B) also sets --head-dim. Call it after --head-dim is registered.
// `note` receives what the run leaves out of the model (unapplied_parts_note), for the command
// to print; `model_config` the rest of it (model_config_of: block, MLP, experts, windows, sinks), which
// apply_layer_options lays under the grid. `latent`, when given, receives the model's latent
// attention (the command runs it, so the note leaves it out).
void add_model_options(CLI::App& command, std::string& dim, std::string& heads, std::string& kv_heads,
                       std::string& layers, std::optional<std::string>& head_dim, std::optional<std::string>& note,
                       std::optional<ModelConfig>& model_config, MlaShape* latent = nullptr);

}  // namespace kvbench
