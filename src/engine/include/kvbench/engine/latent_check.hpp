// check_latent_kernels(): check_kernels for a latent attention config (MLA), every fast kernel of
// its two paths against its naive twin.
#pragma once

#include "kvbench/engine/kernel_check.hpp"

#include <vector>

namespace kvbench {

// On layer 0's weights and the point's own data, each fast kernel and its naive twin:
// - the step's projections (q, through q_lora_rank when set; the KV down projection), the
//   absorbed query (absorb_query), attend_decode over the latent cache with a cache (the first r
//   of each head's output, what the step uses), the un-absorbed output (unabsorb_output) and Wo;
// - with a prompt: the expansions c·W_uk and c·W_uv on its first rows (at most 256 outputs), and
//   attend_causal on the expanded heads at check_causal_attention's sampled rows.
// The same contract as check_kernels. Requires: config latent.
std::vector<KernelCheck> check_latent_kernels(const ModelConfig& config, const ModelWeights& weights,
                                              const KernelCheckInputs& inputs, const StepKernels& kernels);

}  // namespace kvbench
