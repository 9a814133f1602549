// Analytic FLOPs, bytes and KV-cache bytes of one decode step (docs/counting.md).
#pragma once

#include "kvbench/engine/config.hpp"

#include <cstdint>

namespace kvbench {

enum class DecodePath { cached, uncached };

const char* path_name(DecodePath path);  // "cached" / "uncached"

// Element widths: fp32 weights (w) and fp32 cached K/V (c), docs/counting.md.
inline constexpr std::uint64_t weight_elem_bytes = 4;
inline constexpr std::uint64_t kv_elem_bytes = 4;
inline constexpr std::uint64_t activation_elem_bytes = 4;

struct StepCost {
    std::uint64_t flops = 0;     // model FLOPs of matrix products, causal triangle only
    std::uint64_t bytes = 0;     // compulsory memory traffic of the step
    std::uint64_t kv_bytes = 0;  // K and V cache at context N

    bool operator==(const StepCost&) const = default;
};

// P = 2·D·H·dh + 2·D·G·dh: weights of one layer (2·D·D + 2·D·G·dh when dh = D/H).
std::uint64_t weights_per_layer(const ModelConfig& config);

std::uint64_t step_flops(const ModelConfig& config, DecodePath path);
std::uint64_t step_bytes(const ModelConfig& config, DecodePath path);
std::uint64_t kv_cache_bytes(const ModelConfig& config);
StepCost step_cost(const ModelConfig& config, DecodePath path);

}  // namespace kvbench
