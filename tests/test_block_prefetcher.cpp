// How the attention kernels' prefetcher spreads a later block's lines over the calls of the
// block being computed (src/engine/kernels/block_prefetcher.hpp). Where it sends the lines does
// not change a result, only when they arrive, so this checks the schedule itself.
#include "kernels/attention_types.hpp"
#include "kernels/block_prefetcher.hpp"
#include "kernels/intel_cpu.hpp"
#include "kernels/paged_rows.hpp"
#include "kernels/prefetch_plan.hpp"

#include "kvbench/engine/kernel_isa.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace kvbench;
using kvbench::simd::BlockPrefetcher;

namespace {

constexpr std::size_t line_floats = 64 / sizeof(float);

// keys and values as vectors; the paged tests' pools as the cache's, rows on line boundaries.
struct AlignedPool {
    std::vector<float> storage;
    float* data;
    explicit AlignedPool(std::size_t n) : storage(n + line_floats) {
        const auto at = reinterpret_cast<std::uintptr_t>(storage.data());
        data = storage.data() + (64 - at % 64) % 64 / sizeof(float);
    }
};

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
    // prefetch_plan.hpp, measured on a Zen 5 guest; the row the kernels run, chosen at run time
    // (a case compiled for another level than the kernels fails here).
    REQUIRE(std::string(tuning.name) == kernel_isa());
    const bool avx512 = std::string(kernel_isa()) == "avx512";
    for (const KvDtype stored : {KvDtype::f32, KvDtype::f16, KvDtype::bf16, KvDtype::int8, KvDtype::e4m3,
                                 KvDtype::e5m2, KvDtype::q8_0, KvDtype::q4_0}) {
        INFO("stored=" << static_cast<int>(stored));
        const bool spreads = !avx512 && stored != KvDtype::int8;
        CHECK(block_prefetch_plan(stored).spread == spreads);
        CHECK(block_prefetch_plan(stored, true).spread == spreads);
    }
}

TEST_CASE("paged f32 and 16-bit caches take the build's parts on Intel and their blocks into L1 elsewhere") {
    // tuning.hpp's wide_paged_parts_on_intel, measured on an Intel Xeon (none in the portable
    // build), and wide_paged_into_l1_off_intel, measured on a Zen 5; the byte formats gained with
    // neither and keep the contiguous cache's plan, as int8 does.
    for (const KvDtype stored : {KvDtype::f32, KvDtype::f16, KvDtype::bf16, KvDtype::int8, KvDtype::e4m3,
                                 KvDtype::e5m2, KvDtype::q8_0, KvDtype::q4_0}) {
        const bool wide = stored == KvDtype::f32 || stored == KvDtype::f16 || stored == KvDtype::bf16;
        for (const bool groups : {false, true}) {
            const PrefetchPlan contiguous = block_prefetch_plan(stored, groups);
            CHECK(contiguous.paged_parts == 0);
            for (const bool intel : {false, true}) {
                INFO("stored=" << static_cast<int>(stored) << " groups=" << groups << " intel=" << intel);
                const PrefetchPlan paged = paged_block_plan(contiguous, stored, intel);
                CHECK(paged.blocks_ahead == contiguous.blocks_ahead);
                CHECK(paged.spread == contiguous.spread);
                CHECK(paged.paged_parts == (wide && intel ? tuning.prefetch.wide_paged_parts_on_intel : 0));
                const bool into_l1 = wide && !intel && tuning.prefetch.wide_paged_into_l1_off_intel;
                CHECK(paged.into_l2 == (into_l1 ? false : contiguous.into_l2));
            }
        }
    }
}

TEST_CASE("an int8 block's scales are requested line by line, every line they touch") {
    // 32 keys' scales are two or three lines: one line had been requested for them.
    alignas(64) static float scales[128];
    for (std::size_t offset = 0; offset < 16; ++offset) {
        for (const std::size_t n : {1u, 15u, 16u, 17u, 32u, 33u, 64u}) {
            INFO("offset " << offset << ", " << n << " scales");
            const BlockPrefetcher::ScaleLines lines = BlockPrefetcher::scale_lines(scales + offset, n);
            std::set<std::uintptr_t> touched;
            for (std::size_t i = 0; i < n; ++i) touched.insert(reinterpret_cast<std::uintptr_t>(scales + offset + i) / 64 * 64);
            CHECK(lines.first == *touched.begin());
            CHECK(lines.end == *touched.rbegin() + 64);
            CHECK((lines.end - lines.first) / 64 == touched.size());
        }
    }
}

TEST_CASE("paged_run finds a key's row and the keys left in its cache block, by shifts as by division") {
    constexpr std::size_t n_ctx = 300;
    for (const std::size_t positions : {1u, 8u, 16u, 24u, 100u, 128u}) {
        for (const std::size_t first_slot : {0u, 5u, 37u}) {
            const std::size_t n_blocks = (first_slot + n_ctx + positions - 1) / positions;
            std::vector<std::uint32_t> table(n_blocks);
            for (std::size_t i = 0; i < n_blocks; ++i) table[i] = static_cast<std::uint32_t>((i * 7 + 3) % n_blocks);
            GroupAttention problem = Cache(0, 64, 64).problem;
            problem.block_table = table.data();
            problem.block_positions = positions;
            problem.first_slot = first_slot;
            problem.n_ctx = n_ctx;
            for (std::size_t key = 0; key < n_ctx; ++key) {
                for (const std::size_t max_keys : {1u, 7u, 32u, 1000u}) {
                    INFO("blocks of " << positions << ", first slot " << first_slot << ", key " << key << ", at most "
                                      << max_keys);
                    const std::size_t slot = first_slot + key;
                    const PagedRun run = paged_run(problem, key, max_keys);
                    CHECK(run.row == table[slot / positions] * positions + slot % positions);
                    CHECK(run.n_keys == std::min({max_keys, n_ctx - key, positions - slot % positions}));
                }
            }
        }
    }
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

// The tiles issue on a copy kept in registers and hand its progress back (take_progress): the
// block's lines must then be requested as by one prefetcher issued directly, call for call.
namespace {
void check_progress_taken_back(const BlockPrefetcher& started, std::size_t calls) {
    for (const std::size_t tile_calls : {1u, 3u, 8u}) {
        INFO(tile_calls << " calls a tile");
        BlockPrefetcher a = started;
        BlockPrefetcher b = started;
        for (std::size_t made = 0; made < calls;) {
            BlockPrefetcher tile = b;
            for (std::size_t i = 0; i < tile_calls && made < calls; ++i, ++made) {
                a.issue();
                tile.issue();
            }
            b.take_progress(tile);
            CHECK(b.calls() == a.calls());
            CHECK(b.lines_requested() == a.lines_requested());
            CHECK(b.next_line() == a.next_line());
            CHECK(b.next_value_line() == a.next_value_line());
        }
        CHECK(b.lines_requested() > 0);
    }
}
}  // namespace

TEST_CASE("a tile's copy hands back its progress: the lines are requested as without the copy") {
    const Cache cache(300, 64, 64);
    for (const bool spread : {true, false}) {
        INFO("spread " << spread);
        BlockPrefetcher direct(PrefetchPlan{1, false, spread});
        direct.start(cache.problem, 32, 32, 40);
        check_progress_taken_back(direct, 50);
        // Fewer lines than calls: the credit decides which calls request one.
        BlockPrefetcher sparse(PrefetchPlan{1, false, spread});
        sparse.start(cache.problem, 32, 4, 50);
        check_progress_taken_back(sparse, 60);
    }
    // Strided rows, a segment per key.
    const Cache strided(64, 64, 256);
    BlockPrefetcher rows(PrefetchPlan{1, false, true});
    rows.start(strided.problem, 16, 16, 30);
    check_progress_taken_back(rows, 40);
    // A paged block's turns, cache blocks of 16 placed backwards.
    const AlignedPool keys(256 * 64);
    const AlignedPool values(256 * 64);
    std::vector<std::uint32_t> table(16);
    for (std::size_t i = 0; i < table.size(); ++i) table[i] = static_cast<std::uint32_t>(15 - i);
    GroupAttention problem = cache.problem;
    problem.keys = keys.data;
    problem.values = values.data;
    problem.n_ctx = 256;
    problem.block_table = table.data();
    problem.block_positions = 16;
    BlockPrefetcher::PagedTurns turns;
    BlockPrefetcher paged(PrefetchPlan{1, false, true});
    paged.start_paged(problem, 64, 32, 20, turns);
    check_progress_taken_back(paged, 30);
    // Values of a narrower type: each cache block's values lie at another offset from its keys.
    problem.value_dtype = KvDtype::f16;
    BlockPrefetcher::PagedTurns mixed_turns;
    BlockPrefetcher mixed(PrefetchPlan{1, false, true});
    mixed.start_paged(problem, 64, 32, 20, mixed_turns);
    check_progress_taken_back(mixed, 30);
}

TEST_CASE("a block past the context requests nothing, and a short last block only its keys") {
    const Cache cache(20, 128, 128);
    for (const std::size_t n : schedule(cache.problem, 32, 16, 50, 50)) CHECK(n == 0);
    // Keys 16..19: 4 keys of 8 lines.
    const std::vector<std::size_t> requested = schedule(cache.problem, 16, 16, 50, 50);
    CHECK(requested.back() == 4 * 128 / line_floats);
}

TEST_CASE("a paged cache's lines are requested once each, before their block, several cache blocks at a time") {
    // A pool of 40 cache blocks of 64-float rows, placed out of order; 300 keys, so the last
    // cache block and the last kernel block are partly filled.
    constexpr std::size_t head_dim = 64;
    constexpr std::size_t row_bytes = head_dim * sizeof(float);
    constexpr std::size_t block_keys = 32;
    constexpr std::size_t n_ctx = 300;
    for (const std::size_t positions : {8u, 16u, 24u, 32u, 100u, 128u})
    for (const std::size_t plan_parts : {0u, 3u}) {
        INFO("cache blocks of " << positions << ", the plan's parts " << plan_parts);
        const std::size_t n_blocks = (n_ctx + positions - 1) / positions;
        std::vector<std::uint32_t> table(n_blocks);
        for (std::size_t i = 0; i < n_blocks; ++i) table[i] = static_cast<std::uint32_t>((i * 7 + 3) % n_blocks);
        const AlignedPool keys(n_blocks * positions * head_dim);
        const AlignedPool values(n_blocks * positions * head_dim);
        GroupAttention problem = Cache(0, head_dim, head_dim).problem;
        problem.keys = keys.data;
        problem.values = values.data;
        problem.block_table = table.data();
        problem.block_positions = positions;
        problem.n_ctx = n_ctx;
        const auto line_of = [&](std::size_t key, std::size_t byte) {
            const std::size_t row = table[key / positions] * positions + key % positions;
            return (reinterpret_cast<std::uintptr_t>(keys.data) + row * row_bytes + byte) / 64;
        };
        const std::uintptr_t value_offset =
            reinterpret_cast<std::uintptr_t>(values.data) - reinterpret_cast<std::uintptr_t>(keys.data);
        const std::size_t parts = BlockPrefetcher::paged_parts(positions, block_keys, plan_parts);
        const std::size_t runs = positions >= block_keys ? 1 : (block_keys + positions - 1) / positions;
        CHECK(parts == (plan_parts != 0 ? std::max<std::size_t>(
                                              1, std::min(plan_parts, tuning.prefetch.wide_paged_max_pieces / runs))
                        : positions <= block_keys ? std::max<std::size_t>(1, tuning.prefetch.paged_pieces / runs)
                                                  : 1));
        if (plan_parts != 0 && tuning.prefetch.wide_paged_max_pieces != 0) {
            CHECK(parts * runs <= std::max(runs, tuning.prefetch.wide_paged_max_pieces));
        }
        // The kernel's loop: during the block at t0, the pieces from the next block on.
        std::map<std::uintptr_t, std::size_t> requested_in;  // line -> block computed when it was requested
        for (std::size_t t0 = 0; t0 < n_ctx; t0 += block_keys) {
            BlockPrefetcher::Pieces pieces;
            const std::size_t n_pieces =
                BlockPrefetcher::paged_pieces(problem, t0 + block_keys, block_keys, plan_parts, pieces);
            std::set<std::uint32_t> cache_blocks;
            for (std::size_t i = 0; i < n_pieces; ++i) {
                CHECK(pieces[i].value_offset == value_offset);
                REQUIRE(pieces[i].line < pieces[i].end);
                for (std::uintptr_t line = pieces[i].line; line < pieces[i].end; line += 64) {
                    CHECK(requested_in.emplace(line / 64, t0 / block_keys).second);  // never twice
                }
                const std::size_t row = (pieces[i].line - reinterpret_cast<std::uintptr_t>(keys.data)) / row_bytes;
                cache_blocks.insert(static_cast<std::uint32_t>(row / positions));
            }
            // Away from the context's end, the cache blocks of `parts` kernel blocks side by side:
            // tuning's paged_pieces of them where a kernel block holds whole cache blocks.
            if (positions <= block_keys && t0 + (parts + 1) * block_keys + positions <= n_ctx) {
                CHECK(cache_blocks.size() >= parts * block_keys / positions);
                if (block_keys % positions == 0 && plan_parts == 0) {
                    CHECK(cache_blocks.size() >= tuning.prefetch.paged_pieces);
                }
            }
            // A part of each of `parts` kernel blocks.
            if (t0 + (parts + 1) * block_keys <= n_ctx) {
                std::set<std::size_t> kernel_blocks;
                for (std::size_t i = 0; i < n_pieces; ++i) {
                    const std::size_t row = (pieces[i].line - reinterpret_cast<std::uintptr_t>(keys.data)) / row_bytes;
                    const std::size_t block = static_cast<std::size_t>(
                        std::find(table.begin(), table.end(), row / positions) - table.begin());
                    kernel_blocks.insert((block * positions + row % positions) / block_keys);
                }
                CHECK(kernel_blocks.size() == parts);
            }
        }
        // Every line of the keys from the block `parts` on requested, at the latest while the
        // block before its own is computed; the lines of the blocks before it only so early too;
        // no line of the first block (computed before any request), none past the context.
        std::set<std::uintptr_t> key_lines;
        for (std::size_t key = block_keys; key < n_ctx; ++key) {
            for (std::size_t byte = 0; byte < row_bytes; byte += 64) {
                const std::uintptr_t line = line_of(key, byte);
                key_lines.insert(line);
                const auto found = requested_in.find(line);
                if (key >= parts * block_keys) REQUIRE(found != requested_in.end());
                if (found != requested_in.end()) CHECK(found->second < key / block_keys);
            }
        }
        for (const auto& entry : requested_in) CHECK(key_lines.count(entry.first) == 1);
    }
}

TEST_CASE("a paged block's pieces are requested over the block's calls, all of them by its last") {
    // Cache blocks of 16 over kernel blocks of 32: the pieces of tuning's paged_pieces cache blocks.
    const AlignedPool keys(256 * 64);
    const AlignedPool values(256 * 64);
    std::vector<std::uint32_t> table(16);
    for (std::size_t i = 0; i < table.size(); ++i) table[i] = static_cast<std::uint32_t>(15 - i);
    GroupAttention problem = Cache(256, 64, 64).problem;
    problem.keys = keys.data;
    problem.values = values.data;
    problem.block_table = table.data();
    problem.block_positions = 16;
    BlockPrefetcher::PagedTurns turns;
    BlockPrefetcher::Pieces& pieces = turns.pieces;
    const std::size_t n_pieces = BlockPrefetcher::paged_pieces(problem, 64, 32, 0, pieces);
    std::size_t lines = 0;
    for (std::size_t i = 0; i < n_pieces; ++i) lines += (pieces[i].end - pieces[i].line) / 64;
    CHECK(lines == 32 * 64 / line_floats);  // one kernel block's lines, in parts of several
    for (const std::size_t calls : {1u, 7u, 40u, 500u}) {
        INFO(calls << " calls");
        BlockPrefetcher prefetcher(PrefetchPlan{1, false, false});
        prefetcher.start_paged(problem, 64, 32, calls, turns);
        std::size_t before = 0;
        for (std::size_t i = 0; i < calls; ++i) {
            prefetcher.issue();
            CHECK(prefetcher.lines_requested() >= before);
            before = prefetcher.lines_requested();
        }
        CHECK(prefetcher.lines_requested() == lines);
        prefetcher.issue();
        CHECK(prefetcher.lines_requested() == lines);
    }
    // Past the context: nothing.
    BlockPrefetcher prefetcher(PrefetchPlan{1, false, false});
    prefetcher.start_paged(problem, 256, 32, 8, turns);
    prefetcher.issue();
    CHECK(prefetcher.lines_requested() == 0);
}
