// The second half of a full block (docs/model.md): the SwiGLU MLP, or a mixture of experts with
// its router, added to the residual stream; the scratch both paths give it.
#pragma once

#include "kvbench/engine/config.hpp"
#include "kvbench/engine/step_kernels.hpp"
#include "kvbench/engine/weights.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kvbench {

// A full block's buffers for up to n_rows rows, sized once per configuration; empty for an
// attention block.
struct FullBlockScratch {
    // Requires: config validated.
    FullBlockScratch(const ModelConfig& config, std::size_t n_rows);
    std::size_t bytes() const;
    static std::size_t bytes_for(const ModelConfig& config, std::size_t n_rows);

    std::vector<float> normed;           // (n_rows, model_dim) floats: RMSNorm's output, a block's input
    std::vector<float> gate_up;          // (n_rows, 2·widest) floats: u·Wg | u·Wu of the MLP running
    std::vector<float> hidden;           // (n_rows, widest) floats: silu(u·Wg) ⊙ u·Wu
    // A layer of experts (empty without):
    std::vector<float> router_logits;    // (n_rows, n_experts) floats
    std::vector<std::uint32_t> chosen;   // (n_rows, n_active): each row's experts, best first
    std::vector<float> chosen_weights;   // (n_rows, n_active) floats: softmax over the chosen logits
    std::vector<std::uint32_t> routed;   // (n_rows): the rows routed to the expert running
    std::vector<float> routed_weights;   // (n_rows) floats: and their weights
    std::vector<float> gathered;         // (n_rows, model_dim) floats: those rows of u
    std::vector<float> expert_out;       // (n_rows, model_dim) floats: the expert's output for them
};

// The widest MLP a layer of config runs: F, an expert's F_e or the shared experts' S·F_e.
std::size_t widest_mlp(const ModelConfig& config);

// y (n_rows, model_dim) += (silu(u·Wg) ⊙ (u·Wu))·Wd for u (n_rows, model_dim), on `kernels`,
// in scratch.gate_up and scratch.hidden. Returns the FLOPs of its two products.
// Requires: scratch built for at least n_rows rows of a config with an MLP this wide.
std::uint64_t add_mlp(const StepKernels& kernels, const MlpWeights& mlp, const float* u, std::size_t n_rows,
                      std::size_t model_dim, FullBlockScratch& scratch, float* y);

// Each row's top-k experts by logit (ties to the lower index: deterministic), best first, and
// their weights, a softmax over the k chosen logits (Mixtral's, and Qwen's with norm_topk_prob).
// logits (n_rows, n_experts); chosen, weights (n_rows, k).
void route_tokens(const float* logits, std::size_t n_rows, std::size_t n_experts, std::size_t k,
                  std::uint32_t* chosen, float* weights);

struct ExpertsResult {
    std::uint64_t flops = 0;         // what the router and the experts' products executed
    std::size_t experts_read = 0;    // routed experts at least one row went to (shared ones not counted)
};

// y (n_rows, model_dim) += Σ over each row's chosen experts e of weight_e · MLP_e(u) + the
// shared experts' MLP(u): the router picks, and only the experts some row was routed to run,
// each over the rows routed to it.
// Requires: layer has experts; scratch built for at least n_rows rows of config.
ExpertsResult add_experts(const StepKernels& kernels, const ModelConfig& config, const LayerWeights& layer,
                          const float* u, std::size_t n_rows, FullBlockScratch& scratch, float* y);

// The naive twins (src/engine/reference.cpp): plain loops in double, their own routing.
void mlp_naive(const MlpWeights& mlp, const float* u, std::size_t n_rows, std::size_t model_dim, float* y);
std::size_t experts_naive(const ModelConfig& config, const LayerWeights& layer, const float* u, std::size_t n_rows,
                          float* y);

}  // namespace kvbench
