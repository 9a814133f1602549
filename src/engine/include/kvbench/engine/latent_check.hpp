// check_latent_kernels(): check_kernels for a latent attention config (MLA), every fast kernel of
// its two paths against its naive twin.
#pragma once

#include "kvbench/engine/kernel_check.hpp"

#include <vector>

namespace kvbench {

// On layer 0's weights and the point's own data, each fast kernel and its naive twin:
// - in a full layer, the RMSNorm before the attention (the rest runs on the naive one's output);
// - the step's projections (q, through q_lora_rank when set; the KV down projection), in a
//   full layer RoPE on the packed q_rope and k_rope, the absorbed query (absorb_query),
//   attend_decode over the latent cache with a cache (the first r of each head's output, what
//   the step uses) and with Q > 1 query tokens attend_decode_tokens on the step's Q tokens
//   against attend_decode_tokens_naive, the un-absorbed output (unabsorb_output) and Wo; in a full layer the gate
//   and layer 0's MLP or experts (check_feed_forward);
// - with a prompt: the expansions c·W_uk (expand_keys) and c·W_uv on its first rows (at most
//   256 outputs of c·W_uv), and attend_causal on the expanded heads at check_causal_attention's
//   sampled rows.
// The same contract as check_kernels. Requires: config latent.
std::vector<KernelCheck> check_latent_kernels(const ModelConfig& config, const ModelWeights& weights,
                                              const KernelCheckInputs& inputs, const StepKernels& kernels);

}  // namespace kvbench
