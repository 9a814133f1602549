// Reads a Hugging Face config.json into a ModelPreset, whatever the model family calls its fields.
#pragma once

#include "kvbench/plan/model_preset.hpp"

#include <string_view>

namespace kvbench {

// Accepts the naming variants of the families kvbench presets (docs/memory.md, "--model-config"):
//   layers      num_hidden_layers | n_layer | num_layers
//   width       hidden_size | n_embd | n_embed | d_model
//   heads       num_attention_heads | n_head | num_heads
//   KV heads    num_key_value_heads | num_kv_heads | n_head_kv; absent: H (MHA).
//               Falcon: multi_query (default true for model_type falcon) means one KV head unless
//               new_decoder_architecture is set (default true for the older model_type
//               RefinedWeb, the 40B family), as in transformers' FalconAttention.
//   head dim    head_dim; absent or null: width / heads
//   window      sliding_window, unless null or use_sliding_window is false, or every layer is
//               below Qwen2's max_window_layers, or every entry of layer_types is full_attention
//   trained     max_position_embeddings | n_positions | max_sequence_length; absent: unknown,
//               but 2048 for Falcon, as transformers' FalconConfig defaults it
// The name is `name`; n_params is 0 (a config does not count its parameters).
// Refuses, until kvbench models them (docs/memory.md, "--model-config"), a config whose layers
// differ or whose cache is not K and V per head: a nested text_config, kv_lora_rank (MLA),
// layer_types that differ, sliding_window_pattern above 1, max_window_layers between 0 and
// the layer count with a window, and a model_type not in the list of types known to attend
// alike on every layer (src/plan/hf_config.cpp), or none.
// Throws ConfigError "<file_name>: field '<field>': <rule>" on those, on a missing or
// non-integer field, zero, KV heads not dividing heads, or a width the heads do not divide
// when head_dim is absent.
ModelPreset parse_hf_config(std::string_view json_text, std::string_view file_name, std::string name);

}  // namespace kvbench
