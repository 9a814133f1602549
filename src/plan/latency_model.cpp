// The roofline of one decode step per device, with the efficiencies this machine measured.
#include "kvbench/plan/latency_model.hpp"

#include "kvbench/engine/cost_model.hpp"
#include "kvbench/plan/memory_plan.hpp"

#include <algorithm>
#include <cmath>

namespace kvbench {

namespace {

// a · b, or nothing past 2^64: such a cache fits no device.
std::optional<std::uint64_t> checked_product(std::uint64_t a, std::uint64_t b) {
    std::uint64_t product = 0;
    if (__builtin_mul_overflow(a, b, &product)) return std::nullopt;
    return product;
}

// Parameters of one routed expert: its SwiGLU's gate, up and down matrices.
std::uint64_t expert_params(const ModelPreset& model) {
    return 3 * std::uint64_t{model.model_dim} * model.moe.expert_dim;
}

std::uint64_t moe_layers(const ModelPreset& model) {
    return model.moe.n_experts == 0 ? 0 : model.n_layers - std::min<std::uint64_t>(model.n_layers, model.moe.n_dense_layers);
}

}  // namespace

double expected_experts_read(const MoeShape& moe, std::uint64_t batch) {
    if (moe.n_experts == 0) return 0;
    const double experts = static_cast<double>(moe.n_experts);
    // An expert escapes one sequence with probability 1 - K/E, and all B of them with its B-th power.
    const double missed_by_one = 1 - static_cast<double>(std::min(moe.n_active, moe.n_experts)) / experts;
    return experts * (1 - std::pow(missed_by_one, static_cast<double>(batch)));
}

StreamEfficiency Efficiency::at(std::uint64_t batch) const {
    if (by_batch.empty()) return {batch, bandwidth, bandwidth};
    if (batch <= by_batch.front().batch) return {batch, by_batch.front().weights, by_batch.front().kv};
    if (batch >= by_batch.back().batch) return {batch, by_batch.back().weights, by_batch.back().kv};
    const auto above = std::find_if(by_batch.begin(), by_batch.end(),
                                    [batch](const StreamEfficiency& measured) { return measured.batch >= batch; });
    const StreamEfficiency& high = *above;
    const StreamEfficiency& low = *(above - 1);
    // Time per byte is what adds up in a step, so that is what is interpolated.
    const double t = std::log2(static_cast<double>(batch) / static_cast<double>(low.batch)) /
                     std::log2(static_cast<double>(high.batch) / static_cast<double>(low.batch));
    const auto between = [t](double low_fraction, double high_fraction) {
        return 1 / ((1 - t) / low_fraction + t / high_fraction);
    };
    return {batch, between(low.weights, high.weights), between(low.kv, high.kv)};
}

const char* limit_name(Limit limit) {
    switch (limit) {
        case Limit::memory: return "memory";
        case Limit::kv_bandwidth: return "KV bandwidth";
        case Limit::weight_bandwidth: return "weight bandwidth";
        case Limit::compute: return "compute";
    }
    return "?";
}

ModelConfig model_config_of(const ModelPreset& model, std::uint64_t batch, std::uint64_t seq_len, KvDtype kv_dtype) {
    // The attention block with the preset's per-layer windows and latent attention, which the
    // cost model counts layer by layer; the MLP and experts are the parameters predict_step
    // spreads over the devices (docs/planning.md).
    const ModelConfig full = kvbench::model_config_of(model);
    ModelConfig config;
    config.n_batch = batch;
    config.seq_len = seq_len;
    config.model_dim = model.model_dim;
    config.n_heads = model.n_heads;
    config.n_kv_heads = model.n_kv_heads;
    config.n_layers = model.n_layers;
    config.explicit_head_dim = model.head_dim;
    config.kv_dtype = kv_dtype;
    config.layer_windows = full.layer_windows;
    config.attention_sinks = full.attention_sinks;
    config.mla = full.mla;
    return config;
}

Prediction predict_step(const Deployment& deployment, std::uint64_t batch, std::uint64_t seq_len) {
    const ModelPreset& model = deployment.model;
    const Parallelism& parallelism = deployment.parallelism;
    ModelConfig whole = model_config_of(model, batch, seq_len, deployment.kv_dtype);
    whole.shared_prefix = deployment.shared_prefix;  // the cache's count; the FLOPs do not change
    const ModelConfig device = device_config(whole, parallelism);
    const std::uint64_t n_ranks = parallelism.tp * parallelism.pp;

    // The attention weights come from the cost model; the rest of the parameters (MLP, norms,
    // embeddings) are split evenly over the devices and each runs once per token.
    const std::uint64_t attention_params = whole.n_layers * weights_per_layer(whole);
    const std::uint64_t other_params = model.n_params - std::min(model.n_params, attention_params);
    const std::uint64_t other_params_per_device = (other_params + n_ranks - 1) / n_ranks;
    const std::uint64_t params_per_device = device.n_layers * weights_per_layer(device) + other_params_per_device;
    // A mixture of experts holds every expert but a step reads only those its sequences were
    // routed to, and a sequence runs only its K: both split over the devices with the rest.
    const std::uint64_t per_expert = expert_params(model);
    const double unread_experts =
        static_cast<double>(moe_layers(model)) * (static_cast<double>(model.moe.n_experts) - expected_experts_read(model.moe, batch));
    const auto unread_params_per_device = static_cast<std::uint64_t>(
        std::llround(unread_experts * static_cast<double>(per_expert) / static_cast<double>(n_ranks)));
    const std::uint64_t idle_params_per_device =
        moe_layers(model) * (model.moe.n_experts - std::min(model.moe.n_active, model.moe.n_experts)) * per_expert / n_ranks;

    Prediction prediction;
    DeviceCost& cost = prediction.cost;
    cost.weight_bytes = weight_bytes(params_per_device, deployment.weight_dtype);
    cost.weight_read_bytes =
        weight_bytes(params_per_device - std::min(params_per_device, unread_params_per_device), deployment.weight_dtype);
    // One layer's cache of one sequence at one position, times the positions every layer keeps
    // (min(N, its window); a global layer's shared prefix once, each sequence's own N - P) and
    // B, so that a point past 2^64 bytes is refused rather than wrapped.
    ModelConfig one_position = device;
    one_position.n_batch = 1;
    one_position.seq_len = 1;
    one_position.n_layers = 1;
    one_position.layer_windows.clear();
    one_position.shared_prefix = 0;
    std::uint64_t shared_positions = 0;  // at most L·N <= 2^7·2^28 for the searches' bounds
    std::uint64_t own_positions = 0;
    for (std::size_t layer = 0; layer < device.n_layers; ++layer) {
        shared_positions += device.shared_prefix_of(layer);
        own_positions += device.attended_positions(layer, device.seq_len) - device.shared_prefix_of(layer);
    }
    const std::optional<std::uint64_t> own = checked_product(device.n_batch, own_positions);
    const std::optional<std::uint64_t> positions =
        own && *own <= UINT64_MAX - shared_positions ? std::optional<std::uint64_t>(*own + shared_positions)
                                                     : std::nullopt;
    const std::optional<std::uint64_t> kv_bytes =
        positions ? checked_product(*positions, kv_cache_bytes(one_position)) : std::nullopt;
    cost.fits = kv_bytes && cost.weight_bytes <= deployment.memory_bytes &&
                *kv_bytes <= deployment.memory_bytes - cost.weight_bytes;
    // A point that does not fit still has its FLOPs, where they can be counted.
    if (cost.fits || (kv_bytes && countable(device))) {
        cost.flops = step_flops(device, DecodePath::cached) +
                     2 * batch * (other_params_per_device - std::min(other_params_per_device, idle_params_per_device));
    }
    if (!cost.fits) {
        cost.kv_bytes = kv_bytes.value_or(UINT64_MAX);
        return prediction;
    }
    cost.kv_bytes = *kv_bytes;

    const HardwareProfile& hardware = deployment.hardware;
    const Efficiency& efficiency = deployment.efficiency;
    // The two streams run one after the other in a step (projections, then attention), each at
    // its own fraction of the bandwidth.
    const StreamEfficiency streams = efficiency.at(batch);
    prediction.bandwidth_time_s =
        static_cast<double>(cost.weight_read_bytes) / (hardware.bandwidth_bytes_per_s * streams.weights) +
        static_cast<double>(cost.kv_bytes) / (hardware.bandwidth_bytes_per_s * streams.kv);
    if (const std::optional<double> peak = hardware.peak_flops_of(compute_type_of(deployment.weight_dtype))) {
        prediction.compute_time_s = static_cast<double>(*cost.flops) / (*peak * efficiency.compute);
    }
    const bool compute_bound = prediction.compute_time_s && *prediction.compute_time_s > prediction.bandwidth_time_s;
    prediction.stage_time_s = compute_bound ? *prediction.compute_time_s : prediction.bandwidth_time_s;
    // A token passes the stages in turn; pipelining overlaps other micro-batches, not this token.
    prediction.tpot_s = prediction.stage_time_s * static_cast<double>(parallelism.pp);
    prediction.limit = compute_bound                             ? Limit::compute
                       : cost.kv_bytes > cost.weight_read_bytes ? Limit::kv_bandwidth
                                                           : Limit::weight_bandwidth;
    return prediction;
}

}  // namespace kvbench
