// block_prefetch_plan() and paged_block_plan(): how far ahead, into which cache and how spread
// out the attention kernels request a later block of keys and values (prefetch_line.hpp makes
// each request).
// The plans themselves are tuning.hpp's `prefetch` row.
#pragma once

#include "intel_cpu.hpp"
#include "l1_data_cache.hpp"
#include "prefetch_line.hpp"
#include "tuning.hpp"

#include "kvbench/engine/kv_dtype.hpp"

#include <cstddef>

namespace kvbench {

// This build's plan for a stored type, by itself.
constexpr PrefetchPlan stored_type_plan(KvDtype stored) {
    switch (stored) {
    case KvDtype::f32: return tuning.prefetch.f32;
    case KvDtype::int8: return tuning.prefetch.int8;
    case KvDtype::e4m3:
    case KvDtype::e5m2:
    case KvDtype::q8_0:
    case KvDtype::q4_0: return tuning.prefetch.byte_formats;
    default: return tuning.prefetch.f16_bf16;
    }
}
static_assert(tuning.prefetch.f32_group_dot_tiles.spread == tuning.prefetch.f32.spread,
              "the tiles decide whether to spread from the stored type alone");

// Whether the plans for this stored type spread a block's lines over its calls; the tiles of a
// type that never spreads leave out the prefetcher's test for a turn (BlockPrefetcher::issue),
// which costs time with nothing to spread (bench/journal/2026-12-02-next-block-lines-spread.md).
constexpr bool plan_may_spread(KvDtype stored) { return stored_type_plan(stored).spread; }

// And whether a tile of tile_rows query rows may: a one-row tile (MHA's, or the last row of an
// odd group) makes fewer calls than a block has lines, so the test would only cost it time
// (bench/journal/2026-12-02-one-row-tiles-without-the-spread-test.md). In an odd group the
// one-row tile then requests a line at every call it makes.
constexpr bool tile_may_spread(KvDtype stored, std::size_t tile_rows) { return plan_may_spread(stored) && tile_rows > 1; }

// The plan for a block of `stored` elements; group_dot_tiles: read by the dot tiles of a group of
// two rows or more, which over f32 take their own plan where the L1 holds large_l1_bytes (it was
// the slower one on a 32 KiB L1; bench/journal/2026-12-02-next-block-into-l1-for-gqa.md).
// l1_bytes is this machine's unless a test asks about another.
inline PrefetchPlan block_prefetch_plan(KvDtype stored, bool group_dot_tiles = false,
                                        std::size_t l1_bytes = l1_data_cache_bytes()) {
    return stored == KvDtype::f32 && group_dot_tiles && l1_bytes >= large_l1_bytes ? tuning.prefetch.f32_group_dot_tiles
                                                                                  : stored_type_plan(stored);
}

// The plan for the same blocks of a paged cache, from the contiguous cache's `plan`. No hardware
// prefetcher follows a table from one block to the next, so wide elements' blocks at random
// places are requested otherwise, each vendor as measured on it (tuning.hpp's wide_paged_*
// fields). intel is this machine's unless a test asks about another.
inline PrefetchPlan paged_block_plan(PrefetchPlan plan, KvDtype stored, bool intel = on_intel_cpu()) {
    const bool wide_elements = stored == KvDtype::f32 || stored == KvDtype::f16 || stored == KvDtype::bf16;
    if (!wide_elements) return plan;
    if (intel) {
        plan.paged_parts = tuning.prefetch.wide_paged_parts_on_intel;
    } else if (tuning.prefetch.wide_paged_into_l1_off_intel) {
        plan.into_l2 = false;
    }
    return plan;
}

}  // namespace kvbench
