#include "kvbench/measure/budget.hpp"

#include "kvbench/engine/attention.hpp"
#include "kvbench/engine/checked_size.hpp"
#include "kvbench/engine/cost_model.hpp"
#include "kvbench/engine/decoder.hpp"
#include "kvbench/measure/equivalence.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <limits>

using namespace kvbench;
using kvbench::test::make_config;

TEST_CASE("each buffer owner's bytes_for equals what it really allocates") {
    for (const ModelConfig& c : {make_config(3, 100, 64, 8, 2, 2), make_config(1, 7, 48, 3, 1, 1),
                                 make_config(2, 130, 96, 12, 12, 3),
                                 // dh set apart from D/H: q, head outputs and Wo are H·dh wide
                                 make_config(2, 50, 64, 4, 2, 2, 40), make_config(1, 9, 100, 8, 8, 1, 8)}) {
        INFO(describe(c));
        for (std::size_t n_threads : {1u, 2u, 5u}) {
            CHECK(ForwardScratch::bytes_for(c, n_threads) == ForwardScratch(c, n_threads).bytes());
            CHECK(ForwardScratch::bytes_for(c, n_threads, 16) == ForwardScratch(c, n_threads, 16).bytes());
            CHECK(DecodeScratch::bytes_for(c, c.seq_len, n_threads) == DecodeScratch(c, c.seq_len, n_threads).bytes());
            CHECK(DecodeAttentionScratch::bytes_for(c, c.seq_len, n_threads) == DecodeAttentionScratch(c, c.seq_len, n_threads).bytes());
        }
        CHECK(ModelWeights::bytes_for(c) == make_weights(c, 1).bytes());
        CHECK(KvCache::bytes_for(c, c.seq_len) == KvCache(c, c.seq_len).bytes());
        CHECK(KvCache::bytes_for(c, c.seq_len) == kv_cache_bytes(c));  // docs/counting.md#kv-bytes
        CHECK(input_bytes_for(c, c.seq_len) == make_inputs(c, 1).size() * sizeof(float));
    }
}

TEST_CASE("the budget is the sum of what a point really allocates, by owner") {
    for (const bool uncached : {true, false}) {
        const GridPoint point{make_config(3, 100, 64, 8, 2, 2), 2};
        const ModelConfig& c = point.config;
        RunOptions options;
        options.run_uncached = uncached;
        const std::uint64_t row_bytes = c.n_batch * c.model_dim * sizeof(float);
        const std::uint64_t prompt_bytes = c.seq_len * row_bytes;
        const MemoryBudget budget = point_memory(point, options);
        INFO("uncached=" << uncached);
        CHECK(budget.weights_bytes == make_weights(c, 1).bytes());
        CHECK(budget.kv_cache_bytes == KvCache(c, c.seq_len).bytes());
        CHECK(budget.scratch_bytes == DecodeScratch(c, c.seq_len, point.n_threads).bytes() +
                                         (uncached ? ForwardScratch(c, point.n_threads).bytes() : 0));
        // The step's input and output; the prompt and the forward's output when the forward runs.
        CHECK(budget.inputs_bytes == 2 * row_bytes + (uncached ? 2 * prompt_bytes : 0));
        CHECK(point_memory_bytes(point, options) ==
              budget.weights_bytes + budget.kv_cache_bytes + budget.scratch_bytes + budget.inputs_bytes);
    }
}

TEST_CASE("--verify's budget adds its attention traces and the short context's own buffers") {
    const GridPoint point{make_config(3, 100, 64, 8, 2, 2), 2};
    const ModelConfig& c = point.config;
    RunOptions options;
    const MemoryBudget plain = point_memory(point, options);
    options.verify = true;
    const MemoryBudget verified = point_memory(point, options);
    // Two traces of (L, B, H·dh) = (2, 3, 64) floats: the prefill's and the step's.
    CHECK(verified.inputs_bytes == plain.inputs_bytes + 2 * 2 * 3 * 64 * sizeof(float));
    ModelConfig context = c;
    context.seq_len = verify_short_context;
    const std::uint64_t context_bytes =
        KvCache(context, context.seq_len).bytes() + ForwardScratch(context, point.n_threads).bytes() +
        DecodeScratch(context, context.seq_len, point.n_threads).bytes() +
        3 * make_inputs(context, 1).size() * sizeof(float) + 2 * 2 * 3 * 64 * sizeof(float);
    CHECK(verified.scratch_bytes == plain.scratch_bytes + context_bytes);
}

TEST_CASE("the largest term of a long-context point is its kv cache, with the options that shrink it") {
    RunOptions options;
    options.run_uncached = false;
    const MemoryTerm largest = largest_term(point_memory({make_config(1, 1 << 20, 256, 4, 4, 4), 2}, options));
    CHECK(largest.name == "the KV cache");
    CHECK(largest.bytes == 2ull * 4 * (1 << 20) * 256 * 4);
    CHECK(largest.hint.find("--kv-heads") != std::string::npos);
}

TEST_CASE("a point whose size overflows 64 bits is refused with its name") {
    const GridPoint huge{make_config(1 << 30, 1 << 30, 1 << 30, 1, 1, 1 << 30), 1};
    CHECK_THROWS_WITH_AS(point_memory(huge, RunOptions{}),
                         doctest::Contains("B=1073741824 N=1073741824 D=1073741824 H=1 G=1 L=1073741824 T=1: "
                                           "its memory size overflows 64 bits"),
                         ConfigError);
    CHECK_THROWS_AS(checked_mul(std::numeric_limits<std::size_t>::max(), 2), SizeOverflow);
    CHECK_THROWS_AS(checked_add(std::numeric_limits<std::size_t>::max(), 1), SizeOverflow);
    CHECK(checked_product({3, 5, 7}) == 105);
}
