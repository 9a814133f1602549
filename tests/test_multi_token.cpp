// Multi-token queries read the cache once (docs/model.md, "Multi-token queries"): the one-pass
// attention against one attend_decode per token and its naive twin, the step against the
// uncached forward and against the per-token step, and a planted fault that --check catches.
#include "kvbench/engine/decoder.hpp"
#include "kvbench/engine/kernel_check.hpp"
#include "kvbench/engine/kernel_isa.hpp"
#include "kvbench/engine/reference.hpp"

#include "attention_flops.hpp"
#include "kernel_check_support.hpp"
#include "multi_token_attention.hpp"
#include "multi_token_support.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

using namespace kvbench;
using kvbench::test::check_fault_is_caught;
using kvbench::test::check_step_equals_forward;
using kvbench::test::make_config;
using kvbench::test::paged_cache;
using kvbench::test::ragged_batch;
using kvbench::test::random_vector;
using kvbench::test::spec_tolerance;
using kvbench::test::test_threads;

namespace {


ModelConfig with_tokens(ModelConfig config, std::size_t n_tokens) {
    config.n_query_tokens = n_tokens;
    validate(config);
    return config;
}

// The groupings, a ragged batch and a paged cache, each shape's head_dim whole vectors or not.
std::vector<ModelConfig> multi_token_layouts() {
    return {make_config(2, 40, 64, 4, 4, 1),                 // MHA
            make_config(2, 37, 80, 4, 2, 1),                 // GQA-2, dh 20
            make_config(1, 70, 128, 16, 1, 1),               // MQA: 16 rows a token
            ragged_batch(make_config(1, 1, 64, 4, 2, 1), {45, 9, 23}),
            paged_cache(make_config(2, 50, 64, 4, 2, 1), 16),
            paged_cache(ragged_batch(make_config(1, 1, 64, 4, 1, 1), {33, 12}), 16)};
}

// Keys of a type the integer key tiles read with the query rounded to 16 bits (int8 and q4_0;
// q8_0 on AVX2): what is left between two kernels (or a kernel and its twin) is that rounding,
// else f32 arithmetic.
double tolerance_for(const ModelConfig& config) {
    const KvDtype keys = config.key_dtype();
    const bool rounded_query = keys == KvDtype::int8 || keys == KvDtype::q4_0 ||
                               (keys == KvDtype::q8_0 && std::string_view(kernel_isa()) == "avx2+fma");
    return rounded_query ? kernel_check_tolerance : 1e-5;
}

}  // namespace

namespace {

// What attend_decode_tokens executes, from attend_group's documented padding (docs/counting.md,
// "Executed FLOPs"; docs/model.md, "Multi-token queries"): for each group, the positions every token
// sees in splits, scored for all Q tokens' rows at once, then token i's own i positions after
// them (the step's earlier tokens) for its rows alone. A ragged row's runs are its own.
std::uint64_t documented_multi_token_executed(const ModelConfig& config, std::size_t n_ctx, const DecodeAttentionScratch& scratch) {
    const std::uint64_t n_tokens = config.n_query_tokens, group = config.group_size(), dh = config.head_dim();
    // One token is attend_decode's step, with its own scratch.
    const std::size_t max_splits = scratch.multi_token ? scratch.multi_token->max_splits : scratch.max_splits;
    const std::size_t splits =
        decode_split_count(config.n_batch * config.n_kv_heads, n_ctx - n_tokens + 1, scratch.n_threads, max_splits);
    std::uint64_t executed = 0;
    for (std::size_t b = 0; b < config.n_batch; ++b) {
        const std::uint64_t common = n_ctx - config.seq_lag_of(b) - n_tokens + 1;
        for (std::uint64_t k = 0; k < splits; ++k) {
            executed += config.n_kv_heads *
                        test::documented_group_flops(n_tokens * group, dh, test::split_length(common, splits, k));
        }
        for (std::uint64_t i = 0; i < n_tokens; ++i) {
            executed += config.n_kv_heads * test::documented_group_flops(group, dh, i);
        }
    }
    return executed;
}

}  // namespace

TEST_CASE("multi-token attention in one pass equals one attend_decode per token and its naive twin") {
    const std::vector<std::pair<KvDtype, KvDtype>> types{
        {KvDtype::f32, KvDtype::f32},   {KvDtype::f16, KvDtype::f16},   {KvDtype::bf16, KvDtype::bf16},
        {KvDtype::int8, KvDtype::int8}, {KvDtype::e4m3, KvDtype::e4m3}, {KvDtype::q8_0, KvDtype::q4_0}};
    for (const ModelConfig& layout : multi_token_layouts()) {
        for (const auto& [key_dtype, value_dtype] : types) {
            for (const std::size_t n_tokens : {1u, 2u, 3u, 8u}) {
                ModelConfig config = layout;
                config.kv_dtype = key_dtype;
                if (value_dtype != key_dtype) config.v_dtype = value_dtype;
                config = with_tokens(config, n_tokens);
                KvCache cache(config, config.seq_len);
                fill_cache_seeded(config, cache, config.seq_len, 7);
                const std::size_t q_stride = config.q_dim() + 3;
                const std::size_t n_rows = n_tokens * config.n_batch;
                const std::vector<float> q = random_vector(n_rows * q_stride, 8);
                const std::vector<float> sinks = random_vector(config.n_heads, 9, 2.0f);
                std::vector<float> one(n_rows * config.q_dim()), each(one.size()), naive(one.size());
                // 8 threads on one or two groups: the common positions are cut into splits.
                for (const std::size_t n_threads : {1u, 2u, 8u}) {
                    for (const float* sink : {static_cast<const float*>(nullptr), sinks.data()}) {
                        CAPTURE(describe(config));
                        CAPTURE(n_threads);
                        CAPTURE(sink != nullptr);
                        DecodeAttentionScratch scratch(config, config.seq_len, n_threads);
                        const std::size_t n_ctx = config.seq_len;
                        const FlopCount one_flops =
                            attend_decode_tokens(config, q.data(), q_stride, cache, 0, n_ctx, one.data(), scratch, sink);
                        const FlopCount each_flops = attend_each_token(&attend_decode, config, q.data(), q_stride,
                                                                       cache, 0, n_ctx, each.data(), scratch, sink);
                        const FlopCount naive_flops = attend_decode_tokens_naive(config, q.data(), q_stride, cache, 0,
                                                                                 n_ctx, naive.data(), scratch, sink);
                        CHECK(relative_error(one, each) < tolerance_for(config));
                        CHECK(relative_error(one, naive) < tolerance_for(config));
                        CHECK(one_flops.useful == each_flops.useful);
                        CHECK(naive_flops.useful == each_flops.useful);
                        // A paged cache may take another kernel (group_kernel_for), whose padding
                        // the contiguous layouts' check covers.
                        if (!config.is_paged()) {
                            CHECK(one_flops.executed == documented_multi_token_executed(config, n_ctx, scratch));
                        }
                    }
                }
            }
        }
    }
}

TEST_CASE("multi-token attention in one pass gives the same bits on any number of threads") {
    // The splits depend on the thread count; at one split per group the order of every sum
    // depends on the shape only.
    const ModelConfig config = with_tokens(make_config(4, 40, 64, 4, 2, 1), 3);  // 8 groups: no splits
    KvCache cache(config, config.seq_len);
    fill_cache_seeded(config, cache, config.seq_len, 3);
    const std::vector<float> q = random_vector(3 * config.n_batch * config.q_dim(), 4);
    std::vector<float> first(q.size()), again(q.size());
    DecodeAttentionScratch one_thread(config, config.seq_len, 1), two_threads(config, config.seq_len, 2);
    attend_decode_tokens(config, q.data(), config.q_dim(), cache, 0, config.seq_len, first.data(), one_thread);
    attend_decode_tokens(config, q.data(), config.q_dim(), cache, 0, config.seq_len, again.data(), two_threads);
    CHECK(first == again);
}

TEST_CASE("a multi-token step in one pass equals the forward's last Q rows and the per-token step") {
    ModelConfig full = make_config(2, 14, 32, 4, 2, 2);
    full.block = BlockKind::full;
    full.ffn_dim = 48;
    for (const ModelConfig& layout : {make_config(3, 17, 32, 4, 4, 1), make_config(1, 21, 32, 8, 2, 2),
                                      make_config(2, 19, 64, 8, 1, 1), full,
                                      ragged_batch(make_config(1, 1, 32, 4, 1, 1), {9, 12, 20}),
                                      paged_cache(make_config(2, 40, 32, 4, 2, 1), 16)}) {
        for (const KvDtype dtype : {KvDtype::f32, KvDtype::f16, KvDtype::q8_0}) {
            for (const std::size_t n_tokens : {1u, 2u, 3u, 8u}) {
                ModelConfig config = layout;
                config.kv_dtype = dtype;
                config = with_tokens(config, n_tokens);
                check_step_equals_forward(config);
            }
        }
    }
}

TEST_CASE("--check holds multi-token attention to its naive twin, ragged and paged") {
    for (const ModelConfig& layout : multi_token_layouts()) {
        for (const std::size_t n_tokens : {2u, 8u}) {
            const ModelConfig config = with_tokens(layout, n_tokens);
            CAPTURE(describe(config));
            test::check_kernels_against_twins(config);
            const ModelWeights weights = make_weights(config, 9);
            const std::vector<float> step_in = make_step_inputs(config, 9);
            KvCache cache(config, config.seq_len);
            fill_cache_seeded(config, cache, config.seq_len - n_tokens, 9);
            const std::vector<KernelCheck> checks = check_kernels(config, weights, {step_in.data(), nullptr, &cache, 2});
            CHECK(std::any_of(checks.begin(), checks.end(), [](const KernelCheck& check) {
                return check.kernel.starts_with("attend_decode_tokens (");
            }));
        }
    }
}

TEST_CASE("a multi-token step whose token sees one position too many fails --check and the equivalence") {
    for (const ModelConfig& layout : {make_config(2, 24, 32, 4, 2, 1), ragged_batch(make_config(1, 1, 32, 4, 4, 1), {8, 30})}) {
        const ModelConfig config = with_tokens(layout, 3);
        CAPTURE(describe(config));
        check_fault_is_caught(config, 3, kvbench::test::seeing_next, 21);
    }
}
