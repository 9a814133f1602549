// The predicted time of one decode step on a device: the larger of its bytes over the achieved
// bandwidth and its FLOPs over the achieved peak, from the exact counts of the cost model
// (docs/planning.md, "The latency model").
#pragma once

#include "kvbench/engine/kv_dtype.hpp"
#include "kvbench/plan/hardware_profile.hpp"
#include "kvbench/plan/model_preset.hpp"
#include "kvbench/plan/parallelism.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace kvbench {

// The fractions of the peak bandwidth a step achieves on its two streams at one batch size: the
// projections reading the weights (a matrix-vector product at B = 1, a thin matrix product
// above) and attention reading the cache (docs/planning.md, "Efficiency").
struct StreamEfficiency {
    std::uint64_t batch = 1;
    double weights = 1;  // achieved / peak bandwidth while the weights stream
    double kv = 1;       // achieved / peak bandwidth while the cache streams
};

// The fraction of a device's peaks a decode step achieves (docs/planning.md, "Efficiency").
struct Efficiency {
    double bandwidth = 1;  // achieved / peak bandwidth: the memory-bound (cached) path's
    double compute = 1;    // achieved / peak FLOP/s: the compute-bound (uncached) path's
    // Fitted per measured batch size, ascending by batch; empty: `bandwidth` for both streams.
    std::vector<StreamEfficiency> by_batch;

    // The streams' efficiencies at `batch`: a measured batch's own, between two measured ones
    // their seconds per byte interpolated in log2 B, past either end the nearest one's.
    // Requires: batch >= 1.
    StreamEfficiency at(std::uint64_t batch) const;
};

// A model served on one kind of device.
struct Deployment {
    ModelPreset model;  // n_params must be known: the weights are most of a step's bytes
    HardwareProfile hardware;
    std::uint64_t memory_bytes = 0;  // per device: the profile's, or --mem
    KvDtype kv_dtype = KvDtype::f16;
    KvDtype weight_dtype = KvDtype::f16;
    Parallelism parallelism;
    Efficiency efficiency;
    // Tokens every sequence starts with (a system prompt), cached once on each global layer and
    // read once a step for the batch, as kvbench's step reads it (docs/planning.md).
    std::uint64_t shared_prefix = 0;
};

// What bounds a point: it does not fit, or the larger time term and, for bandwidth, the larger
// of the bytes it streams.
enum class Limit { memory, kv_bandwidth, weight_bandwidth, compute };

const char* limit_name(Limit limit);  // "memory", "KV bandwidth", "weight bandwidth", "compute"

// One device's share of a decode step of `batch` sequences at context `seq_len`.
struct DeviceCost {
    std::uint64_t weight_bytes = 0;  // the device's weights, all held in its memory
    // What a step reads of them: all but the routed experts no sequence of the batch was
    // routed to (docs/planning.md, "Experts"); weight_bytes for a dense model.
    std::uint64_t weight_read_bytes = 0;
    std::uint64_t kv_bytes = 0;      // the device's cache, a shared prefix's once, read once per step
    // The step's FLOPs; unset only where a point that does not fit could count past 2^64.
    std::optional<std::uint64_t> flops;
    bool fits = false;               // weight_bytes + kv_bytes within Deployment::memory_bytes
};

struct Prediction {
    DeviceCost cost;
    double bandwidth_time_s = 0;              // weight_read_bytes / (bandwidth · e_w) + kv_bytes / (bandwidth · e_kv)
    std::optional<double> compute_time_s;     // flops / (peak · e); unset: no published peak
    double stage_time_s = 0;                  // the larger of the two: one stage's step
    double tpot_s = 0;                        // pp stages in turn: the time per output token
    Limit limit = Limit::memory;
};

// Of a mixture of experts' routed experts, how many of one layer's a step of `batch` sequences
// reads on average, each sequence choosing n_active of n_experts uniformly as the engine's
// seeded router does: n_experts · (1 - (1 - n_active / n_experts)^batch). 0 without experts.
double expected_experts_read(const MoeShape& moe, std::uint64_t batch);

// The model as the engine's cost model sees it: its attention shape at batch and context, the
// cache capped at the model's sliding window. Requires: batch, seq_len >= 1.
ModelConfig model_config_of(const ModelPreset& model, std::uint64_t batch, std::uint64_t seq_len, KvDtype kv_dtype);

// The predicted step of `batch` sequences at `seq_len` on each device of `deployment`. A point
// that does not fit is not timed (times 0, limit memory). Requires: check_parallelism passes,
// model.n_params covers the attention weights, batch >= 1, seq_len > deployment.shared_prefix.
Prediction predict_step(const Deployment& deployment, std::uint64_t batch, std::uint64_t seq_len);

}  // namespace kvbench
