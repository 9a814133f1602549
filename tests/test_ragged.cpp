// Ragged batches (docs/model.md, "Ragged batches"): one context per sequence, on both paths,
// against the naive twins, and counted as sums over sequences (docs/counting.md).
#include "kvbench/engine/cost_model.hpp"
#include "kvbench/engine/decoder.hpp"
#include "kvbench/engine/kernel_check.hpp"
#include "kvbench/engine/reference.hpp"

#include "kernel_check_support.hpp"
#include "attention_flops.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <vector>

using namespace kvbench;
using kvbench::test::make_config;
using kvbench::test::ragged_batch;

namespace {

using kvbench::test::spec_tolerance;
using kvbench::test::test_threads;

ModelConfig ragged(ModelConfig config, std::vector<std::uint32_t> seq_lens) {
    config = ragged_batch(std::move(config), std::move(seq_lens));
    validate(config);
    return config;
}

struct PathsResult {
    double rel_error = 0;       // the cached step against the forward's newest rows
    double twin_rel_error = 0;  // the forward against forward_reference
    FlopCount cached_flops;
    FlopCount uncached_flops;
};

// As the runner does: a prefill of every sequence's whole context, rolled back Q positions (one
// for a step of one token), then the cached step for each sequence's newest Q tokens, against the
// forward's last Q rows of every sequence.
PathsResult run_both_paths(const ModelConfig& config, std::uint64_t seed, const StepKernels& kernels = fast_kernels) {
    const ModelWeights weights = make_weights(config, seed);
    const std::vector<float> inputs = make_inputs(config, seed);
    REQUIRE(inputs.size() == config.total_tokens() * config.model_dim);
    std::vector<float> full_out(inputs.size());
    ForwardScratch forward_scratch(config, test_threads);
    KvCache cache(config, config.seq_len);
    PathsResult result;
    result.uncached_flops =
        forward_full(config, weights, inputs.data(), full_out.data(), forward_scratch, &cache, nullptr, {&kernels, {}, {}});
    result.twin_rel_error = relative_error(full_out, forward_reference(config, weights, inputs));
    cache.roll_back(config.seq_len - config.n_query_tokens);
    for (std::size_t b = 0; b < config.n_batch; ++b) {
        CHECK(cache.length(b) == config.seq_len_of(b) - config.n_query_tokens);
    }
    const std::vector<float> step_in = make_step_inputs(config, seed);
    REQUIRE(step_in.size() == config.n_query_tokens * config.n_batch * config.model_dim);
    std::vector<float> step_out(step_in.size());
    DecodeScratch decode_scratch(config, config.seq_len, test_threads);
    result.cached_flops =
        decode_step(config, weights, cache, step_in.data(), step_out.data(), decode_scratch, {&kernels, {}, {}});
    CHECK(cache.length() == config.seq_len);
    result.rel_error = relative_error(step_out, gather_newest(config, full_out));
    return result;
}

}  // namespace

TEST_CASE("a ragged batch's cached step equals its uncached forward, sequence by sequence, on both kernels") {
    ModelConfig full = make_config(1, 1, 32, 4, 2, 2);
    full.block = BlockKind::full;
    full.ffn_dim = 48;
    ModelConfig windowed = make_config(1, 1, 32, 4, 1, 2);
    windowed.layer_windows = {4, 0};
    for (const ModelConfig& config : {ragged(make_config(1, 1, 32, 4, 4, 1), {5, 1, 17}),
                                      ragged(make_config(1, 1, 32, 8, 2, 2), {40, 3, 9, 40}),
                                      ragged(full, {6, 19, 2}), ragged(windowed, {3, 11, 7})}) {
        INFO(describe(config));
        for (const StepKernels* kernels : {&fast_kernels, &naive_kernels}) {
            const PathsResult result = run_both_paths(config, 11, *kernels);
            CHECK(result.rel_error < spec_tolerance);
            CHECK(result.twin_rel_error < spec_tolerance);
            CHECK(result.cached_flops.useful == step_flops(config, DecodePath::cached));
            CHECK(result.uncached_flops.useful == step_flops(config, DecodePath::uncached));
        }
    }
}

TEST_CASE("a ragged row attends over its own positions only: each sequence is what it is alone") {
    // Row 1's cached step at N_1 = 2 must not see the positions rows 0 and 2 have beyond it: the
    // same sequence in a uniform batch of one at N = 2, with the same inputs, gives the same row
    // (to the rounding of projections blocked over other row counts).
    const ModelConfig config = ragged(make_config(1, 1, 32, 4, 2, 1), {9, 2, 6});
    const ModelWeights weights = make_weights(config, 5);
    const std::vector<float> inputs = make_inputs(config, 5);
    std::vector<float> out(inputs.size());
    ForwardScratch scratch(config, test_threads);
    forward_full(config, weights, inputs.data(), out.data(), scratch);

    ModelConfig alone = make_config(1, 2, 32, 4, 2, 1);
    const std::vector<float> alone_in(inputs.begin() + 9 * 32, inputs.begin() + 11 * 32);
    std::vector<float> alone_out(alone_in.size());
    ForwardScratch alone_scratch(alone, test_threads);
    forward_full(alone, weights, alone_in.data(), alone_out.data(), alone_scratch);
    const std::vector<float> row_1(out.begin() + 9 * 32, out.begin() + 11 * 32);
    CHECK(relative_error(row_1, alone_out) < 1e-6);
}

TEST_CASE("attend_decode over a ragged cache equals its naive twin, with splits left empty by short rows") {
    // B·G = 2 tasks on 8 threads cut the 256 positions of row 0 into 4 splits; row 1's 2
    // positions then leave splits empty, which must weigh nothing.
    const ModelConfig config = ragged(make_config(1, 1, 16, 2, 1, 1), {256, 2});
    KvCache cache(config, config.seq_len);
    fill_cache_seeded(config, cache, config.seq_len, 3);
    const std::vector<float> q = test::random_vector(config.n_batch * config.q_dim(), 4);
    DecodeAttentionScratch scratch(config, config.seq_len, 8);
    REQUIRE(decode_split_count(2, 256, 8, scratch.max_splits) == 4);
    std::vector<float> fast(q.size()), naive(q.size());
    const FlopCount fast_flops = attend_decode(config, q.data(), config.q_dim(), cache, 0, config.seq_len, fast.data(), scratch);
    const FlopCount naive_flops =
        attend_decode_naive(config, q.data(), config.q_dim(), cache, 0, config.seq_len, naive.data(), scratch);
    CHECK(relative_error(fast, naive) < 1e-5);
    CHECK(fast_flops.useful == 4u * 2 * 8 * (256 + 2));
    CHECK(naive_flops.useful == fast_flops.useful);
    // Executed: each row's splits of its own positions, each padded as attend_group documents
    // (docs/counting.md, "Executed FLOPs"); an empty split computes nothing.
    std::uint64_t executed = 0;
    for (std::size_t b = 0; b < config.n_batch; ++b) {
        const std::uint64_t n_b = config.seq_len_of(b);
        for (std::uint64_t split = 0; split < 4; ++split) {
            executed += config.n_kv_heads * test::documented_group_flops(config.group_size(), config.head_dim(),
                                                                         test::split_length(n_b, 4, split));
        }
    }
    CHECK(fast_flops.executed == executed);
}

TEST_CASE("a ragged batch's counts are sums over its sequences (docs/counting.md, by hand)") {
    // B = 3 with N_b = 2, 5, 3 (Σ N_b = 10, Σ N_b·(N_b+1) = 6 + 30 + 12 = 48); D = 8, H = 2, G = 1,
    // dh = 4, L = 1: P = 2·8·8 + 2·8·1·4 = 192 weights.
    const ModelConfig config = ragged(make_config(1, 1, 8, 2, 1, 1), {2, 5, 3});
    CHECK(config.total_tokens() == 10);
    // 3·2·192 + 4·2·4·10 and 2·10·192 + 2·2·4·48.
    CHECK(step_flops(config, DecodePath::cached) == 1152 + 320);
    CHECK(step_flops(config, DecodePath::uncached) == 3840 + 768);
    // 192·4 weights + 2·10·1·4·4 of cache + 2·3·8·4 of activations; uncached 2·10·8·4 of them.
    CHECK(step_bytes(config, DecodePath::cached) == 768 + 320 + 192);
    CHECK(step_bytes(config, DecodePath::uncached) == 768 + 320 + 640);
    CHECK(kv_cache_bytes(config) == 320);
    // The allocation is the sum of the sequences' caches, what the memory guard counts.
    CHECK(KvCache::bytes_for(config, config.seq_len) == 320);
    KvCache cache(config, config.seq_len);
    CHECK(cache.bytes() == 320);
    CHECK(cache.capacity(0, 0) == 2);
    CHECK(cache.capacity(0, 1) == 5);
}

TEST_CASE("a ragged batch that breaks a rule is refused naming --seq-lens") {
    ModelConfig config = make_config(3, 5, 8, 2, 1, 1);
    config.seq_lens = {2, 5};
    CHECK_THROWS_WITH_AS(validate(config), "--seq-lens has 2 values for --batch 3: give one context per sequence",
                         ConfigError);
    config.seq_lens = {2, 0, 5};
    CHECK_THROWS_WITH_AS(validate(config), "--seq-lens 0: every sequence's context must be at least 1", ConfigError);
    config.seq_lens = {2, 4, 3};
    CHECK_THROWS_WITH_AS(validate(config), "--seq 5 must be the longest of --seq-lens, 4", ConfigError);
}

TEST_CASE("a ragged batch's kernels pass --check against their naive twins") {
    const ModelConfig config = ragged(make_config(1, 1, 32, 4, 2, 1), {7, 30, 2});
    test::check_kernels_against_twins(config);
}

TEST_CASE("the seq_lens column reads back what it writes") {
    CHECK(format_seq_lens({200, 30000, 512}) == "200 30000 512");
    CHECK(parse_seq_lens("200 30000 512") == std::vector<std::uint32_t>{200, 30000, 512});
    CHECK(parse_seq_lens("").empty());
    CHECK_THROWS_AS(parse_seq_lens("200,300"), ConfigError);
}


TEST_CASE("a step of Q query tokens equals the forward's last Q rows: causal among themselves, on both kernels") {
    ModelConfig full = make_config(2, 12, 32, 4, 2, 2);
    full.block = BlockKind::full;
    full.ffn_dim = 48;
    ModelConfig mixed = ragged(make_config(1, 1, 32, 4, 1, 1), {9, 4, 20});
    for (ModelConfig config : {make_config(3, 17, 32, 4, 4, 1), make_config(1, 70, 32, 8, 2, 2), full, mixed}) {
        for (const std::size_t q : {2u, 4u}) {
            config.n_query_tokens = q;
            validate(config);
            INFO(describe(config));
            for (const StepKernels* kernels : {&fast_kernels, &naive_kernels}) {
                const PathsResult result = run_both_paths(config, 13, *kernels);
                CHECK(result.rel_error < spec_tolerance);
                CHECK(result.cached_flops.useful == step_flops(config, DecodePath::cached));
            }
        }
    }
}

TEST_CASE("Q query tokens are counted token by token (docs/counting.md, by hand)") {
    // B = 2, N = 5, Q = 3, D = 8, H = 2, G = 1, dh = 4, L = 1: P = 192; the tokens see 3, 4 and 5
    // positions, 12 in all.
    ModelConfig config = make_config(2, 5, 8, 2, 1, 1);
    config.n_query_tokens = 3;
    validate(config);
    // 2·(3·2·192 + 4·2·4·12) = 2·(1152 + 384)
    CHECK(step_flops(config, DecodePath::cached) == 3072);
    // 192·4 weights + 2·2·5·1·4·4 of cache (read once) + 2·2·3·8·4 of activations
    CHECK(step_bytes(config, DecodePath::cached) == 768 + 320 + 384);
    CHECK(kv_cache_bytes(config) == 320);
    // The uncached forward is the same as at Q = 1.
    ModelConfig one = config;
    one.n_query_tokens = 1;
    CHECK(step_flops(config, DecodePath::uncached) == step_flops(one, DecodePath::uncached));
    config.n_query_tokens = 6;
    CHECK_THROWS_WITH_AS(validate(config),
                         "--query-tokens 6 must be at most the shortest context, 5: the step's tokens are the last Q "
                         "of each sequence",
                         ConfigError);
}
