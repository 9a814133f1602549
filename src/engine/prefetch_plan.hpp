// block_prefetch_plan(): how far ahead, into which cache and how spread out the attention
// kernels request a later block of keys and values; prefetch_line() makes one such request.
// Private to src/engine (attention_kernel.cpp, attention_grouped.cpp).
#pragma once

#include "l1_data_cache.hpp"

#include "kvbench/engine/kv_dtype.hpp"

#include <cstddef>

namespace kvbench {

struct PrefetchPlan {
    std::size_t blocks_ahead;  // of the block being computed
    bool into_l2;              // prefetcht1; else prefetcht0, into L1
    // Where the block makes more prefetch calls than the later block has lines: the lines spread
    // evenly over all the calls (block_prefetcher.hpp); else one a call, from the first on.
    bool spread = false;
};

// Whether the plans for this stored type spread a block's lines over its calls. Measured on a
// Zen 5 guest (bench/README.md, "The next block's lines spread over the whole block"), whole
// steps of B=8 GQA-8 from DRAM: on AVX2 f32, f16 and bf16 took 4-13 % less time spread, int8 5 %
// more; on AVX-512 f32 moved within the noise, f16 and int8 lost 2-3 %. So builds without
// AVX-512 (the portable one follows AVX2) spread all types but int8, and the tiles of a type
// that never spreads leave out the prefetcher's test for a turn (BlockPrefetcher::issue).
constexpr bool plan_may_spread(KvDtype stored) {
#if defined(__AVX512F__)
    (void)stored;
    return false;
#else
    return stored != KvDtype::int8;
#endif
}

// And whether a tile of tile_rows query rows may: a one-row tile (MHA's, or the last row of an
// odd group) makes fewer calls than a block has lines, and the test alone cost f32 MHA 5-7 %
// on AVX2. In an odd group the one-row tile then requests a line at every call it makes.
constexpr bool tile_may_spread(KvDtype stored, std::size_t tile_rows) { return plan_may_spread(stored) && tile_rows > 1; }

// Chosen by measurement on a Zen 4 (bench/README.md, "Prefetching attention's blocks into L2"),
// both builds alternated. A block far enough ahead to cover DRAM's latency under load (8 KiB
// or more of keys) and landing in L2, where it neither evicts the block being computed nor is
// evicted before use, made the f32 stream up to 26 % faster, and f16 and bf16 on AVX2 up to
// 10 % (MQA; their MHA tiles moved within noise).
// The kernels that do the most arithmetic per cached byte lost 7-20 % by it, as the L2-to-L1
// latency then shows: int8 everywhere, and f16 and bf16 on AVX-512, whose fused conversions
// read a block of 64 keys. They keep the next block, into L1. On the AVX-512 Zen 5 host the
// kernels were first tuned on, the next block into L2 had measured no better than into L1; this
// rule was not measured there.
//
// One exception, measured on a Zen 5 guest (48 KiB L1; bench/README.md, "The next block into
// L1 for GQA's dot tiles"): the dot tiles of a GQA group (2 query rows or more per KV head, up
// to the dot tiles' limit) reading an f32 cache took 10-13 % less time with the next block
// into L1, on both builds, once those tiles held their accumulators in registers; in L2 its
// keys reached the FMAs a load latency late. With Zen 4's 32 KiB L1 the next block into L1 had
// been the slower (GQA-8 B=8 on AVX2, 6612 / 6403 against 5801 / 5108 µs in "Prefetching
// attention's blocks into L2"), so the exception needs an L1 of large_l1_bytes. l1_bytes is
// this machine's unless a test asks about another.
inline PrefetchPlan block_prefetch_plan(KvDtype stored, bool group_dot_tiles = false,
                                        std::size_t l1_bytes = l1_data_cache_bytes()) {
    const bool spread = plan_may_spread(stored);
    if (stored == KvDtype::f32 && group_dot_tiles && l1_bytes >= large_l1_bytes) return {1, false, spread};
#if defined(__AVX512F__)
    if (stored == KvDtype::f32) return {1, true, spread};  // a block of 32 f32 keys is 8 KiB at dh = 64
#else
    if (stored != KvDtype::int8) return {2, true, spread};  // blocks of 4-6 KiB of keys at dh = 64
#endif
    return {1, false, spread};
}

// Requests the cache line holding p, into L2 (prefetcht1) or into L1 (prefetcht0).
inline void prefetch_line(const void* p, bool into_l2) {
    if (into_l2) {
        __builtin_prefetch(p, 0, 2);
    } else {
        __builtin_prefetch(p, 0, 3);
    }
}

}  // namespace kvbench
