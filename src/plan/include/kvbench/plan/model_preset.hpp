// A real model's layers (widths, heads, KV heads, head dim, windows per layer, latent attention,
// MLP width, experts) and parameter count, read from kvbench's preset file or from a Hugging Face
// config.json (docs/memory.md).
#pragma once

#include "kvbench/engine/config.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvbench {

struct ModelPreset {
    std::string name;                // "llama-3-8b": what --model takes
    std::string source;              // where the numbers come from: "<hf repo>/<file>", or the file read
    std::uint64_t n_layers = 0;      // L
    std::uint64_t model_dim = 0;     // D, the residual stream's width
    std::uint64_t n_heads = 0;       // H, query heads
    std::uint64_t n_kv_heads = 0;    // G, heads that are cached; divides H
    std::uint64_t head_dim = 0;      // dh; not always D / H (Gemma-7B: 3072 wide, 16 heads of 256)
    std::uint64_t n_params = 0;      // parameters, embeddings included; 0: unknown (a config.json)
    // Per layer: 0 global, W a sliding window of the last W positions; empty: every layer global.
    std::vector<std::uint32_t> layer_windows;
    bool attention_sinks = false;    // a learned sink logit per query head (GPT-OSS); caches nothing
    MlaShape mla;                    // latent attention (DeepSeek) when kv_lora_rank > 0
    // The dense MLP's width F, a gated one (SwiGLU, GeGLU: 3·D·F weights, the full layer of
    // docs/model.md); 0: unknown, or an MLP of two matrices (GPT-2, OPT, Falcon) kvbench does
    // not run. Counted only through a ModelConfig (model_config_of).
    std::uint64_t ffn_dim = 0;
    MoeShape moe;                    // experts in place of the dense MLP; n_experts 0: none
    // The positions the model was trained for (its config's max_position_embeddings, GPT-2's
    // n_positions); unset: unknown. The planner warns past it.
    std::optional<std::uint64_t> max_position_embeddings;
    // RoPE's base (config.json's rope_theta; absent: 10000, transformers' default). One value for
    // every layer: Gemma 3's local layers' own base (rope_local_base_freq) is not modelled
    // (docs/model.md). It changes no count.
    double rope_theta = default_rope_theta;
};

// The largest window of any layer; unset when no layer has one.
std::optional<std::uint64_t> largest_window(const ModelPreset& model);

// The window spelled for people: "4096" on every layer, "4096:LG" (the --window-layers pattern),
// "" without one.
std::string window_label(const ModelPreset& model);

// The model as the step, the planner and N* count it, at B = N = 1: the full layer when its MLP
// or experts are known (ffn_dim or moe), else the attention block; weights f32 and cache f32.
ModelConfig model_config_of(const ModelPreset& model);

// What a sweep or generate of `model` (named by `flag`, "--model deepseek-v3") leaves out that
// the planner counts: its latent attention, which the step runs as multi-head attention. Unset
// when the model has none.
std::optional<std::string> unapplied_parts_note(const ModelPreset& model, std::string_view flag);

// Reads a preset file's text (data/models.json's schema: {"models": [{...}, ...]}) and checks
// every record. Throws ConfigError "<file_name>: model '<name>': field '<field>': <rule>" on the
// first broken one: a missing field, a wrong type, zero, kv_heads not dividing heads, a
// duplicated name, or text that is not JSON.
std::vector<ModelPreset> parse_presets(std::string_view json_text, std::string_view file_name);

// The presets compiled into the binary from data/models.json, parsed once.
const std::vector<ModelPreset>& builtin_presets();

// The text of data/models.json as compiled in (generated at build time).
std::string_view builtin_presets_json();

// The preset called `name`, exactly, or nullptr.
const ModelPreset* find_preset(const std::vector<ModelPreset>& presets, std::string_view name);

}  // namespace kvbench
