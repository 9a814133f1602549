// The full layer's kernels (weight types, RMSNorm, RoPE, SwiGLU, experts), each against its
// naive twin, and the full block's cached step against its uncached forward.
#include "kernels/small_m_gemm.hpp"
#include "kernels/small_m_typed.hpp"

#include "kvbench/engine/blas.hpp"
#include "kvbench/engine/decoder.hpp"
#include "kvbench/engine/feed_forward.hpp"
#include "kvbench/engine/layer_ops.hpp"
#include "kvbench/engine/linear.hpp"
#include "kvbench/engine/reference.hpp"
#include "kvbench/engine/weight_matrix.hpp"
#include "kvbench/engine/weights.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

using namespace kvbench;
using kvbench::test::make_config;
using kvbench::test::random_vector;

namespace {

constexpr WeightDtype reduced_dtypes[] = {WeightDtype::bf16, WeightDtype::f16, WeightDtype::int8};

using kvbench::test::test_threads;

// Every compiled isa with both stagings of x: whichever this host's is, both must sum right.
std::vector<std::pair<SmallMIsa, XStaging>> isas_and_stagings() {
    std::vector<std::pair<SmallMIsa, XStaging>> all;
    for (const SmallMIsa isa : small_m_isas()) {
        for (const XStaging staging : {XStaging::l1_where_runs_allow, XStaging::l2}) all.emplace_back(isa, staging);
    }
    return all;
}

const char* staging_name(XStaging staging) { return staging == XStaging::l2 ? "x in L2" : "x in L1 where runs allow"; }

// A full block small enough for the suite: D 64, 4 heads of 16, 2 KV heads, F 96.
ModelConfig full_config(std::size_t n_batch, std::size_t seq_len, WeightDtype dtype) {
    ModelConfig config = make_config(n_batch, seq_len, 64, 4, 2, 2);
    config.block = BlockKind::full;
    config.ffn_dim = 96;
    config.weight_dtype = dtype;
    return config;
}

// The cached step's output at the last position (every layer), and its relative error against
// the uncached forward's last row.
struct StepOutcome {
    std::vector<float> out;  // (n_batch, model_dim) floats
    double rel_error;
};

StepOutcome step_and_forward(const ModelConfig& config) {
    const ModelWeights weights = make_weights(config, 5);
    const std::vector<float> inputs = make_inputs(config, 5);
    std::vector<float> forward_out(inputs.size());
    KvCache cache(config, config.seq_len);
    ForwardScratch forward_scratch(config, test_threads);
    forward_full(config, weights, inputs.data(), forward_out.data(), forward_scratch, &cache);
    cache.roll_back(config.seq_len - 1);
    DecodeScratch scratch(config, config.seq_len, test_threads);
    const std::vector<float> step_in =
        gather_positions(inputs, config.n_batch, config.seq_len, config.model_dim, config.seq_len - 1, 1);
    std::vector<float> step_out(step_in.size());
    decode_step(config, weights, cache, step_in.data(), step_out.data(), scratch);
    const double error = relative_error(
        step_out, gather_positions(forward_out, config.n_batch, config.seq_len, config.model_dim, config.seq_len - 1, 1));
    return {std::move(step_out), error};
}

// Every layer's cached step at the last position against the uncached forward's last row.
double step_against_forward(const ModelConfig& config) { return step_and_forward(config).rel_error; }

}  // namespace

TEST_CASE("small_m_gemm_typed matches the reference on bf16, f16 and int8 weights, every isa, row count and staging of x") {
    // in_dim 7 and 37 are ragged against every vector width; out_dim 29 leaves rows after the last tile.
    // 197 is three int8 lines and 5 columns: a step of two lines, one single line, then the ragged end.
    for (const std::size_t in_dim : {std::size_t{7}, std::size_t{37}, std::size_t{197}, std::size_t{256}}) {
        const std::size_t out_dim = 29;
        const WeightMatrix f32(WeightDtype::f32, out_dim, in_dim, random_vector(out_dim * in_dim, 3));
        for (const WeightDtype dtype : reduced_dtypes) {
            const WeightMatrix w(dtype, out_dim, in_dim, f32.to_f32());
            for (const auto& [isa, staging] : isas_and_stagings()) {
                for (std::size_t n_rows = 1; n_rows <= small_m_max_rows; ++n_rows) {
                    for (const float beta : {0.0f, 1.0f}) {
                        CAPTURE(in_dim);
                        CAPTURE(staging_name(staging));
                        CAPTURE(std::string(weight_dtype_info(dtype).name));
                        CAPTURE(std::string(isa_name(isa)));
                        CAPTURE(n_rows);
                        CAPTURE(beta);
                        const std::vector<float> x = random_vector(n_rows * in_dim, 4);
                        const std::vector<float> y0 = random_vector(n_rows * out_dim, 6);
                        std::vector<float> fast = y0, naive = y0;
                        const WeightView view = w.view();
                        small_m_gemm_typed(x.data(), n_rows, in_dim, {view.elements, view.scales, dtype}, out_dim, beta,
                                           fast.data(), isa, staging);
                        linear_naive(x.data(), n_rows, in_dim, w.view(), out_dim, beta, naive.data());
                        CHECK(relative_error(fast, naive) < 1e-5);
                    }
                }
            }
        }
    }
}

TEST_CASE("small_m_gemm_typed gives the same bits on any number of threads, over several chunks of x") {
    // Where the threads' slabs end decides how far apart a tile's rows lie and which rows are
    // left alone after the runs: every output must be summed in the same order wherever it
    // falls. 61 x 4196 weights go parallel, and 4196 columns are several chunks of x from 3 rows
    // of x on (bf16 and f16) or from 7 (int8) with x staged in L1 where runs allow, and from 8
    // rows of x on with x staged in L2.
    const std::size_t in_dim = 4096 + 100, out_dim = 61;
    const WeightMatrix f32(WeightDtype::f32, out_dim, in_dim, random_vector(out_dim * in_dim, 73));
    const std::size_t threads_before = compute_threads();
    for (const WeightDtype dtype : reduced_dtypes) {
        const WeightMatrix w(dtype, out_dim, in_dim, f32.to_f32());
        const WeightView view = w.view();
        for (const auto& [isa, staging] : isas_and_stagings()) {
            for (const std::size_t n_rows : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{8}}) {
                CAPTURE(staging_name(staging));
                CAPTURE(std::string(weight_dtype_info(dtype).name));
                CAPTURE(std::string(isa_name(isa)));
                CAPTURE(n_rows);
                const std::vector<float> x = random_vector(n_rows * in_dim, 74);
                std::vector<float> one_thread(n_rows * out_dim), naive(n_rows * out_dim);
                set_compute_threads(1);
                small_m_gemm_typed(x.data(), n_rows, in_dim, {view.elements, view.scales, dtype}, out_dim, 0.0f,
                                   one_thread.data(), isa, staging);
                linear_naive(x.data(), n_rows, in_dim, view, out_dim, 0.0f, naive.data());
                CHECK(relative_error(one_thread, naive) < 1e-5);
                for (const std::size_t n_threads : {std::size_t{2}, std::size_t{3}}) {
                    CAPTURE(n_threads);
                    std::vector<float> y(n_rows * out_dim);
                    set_compute_threads(n_threads);
                    small_m_gemm_typed(x.data(), n_rows, in_dim, {view.elements, view.scales, dtype}, out_dim, 0.0f,
                                       y.data(), isa, staging);
                    CHECK(std::memcmp(y.data(), one_thread.data(), y.size() * sizeof(float)) == 0);
                }
            }
        }
    }
    set_compute_threads(threads_before);
}

TEST_CASE("linear converts reduced weights for sgemm above the small-m rows, and agrees with the reference") {
    struct Shape {
        std::size_t n_rows, in_dim, out_dim;
    };
    // 40 rows: past 3 groups of 8, W in one L2-sized block; 300 rows of 2048: W's rows in blocks
    // of 150 (half the rows of x), the last one shorter.
    for (const Shape shape : {Shape{40, 70, 300}, Shape{300, 2048, 250}}) {
        const auto [n_rows, in_dim, out_dim] = shape;
        const std::vector<float> values = random_vector(out_dim * in_dim, 8);
        const std::vector<float> x = random_vector(n_rows * in_dim, 9);
        for (const WeightDtype dtype : reduced_dtypes) {
            CAPTURE(std::string(weight_dtype_info(dtype).name));
            CAPTURE(n_rows);
            const WeightMatrix w(dtype, out_dim, in_dim, values);
            std::vector<float> fast(n_rows * out_dim, 1.0f), naive = fast;
            CHECK(linear(x.data(), n_rows, in_dim, w.view(), out_dim, 1.0f, fast.data()) ==
                  2ull * n_rows * out_dim * in_dim);
            linear_naive(x.data(), n_rows, in_dim, w.view(), out_dim, 1.0f, naive.data());
            CHECK(relative_error(fast, naive) < 1e-5);
        }
    }
    // The conversion buffer the memory budget counts: an L2-sized block for few rows, growing
    // with the rows of x up to a bound.
    CHECK(linear_conversion_bytes(40, 2048) == 512 * 1024);
    CHECK(linear_conversion_bytes(4096, 2048) == 2048 * 2048 * 4);
    CHECK(linear_conversion_bytes(32768, 8192) == 32 * 1024 * 1024);
    CHECK(linear_conversion_bytes(4096, 0) == 0);
}

TEST_CASE("reduced weights stand for the f32 ones within their type's rounding, and int8 keeps a scale per row") {
    const std::size_t out_dim = 16, in_dim = 64;
    std::vector<float> values = random_vector(out_dim * in_dim, 10);
    for (std::size_t i = 0; i < in_dim; ++i) values[3 * in_dim + i] *= 100.0f;  // one row far larger than the rest
    for (const WeightDtype dtype : reduced_dtypes) {
        CAPTURE(std::string(weight_dtype_info(dtype).name));
        const WeightMatrix w(dtype, out_dim, in_dim, values);
        const double bound = dtype == WeightDtype::bf16 ? 1.0 / 256 : dtype == WeightDtype::f16 ? 1.0 / 2048 : 1.0 / 127;
        CHECK(relative_error(w.to_f32(), values) < bound);
        // Row 0 alone: a per-tensor int8 scale, set by row 3, would round it to a few levels.
        const std::vector<float> restored = w.to_f32();
        CHECK(relative_error(std::vector<float>(restored.begin(), restored.begin() + in_dim),
                             std::vector<float>(values.begin(), values.begin() + in_dim)) < bound);
        CHECK(w.bytes() == WeightMatrix::bytes_for(dtype, out_dim, in_dim));
    }
    CHECK(WeightMatrix::bytes_for(WeightDtype::int8, out_dim, in_dim) == out_dim * in_dim + 4 * out_dim);
    CHECK(WeightMatrix::bytes_for(WeightDtype::bf16, out_dim, in_dim) == 2 * out_dim * in_dim);
}

TEST_CASE("rmsnorm, rope and the SwiGLU gate match their naive twins") {
    ModelConfig config = make_config(1, 8, 64, 4, 2, 1);
    const std::size_t n_rows = 5, dim = config.model_dim;
    const std::vector<float> x = random_vector(n_rows * dim, 11, 3.0f);
    const std::vector<float> gains = random_vector(dim, 12);
    std::vector<float> fast(x.size()), naive(x.size());
    rmsnorm(x.data(), n_rows, dim, gains.data(), fast.data());
    rmsnorm_naive(x.data(), n_rows, dim, gains.data(), naive.data());
    CHECK(relative_error(fast, naive) < 1e-6);
    // A norm's output has an RMS of 1 before the gains: all-one gains show it.
    const std::vector<float> ones(dim, 1.0f);
    rmsnorm(x.data(), 1, dim, ones.data(), fast.data());
    double sum_squares = 0.0;
    for (std::size_t i = 0; i < dim; ++i) sum_squares += static_cast<double>(fast[i]) * fast[i];
    CHECK(std::sqrt(sum_squares / static_cast<double>(dim)) == doctest::Approx(1.0).epsilon(1e-4));

    // Positions up to 10^6, where a float angle would be visibly off.
    for (const std::size_t first_pos : {std::size_t{0}, std::size_t{3}, std::size_t{1000000}}) {
        CAPTURE(first_pos);
        std::vector<float> qkv_fast = random_vector(n_rows * config.qkv_dim(), 13), qkv_naive = qkv_fast;
        const std::vector<float> before = qkv_fast;
        apply_rope(config, qkv_fast.data(), n_rows, 2, first_pos);
        apply_rope_naive(config, qkv_naive.data(), n_rows, 2, first_pos);
        CHECK(relative_error(qkv_fast, qkv_naive) < 1e-6);
        // Values are not turned: the last kv_dim of each row is as it was.
        for (std::size_t r = 0; r < n_rows; ++r) {
            for (std::size_t i = config.q_dim() + config.kv_dim(); i < config.qkv_dim(); ++i) {
                CHECK(qkv_fast[r * config.qkv_dim() + i] == before[r * config.qkv_dim() + i]);
            }
        }
        // Position 0 is the identity; any other turns q.
        if (first_pos != 0) CHECK(relative_error(qkv_fast, before) > 1e-3);
    }

    const std::size_t width = 40;
    const std::vector<float> gate_up = random_vector(n_rows * 2 * width, 14, 20.0f);  // saturating both ways
    std::vector<float> hidden_fast(n_rows * width), hidden_naive(hidden_fast.size());
    silu_gate(gate_up.data(), n_rows, width, hidden_fast.data());
    silu_gate_naive(gate_up.data(), n_rows, width, hidden_naive.data());
    CHECK(relative_error(hidden_fast, hidden_naive) < 1e-5);
}

TEST_CASE("route_tokens picks each row's top k, ties to the lower index, weights a softmax over them") {
    const std::vector<float> logits = {0.5f, 2.0f, -1.0f, 2.0f,  // row 0: experts 1 and 3 tie
                                       3.0f, 0.0f, 1.0f, -2.0f};
    std::vector<std::uint32_t> chosen(4);
    std::vector<float> weights(4);
    route_tokens(logits.data(), 2, 4, 2, chosen.data(), weights.data());
    CHECK(chosen == std::vector<std::uint32_t>{1, 3, 0, 2});
    CHECK(weights[0] == doctest::Approx(0.5));
    CHECK(weights[2] == doctest::Approx(1.0 / (1.0 + std::exp(-2.0))));
    CHECK(weights[2] + weights[3] == doctest::Approx(1.0));
}

TEST_CASE("a full block's cached step equals its uncached forward for every weight type") {
    for (const WeightDtype dtype : {WeightDtype::f32, WeightDtype::bf16, WeightDtype::f16, WeightDtype::int8}) {
        CAPTURE(std::string(weight_dtype_info(dtype).name));
        CHECK(step_against_forward(full_config(2, 9, dtype)) < 1e-4);
    }
}

TEST_CASE("a layer of experts: cached step equals uncached forward, and the kernels equal the naive twin") {
    ModelConfig config = full_config(3, 7, WeightDtype::f32);
    config.moe = {.n_experts = 6, .n_active = 2, .n_shared = 1, .expert_dim = 32, .n_dense_layers = 1};
    CHECK(step_against_forward(config) < 1e-4);

    const ModelWeights weights = make_weights(config, 21);
    const LayerWeights& layer = weights.layers[1];
    REQUIRE(layer.has_experts());
    REQUIRE_FALSE(weights.layers[0].has_experts());
    const std::size_t n_rows = 5;
    const std::vector<float> u = random_vector(n_rows * config.model_dim, 22);
    FullBlockScratch scratch(config, n_rows);
    std::vector<float> fast(u.size(), 0.0f), naive(u.size(), 0.0f);
    const ExpertsResult result = add_experts(fast_kernels, config, layer, u.data(), n_rows, scratch, fast.data());
    const std::size_t read_naive = experts_naive(config, layer, u.data(), n_rows, naive.data());
    CHECK(result.experts_read == read_naive);
    CHECK(result.experts_read >= config.moe.n_active);
    CHECK(result.experts_read <= config.moe.n_experts);
    CHECK(relative_error(fast, naive) < 1e-5);
}

TEST_CASE("RoPE's base reaches the step: another theta turns q and k otherwise, and the step still equals the forward") {
    ModelConfig config = full_config(1, 24, WeightDtype::f32);
    const StepOutcome base = step_and_forward(config);
    config.rope_theta = 500000.0;  // Llama 3's
    const StepOutcome llama3 = step_and_forward(config);
    CHECK(base.rel_error < 1e-4);
    CHECK(llama3.rel_error < 1e-4);
    CHECK(relative_error(llama3.out, base.out) > 1e-4);
}
