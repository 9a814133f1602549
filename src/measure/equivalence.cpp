// step_equivalence_error: the output and every layer's attention output, each against its own scale.
#include "kvbench/measure/equivalence.hpp"

#include "kvbench/engine/decoder.hpp"
#include "kvbench/engine/reference.hpp"

#include <algorithm>
#include <limits>

namespace kvbench {

double step_equivalence_error(const ModelConfig& config, const StepRecord& actual, const StepRecord& expected) {
    double worst = relative_error(actual.output, expected.output);
    const std::size_t layer_floats = attention_trace_size(config) / config.n_layers;
    if (actual.attention_trace.size() != config.n_layers * layer_floats ||
        expected.attention_trace.size() != actual.attention_trace.size()) {
        return std::numeric_limits<double>::infinity();  // fails every tolerance, as relative_error does
    }
    for (std::size_t layer = 0; layer < config.n_layers; ++layer) {
        worst = std::max(worst, relative_error(actual.attention_trace.subspan(layer * layer_floats, layer_floats),
                                               expected.attention_trace.subspan(layer * layer_floats, layer_floats)));
    }
    const std::size_t mlp_floats = config.n_batch * config.model_dim;
    if (actual.mlp_trace.size() != mlp_trace_size(config) || expected.mlp_trace.size() != actual.mlp_trace.size()) {
        return std::numeric_limits<double>::infinity();
    }
    for (std::size_t layer = 0; layer < config.n_layers && mlp_floats * config.n_layers == actual.mlp_trace.size(); ++layer) {
        worst = std::max(worst, relative_error(actual.mlp_trace.subspan(layer * mlp_floats, mlp_floats),
                                               expected.mlp_trace.subspan(layer * mlp_floats, mlp_floats)));
    }
    return worst;
}

double verify_at_context(const ModelConfig& config, const ModelWeights& weights, std::uint64_t seed,
                         std::size_t n_positions, const StepKernels& timed, const StepKernels& reference,
                         std::size_t n_threads) {
    ModelConfig context = config;
    context.seq_len = n_positions;
    // The shared prefix's share of the short context: its first positions are shared in the
    // inputs below (as in the whole prompt), and one copy of them is cached.
    context.shared_prefix = config.shared_prefix * n_positions / config.seq_len;
    const std::size_t n_batch = config.n_batch, dim = config.model_dim;
    const std::vector<float> inputs = make_input_positions(config, seed, 0, n_positions);  // (B, n, D)
    std::vector<float> forward_out(inputs.size());                                       // (B, n, D)
    std::vector<float> forward_trace(attention_trace_size(context));                     // (L, B, H·dh)
    std::vector<float> step_trace(forward_trace.size());                                 // (L, B, H·dh)
    std::vector<float> step_out(n_batch * dim);                                          // (B, D)
    std::vector<float> forward_mlp(mlp_trace_size(context));                             // (L, B, D) of a full block
    std::vector<float> step_mlp(forward_mlp.size());                                     // (L, B, D) of a full block
    KvCache cache(context, n_positions);
    {
        ForwardScratch scratch(context, n_threads);
        forward_full(context, weights, inputs.data(), forward_out.data(), scratch, &cache, nullptr,
                     {&reference, forward_trace, forward_mlp});
    }
    cache.roll_back(n_positions - 1);
    DecodeScratch scratch(context, n_positions, n_threads);
    const std::vector<float> step_in = gather_positions(inputs, n_batch, n_positions, dim, n_positions - 1, 1);
    decode_step(context, weights, cache, step_in.data(), step_out.data(), scratch, {&timed, step_trace, step_mlp});
    const std::vector<float> last_row = gather_positions(forward_out, n_batch, n_positions, dim, n_positions - 1, 1);
    return step_equivalence_error(context, {step_out, step_trace, step_mlp}, {last_row, forward_trace, forward_mlp});
}

}  // namespace kvbench
