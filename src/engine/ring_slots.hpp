// ring_slots(): where a run of positions lives in a window layer's ring, cut where the ring wraps.
// Private to src/engine (attention.cpp, multi_token_attention.cpp).
#pragma once

#include "kvbench/engine/config.hpp"

#include <algorithm>
#include <cstddef>

namespace kvbench {

// Slots [begin, end) of one ring (end == begin: none).
struct SlotRange {
    std::size_t begin;
    std::size_t end;
};

// The blocks a run of positions may take in a ring of `layer`: two where the ring holds more
// positions than one token sees (a window layer's W + Q - 1 slots for Q > 1 query tokens, so a
// token's W positions can wrap past the ring's last slot), else one (docs/model.md, "Multi-token
// queries").
inline std::size_t ring_pieces(const ModelConfig& config, std::size_t layer) {
    return config.window_of(layer) != 0 && config.n_query_tokens > 1 ? 2 : 1;
}
// The most of any layer of the config: what a scratch of partial softmaxes is sized for.
inline std::size_t ring_pieces(const ModelConfig& config) {
    return !config.layer_windows.empty() && config.n_query_tokens > 1 ? 2 : 1;
}

// Piece `half` (0 or 1) of positions [first + t_begin, first + t_end) of a run of n_run
// positions from `first`, in a ring of `capacity` slots where position p lives in slot
// p % capacity: half 0 the slots from the run's first slot to the ring's end, half 1 those from
// slot 0 on; either may be empty. A run that fills the ring is read from slot 0, whatever
// position that holds: softmax attention does not depend on the order of its keys, and the
// slots are then exactly the run's positions.
// Requires: t_begin <= t_end <= n_run <= capacity; half < 2.
inline SlotRange ring_slots(std::size_t first, std::size_t n_run, std::size_t capacity, std::size_t t_begin,
                            std::size_t t_end, std::size_t half) {
    const std::size_t start = n_run == capacity ? 0 : first % capacity;
    const std::size_t begin = start + t_begin;
    const std::size_t end = start + t_end;
    if (half == 0) return {std::min(begin, capacity), std::min(end, capacity)};
    return {std::max(begin, capacity) - capacity, std::max(end, capacity) - capacity};
}

}  // namespace kvbench
