// Reads a Hugging Face config.json into a ModelPreset, whatever the model family calls its fields.
#pragma once

#include "kvbench/plan/model_preset.hpp"

#include <string_view>

namespace kvbench {

// Accepts the naming variants of the families kvbench presets (docs/memory.md#--model-config-file):
//   nesting     a multimodal config's language model in text_config (Gemma 3, Llama 3.2 Vision)
//   layers      num_hidden_layers | n_layer | num_layers
//   width       hidden_size | n_embd | n_embed | d_model
//   heads       num_attention_heads | n_head | num_heads
//   KV heads    num_key_value_heads | num_kv_heads | n_head_kv; absent: H (MHA).
//               Falcon: multi_query (default true for model_type falcon) means one KV head unless
//               new_decoder_architecture is set (default true for the older model_type
//               RefinedWeb, the 40B family), as in transformers' FalconAttention.
//   head dim    head_dim; absent or null: width / heads
//   latent      kv_lora_rank, qk_rope_head_dim, qk_nope_head_dim, v_head_dim, q_lora_rank (DeepSeek);
//               head dim then qk_nope + qk_rope, and KV heads H
//   windows     sliding_window, unless null or use_sliding_window is false, on the layers that
//               layer_types marks sliding_attention; else one global layer in every
//               sliding_window_pattern (Gemma 3: layer i global when i + 1 is a multiple); else
//               the family's own pattern (gemma2, gpt_oss: even layers; gemma3: 5 of 6; cohere2:
//               3 of 4); else every layer from Qwen2's max_window_layers on (all when absent)
//   sinks       model_type gpt_oss
//   MLP         intermediate_size | n_inner | ffn_dim of a gated MLP; 0 for the types whose MLP
//               has two matrices (GPT-2, OPT, Falcon, ...)
//   experts     num_experts | num_local_experts | n_routed_experts, num_experts_per_tok |
//               experts_per_token, n_shared_experts (or shared_expert_intermediate_size in whole
//               experts), moe_intermediate_size (else intermediate_size: Mixtral, GPT-OSS),
//               first_k_dense_replace dense layers of intermediate_size
//   trained     max_position_embeddings | n_positions | max_sequence_length; absent: unknown,
//               but 2048 for Falcon, as transformers' FalconConfig defaults it
// The name is `name`; n_params is 0 (a config does not count its parameters).
// Refuses what kvbench does not model, naming the field: a layer type other than sliding and
// full attention, experts on some layers only (moe_layer_freq, decoder_sparse_step,
// mlp_only_layers), Llama 4's chunked attention, and a model_type not in the list of types
// kvbench reads (src/plan/hf_config.cpp), or none.
// Throws ConfigError "<file_name>: field '<field>': <rule>" on those, on a missing or
// non-integer field, zero, KV heads not dividing heads, or a width the heads do not divide
// when head_dim is absent.
ModelPreset parse_hf_config(std::string_view json_text, std::string_view file_name, std::string name);

}  // namespace kvbench
