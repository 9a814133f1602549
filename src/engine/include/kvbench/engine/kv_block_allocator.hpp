// The seeded allocator of a paged KV cache's blocks (docs/model.md, "Paged caches").
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kvbench {

// The physical blocks 0 .. n_blocks-1 in the order the allocator hands them out: a free list
// shuffled by Fisher-Yates from Rng(seed). A server's free list is in no order once sequences
// have come and gone, so consecutive blocks of one sequence land far apart; a cache allocated in
// order would measure the contiguous layout under another name. Each block appears once; the
// same seed gives the same order on every platform (rng.hpp).
// Requires: n_blocks <= 2^32 (a block table entry is 32 bits).
std::vector<std::uint32_t> shuffled_free_blocks(std::size_t n_blocks, std::uint64_t seed);

}  // namespace kvbench
