// AttendWorkspace: the per-thread buffers of the attention kernels, laid out in 64-byte lines.
#include "attention_types.hpp"

#include "simd.hpp"

namespace kvbench {

using simd::max_lanes;
using simd::round_up;

AttendWorkspace::Layout AttendWorkspace::layout(std::size_t max_rows, std::size_t head_dim) {
    Layout l{};
    l.padded_dim = round_up(head_dim, max_lanes);
    std::size_t at = 0;
    auto take = [&at](std::size_t n_floats) {
        const std::size_t start = at;
        at += round_up(n_floats, max_lanes);
        return start;
    };
    l.queries = take(max_rows * l.padded_dim);
    l.outputs = take(max_rows * l.padded_dim);
    l.probs = take(max_rows * max_key_block);
    l.lane_sums = take(max_rows * max_lanes);
    l.row_max = take(max_rows);
    l.rescale = take(max_rows);
    l.keys_t = take(l.padded_dim * max_key_block);
    l.values = take(max_key_block * l.padded_dim);
    l.decoded_keys = take(max_key_block * l.padded_dim);
    l.total = at;
    return l;
}

AttendWorkspace::AttendWorkspace(std::size_t max_rows, std::size_t head_dim)
    : max_rows_(max_rows),
      head_dim_(head_dim),
      layout_(layout(max_rows, head_dim)),
      storage_(layout_.total + max_lanes - 1, 0.0f) {}

std::size_t AttendWorkspace::bytes_for(std::size_t max_rows, std::size_t head_dim) {
    return (layout(max_rows, head_dim).total + max_lanes - 1) * sizeof(float);
}

}  // namespace kvbench
