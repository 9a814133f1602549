// check_kernels: run each fast kernel and its naive twin on the same data and compare.
#include "kvbench/engine/kernel_check.hpp"

#include "kvbench/engine/attention.hpp"
#include "kvbench/engine/causal_attention.hpp"
#include "kvbench/engine/linear.hpp"
#include "kvbench/engine/reference.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace kvbench {

namespace {

// Outputs of the many-row projection compared: the kernel's code path depends on the row
// count only, and the naive twin's cost on rows × outputs × inputs.
constexpr std::size_t checked_outputs = 256;
// Positions of the causal attention compared: two blocks of the default height, so the
// block loop, a diagonal block and the masking all run.
constexpr std::size_t checked_positions = 2 * CausalAttentionScratch::default_block_rows;

std::string rows_label(std::size_t n_rows) { return fmt::format("{} row{}", n_rows, n_rows == 1 ? "" : "s"); }

// linear and linear_naive on x (n_rows, in_dim) against W's first out_dim rows.
KernelCheck check_linear(const float* x, std::size_t n_rows, std::size_t in_dim, const float* w,
                         std::size_t out_dim, std::vector<float>& fast) {
    fast.resize(n_rows * out_dim);
    std::vector<float> naive(n_rows * out_dim);  // (n_rows, out_dim) floats
    linear(x, n_rows, in_dim, w, out_dim, 0.0f, fast.data());
    linear_naive(x, n_rows, in_dim, w, out_dim, 0.0f, naive.data());
    return {fmt::format("linear ({})", rows_label(n_rows)), relative_error(fast, naive)};
}

}  // namespace

std::vector<KernelCheck> check_kernels(const ModelConfig& config, const ModelWeights& weights,
                                       const KernelCheckInputs& inputs) {
    std::vector<KernelCheck> checks;
    const LayerWeights& layer = weights.layers.front();
    const std::size_t n_batch = config.n_batch;
    const std::size_t model_dim = config.model_dim;
    const std::size_t q_dim = config.q_dim();  // H·dh: width of the attention outputs
    const std::size_t qkv_dim = config.qkv_dim();
    const std::size_t head_dim = config.head_dim();

    std::vector<float> step_qkv;  // (n_batch, qkv_dim) floats: q | k | v of the new token
    checks.push_back(check_linear(inputs.step_in, n_batch, model_dim, layer.wqkv.data(), qkv_dim, step_qkv));

    if (inputs.cache != nullptr) {
        const std::size_t pos = config.seq_len - 1;
        KvCache& cache = *inputs.cache;
        for (std::size_t b = 0; b < n_batch; ++b) {
            for (std::size_t g = 0; g < config.n_kv_heads; ++g) {
                const float* k = step_qkv.data() + b * qkv_dim + q_dim + g * head_dim;
                cache.store(0, b, g, pos, k, k + config.kv_dim());
            }
        }
        DecodeAttentionScratch scratch(config, config.seq_len, inputs.n_threads);
        std::vector<float> fast(n_batch * q_dim), naive(n_batch * q_dim);  // (n_batch, q_dim) floats
        attend_decode(config, step_qkv.data(), qkv_dim, cache, 0, config.seq_len, fast.data(), scratch);
        attend_decode_naive(config, step_qkv.data(), qkv_dim, cache, 0, config.seq_len, naive.data(), scratch);
        checks.push_back({"attend_decode", relative_error(fast, naive)});
    }

    if (inputs.prompt != nullptr) {
        ModelConfig prefix = config;
        prefix.seq_len = std::min(config.seq_len, checked_positions);
        // (n_batch, prefix.seq_len, model_dim) floats: the first positions of every sequence
        std::vector<float> x(n_batch * prefix.seq_len * model_dim);
        for (std::size_t b = 0; b < n_batch; ++b) {
            std::copy_n(inputs.prompt + b * config.seq_len * model_dim, prefix.seq_len * model_dim,
                        x.data() + b * prefix.seq_len * model_dim);
        }
        const std::size_t n_rows = n_batch * prefix.seq_len;
        std::vector<float> unused;
        checks.push_back(check_linear(x.data(), n_rows, model_dim, layer.wqkv.data(),
                                      std::min(qkv_dim, checked_outputs), unused));

        std::vector<float> qkv(n_rows * qkv_dim);  // (n_batch · prefix.seq_len, qkv_dim) floats
        linear(x.data(), n_rows, model_dim, layer.wqkv.data(), qkv_dim, 0.0f, qkv.data());
        CausalAttentionScratch scratch(prefix.seq_len, inputs.n_threads);
        std::vector<float> fast(n_rows * q_dim), naive(n_rows * q_dim);  // (n_rows, q_dim) floats
        attend_causal(prefix, qkv.data(), fast.data(), scratch);
        attend_causal_naive(prefix, qkv.data(), naive.data(), scratch);
        checks.push_back({fmt::format("attend_causal ({} positions)", prefix.seq_len), relative_error(fast, naive)});
    }
    return checks;
}

}  // namespace kvbench
