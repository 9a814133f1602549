// How the attention kernels' prefetcher spreads a later block's lines over the calls of the
// block being computed (src/engine/kernels/block_prefetcher.hpp). Where it sends the lines does
// not change a result, only when they arrive, so this checks the schedule itself.
#include "kernels/attention_types.hpp"
#include "kernels/block_prefetcher.hpp"
#include "kernels/prefetch_plan.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <vector>

using namespace kvbench;
using kvbench::simd::BlockPrefetcher;

namespace {

constexpr std::size_t line_floats = 64 / sizeof(float);

struct Cache {
    std::vector<float> keys;
    std::vector<float> values;
    GroupAttention problem;
    Cache(std::size_t n_ctx, std::size_t head_dim, std::size_t kv_stride)
        : keys(n_ctx * kv_stride), values(n_ctx * kv_stride) {
        problem.keys = keys.data();
        problem.values = values.data();
        problem.kv_stride = kv_stride;
        problem.n_ctx = n_ctx;
        problem.head_dim = head_dim;
    }
};

// Lines requested after each of `calls` calls, the block of block_keys keys at first_key.
std::vector<std::size_t> schedule(const GroupAttention& problem, std::size_t first_key, std::size_t block_keys,
                                  std::size_t calls, std::size_t calls_made, bool spread = true) {
    BlockPrefetcher prefetcher(PrefetchPlan{1, false, spread});
    prefetcher.start(problem, first_key, block_keys, calls);
    std::vector<std::size_t> requested;
    for (std::size_t i = 0; i < calls_made; ++i) {
        prefetcher.issue();
        requested.push_back(prefetcher.lines_requested());
    }
    CHECK(prefetcher.calls() == calls_made);
    return requested;
}

}  // namespace

TEST_CASE("fewer lines than calls are requested evenly over the whole block, not on its first calls") {
    // A GQA group's block on AVX2: 16 keys of 128 floats are 128 lines, over 224 calls.
    const Cache cache(64, 128, 128);
    const std::size_t calls = 224;
    const std::size_t lines = 16 * 128 / line_floats;
    const std::vector<std::size_t> requested = schedule(cache.problem, 16, 16, calls, calls);
    for (std::size_t i = 0; i < calls; ++i) {
        INFO("call " << i + 1);
        CHECK(requested[i] == (i + 1) * lines / calls);
    }
    CHECK(requested.back() == lines);
}

TEST_CASE("a plan that does not spread requests fewer lines than calls one a call from the first on") {
    const Cache cache(64, 128, 128);
    const std::size_t lines = 16 * 128 / line_floats;
    const std::vector<std::size_t> requested = schedule(cache.problem, 16, 16, 224, 224, false);
    for (std::size_t i = 0; i < requested.size(); ++i) {
        INFO("call " << i + 1);
        CHECK(requested[i] == std::min(lines, i + 1));
    }
}

TEST_CASE("without AVX-512 the plans spread, all but int8's; with it none does") {
    // prefetch_plan.hpp, measured on a Zen 5 guest.
#if defined(__AVX512F__)
    for (const KvDtype stored : {KvDtype::f32, KvDtype::f16, KvDtype::bf16, KvDtype::int8}) {
        INFO("stored=" << static_cast<int>(stored));
        CHECK_FALSE(block_prefetch_plan(stored).spread);
        CHECK_FALSE(block_prefetch_plan(stored, true).spread);
    }
#else
    for (const KvDtype stored : {KvDtype::f32, KvDtype::f16, KvDtype::bf16}) {
        INFO("stored=" << static_cast<int>(stored));
        CHECK(block_prefetch_plan(stored).spread);
        CHECK(block_prefetch_plan(stored, true).spread);
    }
    CHECK_FALSE(block_prefetch_plan(KvDtype::int8).spread);
    CHECK_FALSE(block_prefetch_plan(KvDtype::int8, true).spread);
#endif
}

TEST_CASE("more lines than calls are requested a few at every call until none is left") {
    const Cache cache(64, 128, 128);
    const std::size_t lines = 16 * 128 / line_floats;  // 128 lines over 60 calls: 3 a call
    const std::vector<std::size_t> requested = schedule(cache.problem, 0, 16, 60, 60);
    for (std::size_t i = 0; i < requested.size(); ++i) {
        INFO("call " << i + 1);
        CHECK(requested[i] == std::min(lines, 3 * (i + 1)));
    }
}

TEST_CASE("strided rows are requested row by row, spread the same way") {
    // Rows of 64 floats 256 floats apart: each key is a segment of 4 lines.
    const Cache cache(32, 64, 256);
    const std::size_t lines = 8 * 4;
    const std::size_t calls = 100;
    const std::vector<std::size_t> requested = schedule(cache.problem, 8, 8, calls, calls + 20);
    for (std::size_t i = 0; i < calls; ++i) {
        INFO("call " << i + 1);
        CHECK(requested[i] == (i + 1) * lines / calls);
    }
    // Calls past the planned ones (a block that made more) request nothing further.
    for (std::size_t i = calls; i < requested.size(); ++i) CHECK(requested[i] == lines);
}

TEST_CASE("a block past the context requests nothing, and a short last block only its keys") {
    const Cache cache(20, 128, 128);
    for (const std::size_t n : schedule(cache.problem, 32, 16, 50, 50)) CHECK(n == 0);
    // Keys 16..19: 4 keys of 8 lines.
    const std::vector<std::size_t> requested = schedule(cache.problem, 16, 16, 50, 50);
    CHECK(requested.back() == 4 * 128 / line_floats);
}

TEST_CASE("a paged block in two runs has the lines of both runs requested") {
    // Blocks of 32 keys of 64 floats over cache blocks of 16: two runs of 16 rows, 64 lines each.
    const Cache cache(64, 64, 64);
    GroupAttention first = cache.problem;
    first.n_ctx = 16;
    GroupAttention second = cache.problem;
    second.keys = cache.keys.data() + 40 * 64;
    second.values = cache.values.data() + 40 * 64;
    second.n_ctx = 16;
    BlockPrefetcher prefetcher(PrefetchPlan{1, false, false});
    prefetcher.start_runs(first, second, 8);
    for (std::size_t i = 0; i < 8; ++i) prefetcher.issue();
    CHECK(prefetcher.lines_requested() == 2 * 16 * 64 / line_floats);
    // One run alone: its own lines only.
    GroupAttention none = cache.problem;
    none.n_ctx = 0;
    prefetcher.start_runs(first, none, 8);
    for (std::size_t i = 0; i < 8; ++i) prefetcher.issue();
    CHECK(prefetcher.lines_requested() == 16 * 64 / line_floats);
}
