// Analytic FLOPs, bytes and KV-cache bytes of one decode step (docs/counting.md).
#pragma once

#include "kvbench/engine/config.hpp"

#include <cstdint>

namespace kvbench {

enum class DecodePath { cached, uncached };

const char* path_name(DecodePath path);  // "cached" / "uncached"

// Element widths: fp32 weights (w) and activations, docs/counting.md. The cached K/V element
// (c) is the config's kv_dtype: kv_vector_bytes (kv_dtype.hpp) per head_dim elements, an int8
// vector's f32 scale included.
inline constexpr std::uint64_t weight_elem_bytes = 4;
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
// Bytes of one cached K (or V) vector of the config: head_dim elements of kv_dtype, scale included.
std::uint64_t kv_vector_bytes_of(const ModelConfig& config);
std::uint64_t step_bytes(const ModelConfig& config, DecodePath path);
std::uint64_t kv_cache_bytes(const ModelConfig& config);
StepCost step_cost(const ModelConfig& config, DecodePath path);

}  // namespace kvbench
