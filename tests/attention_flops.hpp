// The FLOPs the attention kernels are documented to execute, computed from their headers'
// words and the naive twins' own counts, never from the kernels: what their counts are tested against.
#pragma once

#include "attend_group.hpp"

#include "kvbench/engine/attention.hpp"
#include "kvbench/engine/reference.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace kvbench::test {

inline std::uint64_t round_up(std::uint64_t n, std::uint64_t multiple) { return (n + multiple - 1) / multiple * multiple; }

// Positions in split k of n positions cut into `splits`, as attend_decode cuts a context
// (src/engine/attention.cpp: split k holds [k·n/splits, (k+1)·n/splits)).
inline std::uint64_t split_length(std::uint64_t n, std::uint64_t splits, std::uint64_t k) {
    return (k + 1) * n / splits - k * n / splits;
}

// attend_group's executed FLOPs as its header documents them, written from the documentation
// and not from the kernel: the padding of keys and head_dim on top of the useful work. A paged
// cache's problems always take the tiled kernel (the lanes kernel reads no block table).
inline std::uint64_t documented_group_flops(std::uint64_t n_rows, std::uint64_t head_dim, std::uint64_t n_ctx,
                                            bool paged = false) {
    const AttendKernelShape shape = attend_group_shape();
    const std::uint64_t by_lanes = shape.lanes_kernel_rows;
    if (!paged && by_lanes > 0 && n_rows >= shape.lanes_kernel_min_rows && n_rows % by_lanes == 0 &&
        head_dim % by_lanes == 0) {
        return 4 * n_rows * n_ctx * head_dim;  // the lanes kernel pads nothing
    }
    const std::uint64_t lanes = shape.lanes, key_block = shape.key_block;
    const std::uint64_t padded_dim = round_up(head_dim, lanes);
    std::uint64_t flops = 2 * n_rows * n_ctx * padded_dim;  // outputs
    for (std::uint64_t first = 0; first < n_ctx; first += key_block) {
        const std::uint64_t n_keys = std::min(key_block, n_ctx - first);
        if (n_rows > shape.dot_rows_max) {
            flops += 2 * n_rows * head_dim * key_block;
            continue;
        }
        std::uint64_t rows_left = n_rows;
        for (std::uint64_t tile_rows : {std::min<std::uint64_t>(4, lanes), std::min<std::uint64_t>(2, lanes),
                                        std::uint64_t{1}}) {
            for (; rows_left >= tile_rows; rows_left -= tile_rows) {
                flops += 2 * tile_rows * round_up(n_keys, lanes / tile_rows) * padded_dim;
            }
        }
    }
    return flops;
}

// What the naive twin counts for the same problem: one multiply-add per (row, key, dim) for
// the scores and again for the outputs.
inline std::uint64_t naive_group_flops(std::uint64_t n_rows, std::uint64_t head_dim, std::uint64_t n_ctx) {
    std::vector<float> q(n_rows * head_dim, 0.5f), kv(n_ctx * head_dim, 0.25f), out(n_rows * head_dim);
    return 2 * attention_reference(q.data(), kv.data(), kv.data(), n_ctx, n_rows, head_dim, out.data());
}

// attend_decode's executed FLOPs: the naive twin's count plus each task's documented padding.
inline std::uint64_t expected_decode_executed(const ModelConfig& config, std::uint64_t naive_flops, std::size_t n_ctx,
                                       std::size_t n_threads) {
    const std::size_t n_splits =
        decode_split_count(config.n_batch * config.n_kv_heads, n_ctx, n_threads, std::max<std::size_t>(1, 2 * n_threads));
    const std::uint64_t gs = config.group_size(), dh = config.head_dim();
    std::uint64_t padding = 0;
    for (std::size_t split = 0; split < n_splits; ++split) {
        const std::uint64_t len = split_length(n_ctx, n_splits, split);
        padding += documented_group_flops(gs, dh, len) - naive_group_flops(gs, dh, len);
    }
    return naive_flops + config.n_batch * config.n_kv_heads * padding;
}

// The uncached path's waste: the upper half of each diagonal block of block_rows query rows,
// 4·dh FLOPs per masked (row, key), for every batch row and head.
inline std::uint64_t causal_waste_flops(const ModelConfig& config, std::uint64_t block_rows) {
    const std::uint64_t n = config.seq_len;
    std::uint64_t waste = 0;
    for (std::uint64_t first = 0; first < n; first += block_rows) {
        const std::uint64_t rows = std::min<std::uint64_t>(block_rows, n - first);
        waste += 4 * config.head_dim() * rows * (rows - 1) / 2;
    }
    return config.n_batch * config.n_heads * waste;
}

}  // namespace kvbench::test
