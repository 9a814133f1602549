// Evicts the last-level cache by streaming a buffer several times its size.
#include "kvbench/measure/cache_flush.hpp"

#include "kvbench/measure/environment.hpp"

#include <algorithm>
#include <cstring>

namespace kvbench {

CacheFlusher::CacheFlusher(std::size_t llc_bytes)
    : buffer_bytes_(llc_multiple * (llc_bytes == 0 ? fallback_llc_bytes : llc_bytes)) {
    // Round down to whole lines so flush() needs no tail loop.
    buffer_bytes_ -= buffer_bytes_ % cache_line_bytes;
    buffer_ = std::make_unique_for_overwrite<std::uint8_t[]>(buffer_bytes_);
    // First touch: untouched pages all map to the kernel's zero page, which would
    // sit in cache and flush nothing. Writing them in parallel also places each
    // thread's share on its own NUMA node, as flush() later walks it.
    std::uint8_t* const data = buffer_.get();
    const auto n_bytes = static_cast<std::ptrdiff_t>(buffer_bytes_);
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t i = 0; i < n_bytes; i += 4096) {
        const auto page_bytes = std::min<std::ptrdiff_t>(4096, n_bytes - i);
        std::memset(data + i, 0, static_cast<std::size_t>(page_bytes));
    }
}

CacheFlusher::CacheFlusher() : CacheFlusher(collect_environment().llc_bytes) {}

void CacheFlusher::flush() {
    ++generation_;
    std::uint8_t* const data = buffer_.get();
    const std::uint8_t value = generation_;
    const auto n_lines = static_cast<std::ptrdiff_t>(buffer_bytes_ / cache_line_bytes);
    constexpr auto line = static_cast<std::ptrdiff_t>(cache_line_bytes);
    std::uint64_t sum = 0;
    // Write, then read, with the same static partition so each thread walks its
    // own share (larger than its core's L2). The write also evicts dirty
    // benchmark lines (the KV cache just appended to) now rather than inside the
    // timed step. The read pass, over a buffer at least twice the LLC, evicts the
    // flush's own dirty lines again, so what is left in cache is clean and the
    // timed step pays no write-backs for the flush.
#pragma omp parallel
    {
#pragma omp for schedule(static)
        for (std::ptrdiff_t i = 0; i < n_lines; ++i) data[i * line] = value;
#pragma omp for schedule(static) reduction(+ : sum)
        for (std::ptrdiff_t i = 0; i < n_lines; ++i) sum += data[i * line];
    }
    checksum_ = sum;
}

}  // namespace kvbench
