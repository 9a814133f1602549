// BlockPrefetcher: software prefetch of the next key block, spread between the current block's loads.
// Private to src/engine (attention_kernel.cpp).
#pragma once

#include "kvbench/engine/attention_kernel.hpp"
#include "simd.hpp"

#include <algorithm>
#include <cstddef>

namespace kvbench::simd {

// Keys and values of a later block, requested a few cache lines at a time between the
// current block's loads. The kernel reads a block in bursts separated by arithmetic, so the
// hardware prefetcher, which follows demand, falls behind; and a burst of software
// prefetches overflows the miss buffers and is mostly dropped (measured on the Zen 5 host:
// reading 32 KiB from DRAM took 4000 cycles, 2300 after a burst of prefetches, 670 after the
// same prefetches issued 16 lines at a time). Prefetching into L2 only (t1) measured no better.
class BlockPrefetcher {
public:
    // Blocks ahead of the one being computed.
    static constexpr std::size_t distance = 1;

    // Spreads the lines of the block at first_key (none past the context) over `calls` calls.
    void start(const GroupAttention& problem, std::size_t first_key, std::size_t calls) {
        calls_ = 0;
        n_segments_ = 0;
        if (first_key >= problem.n_ctx) return;
        const std::size_t n_keys = std::min(Simd::key_block, problem.n_ctx - first_key);
        key_ = reinterpret_cast<const char*>(problem.keys + first_key * problem.kv_stride);
        value_ = reinterpret_cast<const char*>(problem.values + first_key * problem.kv_stride);
        // Contiguous rows (the KV cache) make one segment; strided rows one segment each.
        const bool contiguous = problem.kv_stride == problem.head_dim;
        n_segments_ = contiguous ? 1 : n_keys;
        segment_bytes_ = (contiguous ? n_keys : 1) * problem.head_dim * sizeof(float);
        stride_bytes_ = problem.kv_stride * sizeof(float);
        offset_ = 0;
        const std::size_t n_lines = n_segments_ * ((segment_bytes_ + line_bytes - 1) / line_bytes);
        per_call_ = (n_lines + calls - 1) / std::max<std::size_t>(1, calls);
    }

    void issue() {
        ++calls_;
        for (std::size_t i = 0; i < per_call_ && n_segments_ > 0; ++i) {
            // The same line of the keys and of the values.
            __builtin_prefetch(key_ + offset_, 0, 3);
            __builtin_prefetch(value_ + offset_, 0, 3);
            offset_ += line_bytes;
            if (offset_ >= segment_bytes_) {
                offset_ = 0;
                key_ += stride_bytes_;
                value_ += stride_bytes_;
                --n_segments_;
            }
        }
    }

    // Calls since start(): how many the next block will make, as blocks are alike.
    std::size_t calls() const { return calls_; }

private:
    static constexpr std::size_t line_bytes = 64;
    const char* key_ = nullptr;    // current segment of the keys
    const char* value_ = nullptr;  // current segment of the values
    std::size_t n_segments_ = 0;   // segments left, the current one included
    std::size_t segment_bytes_ = 0;
    std::size_t stride_bytes_ = 0;
    std::size_t offset_ = 0;       // bytes into the current segment
    std::size_t per_call_ = 0;     // lines of K (and as many of V) per call
    std::size_t calls_ = 0;
};

}  // namespace kvbench::simd
