// A point's variant: what sets its layer apart from the attention block of f32 weights, written
// as one text cell of a results file and read back (docs/csv.md, `variant`).
#pragma once

#include "kvbench/engine/config.hpp"

#include <string>
#include <string_view>

namespace kvbench {

// Space-separated parts, each present only when it differs from the attention block:
// "full F=14336", "E=8/2 S=1 Fe=2048 dense=1", "mla r=512 dr=64 dn=128 dv=128 qr=1536",
// "W=4096:LG" (one window and its --window-layers pattern) or "W=4096/0/1024" (one window per
// layer, when they differ), "sinks", "w=bf16". Empty for the attention block. The KV element
// type is not part of it: it has its own column.
std::string variant_of(const ModelConfig& config);

// Sets the fields variant_of writes from `variant`, on a config whose layers and other columns
// are already read (a window pattern needs n_layers). Throws ConfigError naming the part it
// cannot read. apply_variant(c, variant_of(c)) leaves c's fields as they were.
void apply_variant(ModelConfig& config, std::string_view variant);

}  // namespace kvbench
