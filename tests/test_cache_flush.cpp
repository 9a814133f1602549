// CacheFlusher: buffer sizing and that flush() really walks every line.
#include "kvbench/measure/cache_flush.hpp"

#include "kvbench/measure/environment.hpp"

#include <doctest/doctest.h>

TEST_CASE("the flush buffer is several times the last-level cache") {
    const kvbench::Environment env = kvbench::collect_environment();
    const kvbench::CacheFlusher flusher;
    const std::size_t llc_bytes = env.llc_bytes == 0 ? kvbench::CacheFlusher::fallback_llc_bytes : env.llc_bytes;
    CHECK(flusher.buffer_bytes() >= 2 * llc_bytes);
}

TEST_CASE("an unknown llc size falls back to a 64 MiB llc") {
    const kvbench::CacheFlusher flusher(0);
    CHECK(flusher.buffer_bytes() == kvbench::CacheFlusher::llc_multiple * (std::size_t{64} << 20));
}

TEST_CASE("each flush writes and reads back one byte of every cache line") {
    constexpr std::size_t llc_bytes = std::size_t{1} << 20;
    kvbench::CacheFlusher flusher(llc_bytes);
    const std::size_t n_lines = flusher.buffer_bytes() / kvbench::CacheFlusher::cache_line_bytes;
    REQUIRE(flusher.buffer_bytes() >= llc_bytes);
    // The n-th flush writes the value n into every line, so the read pass sums to n_lines · n.
    flusher.flush();
    CHECK(flusher.checksum() == n_lines);
    flusher.flush();
    CHECK(flusher.checksum() == 2 * n_lines);
}
