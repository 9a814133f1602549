// How much of a many-row product the kernel checks (kernel_check.cpp, latent_check.cpp) hold to
// its naive twin: the kernel's code path depends on the row count only, and the naive twin's
// cost on rows × outputs × inputs, so a sample of outputs and rows covers every path.
#pragma once

#include "kvbench/engine/causal_attention.hpp"

#include <cstddef>

namespace kvbench {

// Outputs of the many-row projections and expansions compared.
inline constexpr std::size_t checked_outputs = 256;
// Rows of each sequence compared: two blocks of the causal attention's default height.
inline constexpr std::size_t checked_prefix_rows = 2 * CausalAttentionScratch::default_block_rows;

}  // namespace kvbench
