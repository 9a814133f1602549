// A point's variant: what sets its attention and experts apart from the plain multi-head
// layer of docs/model.md#attention-block, beyond the columns of their own (block, ffn_dim, weight_dtype, kv_dtype), written as
// one text cell of a results file and read back (docs/csv.md, `variant`).
#pragma once

#include "kvbench/engine/config.hpp"

#include <string>
#include <string_view>

namespace kvbench {

// Space-separated parts, each present only when the layer has it: "E=8/2 S=1 Fe=2048 dense=1"
// (experts), "mla r=512 dr=64 dn=128 dv=128 qr=1536", "W=4096:LG" (one window and its
// --window-layers pattern) or "W=4096/0/1024" (one window per layer, when they differ),
// "sinks". Empty for multi-head attention with every layer global and a dense MLP or none.
std::string variant_of(const ModelConfig& config);

// Sets the fields variant_of writes from `variant`, on a config whose layers and other columns
// are already read (a window pattern needs n_layers). Throws ConfigError naming the part it
// cannot read. apply_variant(c, variant_of(c)) leaves c's fields as they were.
void apply_variant(ModelConfig& config, std::string_view variant);

}  // namespace kvbench
