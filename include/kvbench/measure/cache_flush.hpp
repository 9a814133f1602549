// CacheFlusher: evicts the last-level cache before a timed repetition (SPEC §3, --cache-state cold).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace kvbench {

class CacheFlusher {
public:
    // Buffer bytes per byte of last-level cache. The LLC of a Zen core complex is a
    // victim cache with its own replacement policy; streaming through several times
    // its size leaves none of the previous step's lines behind.
    static constexpr std::size_t llc_multiple = 4;
    // Used when the LLC size is unknown (0): larger than any desktop or server LLC slice.
    static constexpr std::size_t fallback_llc_bytes = std::size_t{64} << 20;
    static constexpr std::size_t cache_line_bytes = 64;

    // Allocates and first-touches llc_multiple × llc_bytes (fallback_llc_bytes when 0).
    explicit CacheFlusher(std::size_t llc_bytes);
    // Same, with the LLC size read from sysfs by collect_environment().
    CacheFlusher();

    CacheFlusher(const CacheFlusher&) = delete;
    CacheFlusher& operator=(const CacheFlusher&) = delete;
    CacheFlusher(CacheFlusher&&) noexcept = default;
    CacheFlusher& operator=(CacheFlusher&&) noexcept = default;
    ~CacheFlusher() = default;

    // Writes one byte of every line of the buffer, then reads them back, on the
    // current compute threads (each thread also flushes its own core's L1/L2).
    // Allocates nothing.
    void flush();

    std::size_t buffer_bytes() const { return buffer_bytes_; }
    // Sum of the bytes the last flush() read back: n_lines × (flush count mod 256).
    // Storing it is what keeps the compiler from dropping the read pass.
    std::uint64_t checksum() const { return checksum_; }

private:
    std::unique_ptr<std::uint8_t[]> buffer_;  // (buffer_bytes_) bytes
    std::size_t buffer_bytes_ = 0;
    std::uint8_t generation_ = 0;  // value the next flush() writes, so every flush changes memory
    std::uint64_t checksum_ = 0;
};

}  // namespace kvbench
