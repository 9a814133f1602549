// Cold cache: evicts a step's own buffers from every cache of the machine, or streams a buffer through the LLCs (docs/measuring.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

namespace kvbench {

// The bytes of one buffer a step reads or writes.
using ByteRegion = std::span<const std::byte>;

// The bytes of a contiguous container (std::vector, PageAlignedVector, ...).
template <typename Container>
ByteRegion byte_region(const Container& container) {
    return std::as_bytes(std::span(container.data(), container.size()));
}

enum class FlushMethod {
    // Writes back and invalidates every line of the step's own buffers with clflushopt (clflush
    // on older CPUs). The instruction is coherent: the line leaves every core's L1 and L2, every
    // L3 slice and every socket. Costs in proportion to the step's bytes. x86-64 only.
    clflush,
    // Writes then reads a buffer of llc_multiple × the LLCs the process may run on. Evicts
    // everything else too (page tables, code, the BLAS library's own buffers) and works on any
    // CPU, but costs in proportion to the caches, and reaches only the LLCs of the cores its
    // threads happen to run on.
    stream,
};

// "clflush" or "stream", the spelling of --flush.
std::string_view flush_method_name(FlushMethod method);

// True where FlushMethod::clflush can run (x86-64).
bool clflush_supported();
// True when the CPU has clflushopt; otherwise evict_regions uses the older, serialising clflush.
bool clflushopt_supported();

// Writes back and invalidates, in every cache of the machine, every line that holds a byte of
// the regions, on the current compute threads; returns once all of them are done (sfence).
// Returns the number of cache lines flushed.
// Requires: clflush_supported().
std::uint64_t evict_regions(std::span<const ByteRegion> regions);

// Bytes of the stream method's buffer: llc_multiple × llc_total_bytes, or × fallback_llc_bytes
// when the LLC size is unknown (0).
std::size_t stream_flush_bytes(std::size_t llc_total_bytes);
// Bytes a CacheFlusher of this method allocates: 0 for clflush, which owns no buffer.
std::size_t flush_bytes(FlushMethod method, std::size_t llc_total_bytes);

class CacheFlusher {
public:
    // Buffer bytes per byte of last-level cache, for the stream method. The LLC of a Zen core
    // complex is a victim cache with its own replacement policy; streaming through several
    // times its size leaves none of the previous step's lines behind.
    static constexpr std::size_t llc_multiple = 4;
    // Used when the LLC size is unknown (0): larger than any desktop or server LLC slice.
    static constexpr std::size_t fallback_llc_bytes = std::size_t{64} << 20;
    static constexpr std::size_t cache_line_bytes = 64;

    // llc_total_bytes: Environment::llc_total_bytes, the LLCs of every CPU the process may run
    // on, each counted once. The stream method allocates and first-touches its buffer here.
    // Requires: method == stream or clflush_supported().
    CacheFlusher(FlushMethod method, std::size_t llc_total_bytes);
    // The stream method, sized from collect_environment(): for callers that do not know
    // which buffers their step touches.
    CacheFlusher();

    CacheFlusher(const CacheFlusher&) = delete;
    CacheFlusher& operator=(const CacheFlusher&) = delete;
    CacheFlusher(CacheFlusher&&) noexcept = default;
    CacheFlusher& operator=(CacheFlusher&&) noexcept = default;
    // Virtual so that a test can stand in a flush of its own (e.g. a slow one).
    virtual ~CacheFlusher() = default;

    // Makes a step's data cold before a timed repetition: evicts `regions` (clflush), or
    // streams the buffer and ignores `regions` (stream). Allocates nothing.
    virtual void flush(std::span<const ByteRegion> regions);
    void flush() { flush({}); }

    FlushMethod method() const { return method_; }
    std::size_t buffer_bytes() const { return buffer_bytes_; }
    // Proof that the last flush() did its work. stream: the sum its read pass saw, n_lines ×
    // (flush count mod 256), which also keeps the compiler from dropping that pass.
    // clflush: the number of lines evicted.
    std::uint64_t checksum() const { return checksum_; }

private:
    void stream_buffer();

    FlushMethod method_;
    std::unique_ptr<std::uint8_t[]> buffer_;  // (buffer_bytes_) bytes; stream only
    std::size_t buffer_bytes_ = 0;
    std::uint8_t generation_ = 0;  // value the next stream writes, so every flush changes memory
    std::uint64_t checksum_ = 0;
};

}  // namespace kvbench
