// shuffled_free_blocks(): Fisher-Yates over the block ids with SplitMix64.
#include "kvbench/engine/kv_block_allocator.hpp"

#include "kvbench/engine/rng.hpp"

#include <numeric>
#include <stdexcept>
#include <utility>

namespace kvbench {

std::vector<std::uint32_t> shuffled_free_blocks(std::size_t n_blocks, std::uint64_t seed) {
    if (n_blocks > (std::size_t{1} << 32)) throw std::length_error("shuffled_free_blocks: more blocks than 32-bit ids");
    std::vector<std::uint32_t> blocks(n_blocks);
    std::iota(blocks.begin(), blocks.end(), std::uint32_t{0});
    // The allocator's own stream, apart from the weights' and inputs' of the same seed.
    Rng rng(seed ^ 0x6b766b626c6f636bull);
    for (std::size_t i = n_blocks; i > 1; --i) {
        // Modulo bias is below 2^-32 for any i here, and the order needs no more.
        const std::size_t j = static_cast<std::size_t>(rng.next_u64() % i);
        std::swap(blocks[i - 1], blocks[j]);
    }
    return blocks;
}

}  // namespace kvbench
