// A real model's attention shape (layers, widths, heads, KV heads, head dim, parameters, window),
// read from kvbench's preset file or from a Hugging Face config.json (docs/memory.md).
#pragma once

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
    std::optional<std::uint64_t> sliding_window;  // tokens a layer attends to at most; unset: all
    // The positions the model was trained for (its config's max_position_embeddings, GPT-2's
    // n_positions); unset: unknown. The planner warns past it.
    std::optional<std::uint64_t> max_position_embeddings;
};

// What a sweep or generate of `model` (named by `flag`, "--model mistral-7b") leaves out that
// the planner applies: its sliding window, since every measured layer attends to all N
// positions. Unset when the model has none.
std::optional<std::string> unapplied_window_note(const ModelPreset& model, std::string_view flag);

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
