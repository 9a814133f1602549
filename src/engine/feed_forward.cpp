// The MLP and the mixture of experts of a full block, on a path's kernels.
#include "kvbench/engine/feed_forward.hpp"

#include "kvbench/engine/checked_size.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace kvbench {

std::size_t widest_mlp(const ModelConfig& config) {
    if (config.block != BlockKind::full) return 0;
    std::size_t widest = config.ffn_dim;
    if (config.has_experts()) {
        widest = std::max({widest, config.moe.expert_dim, config.moe.n_shared * config.moe.expert_dim});
    }
    return widest;
}

namespace {

// The vectors of a scratch, in one place for its constructor and bytes_for: floats and u32s.
struct FullBlockSizes {
    std::size_t normed = 0, gate_up = 0, hidden = 0, router_logits = 0, chosen = 0, routed = 0, gathered = 0;
};

FullBlockSizes sizes_of(const ModelConfig& config, std::size_t n_rows) {
    FullBlockSizes s;
    if (config.block != BlockKind::full) return s;
    const std::size_t widest = widest_mlp(config);
    s.normed = checked_mul(n_rows, config.model_dim);
    s.gate_up = checked_product({n_rows, 2, widest});
    s.hidden = checked_mul(n_rows, widest);
    if (config.has_experts()) {
        s.router_logits = checked_mul(n_rows, config.moe.n_experts);
        s.chosen = checked_mul(n_rows, config.moe.n_active);
        s.routed = n_rows;
        s.gathered = s.normed;
    }
    return s;
}

}  // namespace

FullBlockScratch::FullBlockScratch(const ModelConfig& config, std::size_t n_rows) {
    const FullBlockSizes s = sizes_of(config, n_rows);
    normed.resize(s.normed);
    gate_up.resize(s.gate_up);
    hidden.resize(s.hidden);
    router_logits.resize(s.router_logits);
    chosen.resize(s.chosen);
    chosen_weights.resize(s.chosen);
    routed.resize(s.routed);
    routed_weights.resize(s.routed);
    gathered.resize(s.gathered);
    expert_out.resize(s.gathered);
}

std::size_t FullBlockScratch::bytes() const {
    const std::size_t floats = normed.size() + gate_up.size() + hidden.size() + router_logits.size() +
                               chosen_weights.size() + routed_weights.size() + gathered.size() + expert_out.size();
    return floats * sizeof(float) + (chosen.size() + routed.size()) * sizeof(std::uint32_t);
}

std::size_t FullBlockScratch::bytes_for(const ModelConfig& config, std::size_t n_rows) {
    const FullBlockSizes s = sizes_of(config, n_rows);
    std::size_t floats = 0;
    for (const std::size_t n : {s.normed, s.gate_up, s.hidden, s.router_logits, s.chosen, s.routed, s.gathered, s.gathered}) {
        floats = checked_add(floats, n);
    }
    return checked_add(checked_mul(floats, sizeof(float)), checked_mul(checked_add(s.chosen, s.routed), sizeof(std::uint32_t)));
}

std::uint64_t add_mlp(const StepKernels& kernels, const MlpWeights& mlp, const float* u, std::size_t n_rows,
                      std::size_t model_dim, FullBlockScratch& scratch, float* y) {
    const std::size_t width = mlp.width();
    std::uint64_t flops = kernels.linear(u, n_rows, model_dim, mlp.gate_up.view(), 2 * width, 0.0f, scratch.gate_up.data());
    kernels.silu_gate(scratch.gate_up.data(), n_rows, width, scratch.hidden.data());
    // beta = 1: the residual add rides on the down projection.
    flops += kernels.linear(scratch.hidden.data(), n_rows, width, mlp.down.view(), model_dim, 1.0f, y);
    return flops;
}

void route_tokens(const float* logits, std::size_t n_rows, std::size_t n_experts, std::size_t k,
                  std::uint32_t* chosen, float* weights) {
    for (std::size_t r = 0; r < n_rows; ++r) {
        const float* row = logits + r * n_experts;
        std::uint32_t* picks = chosen + r * k;
        // Insertion into a sorted list of k: k is a handful (2 to 8), E up to a few hundred.
        std::size_t n_picked = 0;
        for (std::size_t e = 0; e < n_experts; ++e) {
            std::size_t at = n_picked;
            while (at > 0 && row[e] > row[picks[at - 1]]) --at;  // strictly greater: ties keep the lower index
            if (at >= k) continue;
            for (std::size_t j = std::min(n_picked, k - 1); j > at; --j) picks[j] = picks[j - 1];
            picks[at] = static_cast<std::uint32_t>(e);
            n_picked = std::min(n_picked + 1, k);
        }
        const float best = row[picks[0]];
        float sum = 0.0f;
        for (std::size_t j = 0; j < k; ++j) {
            weights[r * k + j] = std::exp(row[picks[j]] - best);
            sum += weights[r * k + j];
        }
        for (std::size_t j = 0; j < k; ++j) weights[r * k + j] /= sum;
    }
}

ExpertsResult add_experts(const StepKernels& kernels, const ModelConfig& config, const LayerWeights& layer,
                          const float* u, std::size_t n_rows, FullBlockScratch& scratch, float* y) {
    const std::size_t dim = config.model_dim;
    const std::size_t n_experts = config.moe.n_experts;
    const std::size_t k = config.moe.n_active;
    ExpertsResult result;
    result.flops += kernels.linear(u, n_rows, dim, layer.router.view(), n_experts, 0.0f, scratch.router_logits.data());
    route_tokens(scratch.router_logits.data(), n_rows, n_experts, k, scratch.chosen.data(), scratch.chosen_weights.data());
    for (std::size_t e = 0; e < n_experts; ++e) {
        std::size_t n_routed = 0;
        for (std::size_t r = 0; r < n_rows; ++r) {
            for (std::size_t j = 0; j < k; ++j) {
                if (scratch.chosen[r * k + j] != e) continue;
                scratch.routed[n_routed] = static_cast<std::uint32_t>(r);
                scratch.routed_weights[n_routed] = scratch.chosen_weights[r * k + j];
                ++n_routed;
            }
        }
        if (n_routed == 0) continue;  // no row chose it: its weights are not read
        ++result.experts_read;
        for (std::size_t i = 0; i < n_routed; ++i) {
            std::copy_n(u + std::size_t{scratch.routed[i]} * dim, dim, scratch.gathered.begin() + static_cast<std::ptrdiff_t>(i * dim));
        }
        std::fill_n(scratch.expert_out.begin(), n_routed * dim, 0.0f);
        result.flops += add_mlp(kernels, layer.experts[e], scratch.gathered.data(), n_routed, dim, scratch,
                                scratch.expert_out.data());
        for (std::size_t i = 0; i < n_routed; ++i) {
            float* out = y + std::size_t{scratch.routed[i]} * dim;
            const float* add = scratch.expert_out.data() + i * dim;
            const float weight = scratch.routed_weights[i];
            for (std::size_t d = 0; d < dim; ++d) out[d] += weight * add[d];
        }
    }
    if (!layer.shared_experts.gate_up.empty()) {
        result.flops += add_mlp(kernels, layer.shared_experts, u, n_rows, dim, scratch, y);
    }
    return result;
}

}  // namespace kvbench
