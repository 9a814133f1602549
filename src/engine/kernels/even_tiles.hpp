// for_each_tile(): cutting a count into the fewest, most even tiles, for the kernels' register tiles.
#pragma once

#include <cstddef>

namespace kvbench {

// Cuts n items (rows, keys or vectors) into the fewest tiles of at most max_tile, as even as
// possible; calls visit(first, size) for each, in order.
// Requires: max_tile >= 1.
template <class Visit>
void for_each_tile(std::size_t n, std::size_t max_tile, Visit visit) {
    const std::size_t n_tiles = (n + max_tile - 1) / max_tile;
    std::size_t first = 0;
    for (std::size_t p = 0; p < n_tiles; ++p) {
        const std::size_t size = n / n_tiles + (p < n % n_tiles ? 1 : 0);
        visit(first, size);
        first += size;
    }
}

}  // namespace kvbench
