// CacheFlusher: what each flush method evicts, its buffer sizing, and that the runner flushes outside the timer.
#include "kvbench/measure/cache_flush.hpp"

#include "kvbench/engine/cost_model.hpp"
#include "kvbench/measure/environment.hpp"
#include "kvbench/measure/runner.hpp"
#include "fake_clock.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <vector>

using namespace kvbench;

namespace {

using kvbench::test::never_stop;

// Stands in for a real flush: records what it was asked to evict, and can be made slow.
using kvbench::test::fake_now_ns;
using kvbench::test::fake_ns;

// Counts the flushes and what they were given; with a fake clock, each makes a second pass on it.
class RecordingFlusher : public CacheFlusher {
public:
    explicit RecordingFlusher(std::int64_t* clock_ns = nullptr)
        : CacheFlusher(FlushMethod::stream, 4096), clock_ns_(clock_ns) {}

    void flush(std::span<const ByteRegion> regions) override {
        ++n_flushes;
        last_region_bytes = 0;
        for (const ByteRegion& region : regions) last_region_bytes += region.size();
        if (clock_ns_ != nullptr) *clock_ns_ += 1'000'000'000;
    }

    std::size_t n_flushes = 0;
    std::uint64_t last_region_bytes = 0;

private:
    std::int64_t* clock_ns_;
};

}  // namespace

TEST_CASE("the stream buffer is several times every llc the process may run on") {
    const Environment env = collect_environment();
    const CacheFlusher flusher;
    const std::size_t llc_bytes = env.llc_total_bytes == 0 ? CacheFlusher::fallback_llc_bytes : env.llc_total_bytes;
    CHECK(flusher.method() == FlushMethod::stream);
    CHECK(flusher.buffer_bytes() >= 2 * llc_bytes);
    CHECK(flusher.buffer_bytes() == flush_bytes(FlushMethod::stream, env.llc_total_bytes));
}

TEST_CASE("an unknown llc size falls back to a 64 MiB llc") {
    const CacheFlusher flusher(FlushMethod::stream, 0);
    CHECK(flusher.buffer_bytes() == CacheFlusher::llc_multiple * (std::size_t{64} << 20));
}

TEST_CASE("each stream flush writes and reads back one byte of every cache line") {
    constexpr std::size_t llc_bytes = std::size_t{1} << 20;
    CacheFlusher flusher(FlushMethod::stream, llc_bytes);
    const std::size_t n_lines = flusher.buffer_bytes() / CacheFlusher::cache_line_bytes;
    REQUIRE(flusher.buffer_bytes() >= llc_bytes);
    // The n-th flush writes the value n into every line, so the read pass sums to n_lines · n.
    flusher.flush();
    CHECK(flusher.checksum() == n_lines);
    flusher.flush();
    CHECK(flusher.checksum() == 2 * n_lines);
}

TEST_CASE("the clflush method owns no buffer") {
    if (!clflush_supported()) return;
    const CacheFlusher flusher(FlushMethod::clflush, std::size_t{32} << 20);
    CHECK(flusher.buffer_bytes() == 0);
    CHECK(flush_bytes(FlushMethod::clflush, std::size_t{32} << 20) == 0);
}

TEST_CASE("clflush evicts every line a region touches, also unaligned ones, and keeps the data") {
    if (!clflush_supported()) return;
    std::vector<float> a(1000);  // (1000) floats
    std::vector<float> b(3);     // (3) floats
    std::iota(a.begin(), a.end(), 0.0f);
    std::iota(b.begin(), b.end(), 5.0f);
    // Lines from the one holding the first byte to the one holding the last.
    auto lines_of = [](const ByteRegion& region) {
        const auto first = reinterpret_cast<std::uintptr_t>(region.data()) / 64;
        const auto last = (reinterpret_cast<std::uintptr_t>(region.data()) + region.size() - 1) / 64;
        return static_cast<std::uint64_t>(last - first + 1);
    };
    const ByteRegion inner = byte_region(a).subspan(3, 130);  // starts mid-line, spans 3 or 4 lines
    const std::vector<ByteRegion> regions{byte_region(a), inner, byte_region(b), ByteRegion()};
    CacheFlusher flusher(FlushMethod::clflush, 0);
    flusher.flush(regions);
    CHECK(flusher.checksum() == lines_of(regions[0]) + lines_of(inner) + lines_of(regions[2]));
    // Written-back, not dropped: the values read again from memory are the ones written.
    for (std::size_t i = 0; i < a.size(); ++i) REQUIRE(a[i] == static_cast<float>(i));
    CHECK(b[2] == 7.0f);
}

TEST_CASE("a cold cached repetition evicts the weights and the whole kv cache") {
    const GridPoint point{test::make_config(2, 40, 64, 4, 2, 2), 1};
    RunOptions options;
    options.run_uncached = false;
    options.n_reps = 3;
    options.n_warmup = 1;
    RecordingFlusher flusher;
    PointRunner runner(&flusher);
    runner.run(point, options, never_stop);
    CHECK(flusher.n_flushes == options.n_reps);
    const ModelConfig& c = point.config;
    const std::uint64_t weights_bytes = c.n_layers * weights_per_layer(c) * sizeof(float);
    CHECK(flusher.last_region_bytes >= weights_bytes + kv_cache_bytes(c));
}

TEST_CASE("a cold uncached repetition evicts at least the weights and the input sequence") {
    const GridPoint point{test::make_config(1, 40, 64, 4, 1, 1), 1};
    RunOptions options;
    options.run_cached = false;
    options.n_reps = 2;
    options.n_warmup = 0;
    RecordingFlusher flusher;
    PointRunner runner(&flusher);
    runner.run(point, options, never_stop);
    CHECK(flusher.n_flushes == options.n_reps);
    const ModelConfig& c = point.config;
    CHECK(flusher.last_region_bytes >= (weights_per_layer(c) + c.seq_len * c.model_dim) * sizeof(float));
}

TEST_CASE("a slow flush never shows up in the timed samples") {
    // On a fake clock that ticks 1 ns a reading, each flush makes a second pass; were the flush
    // inside the timer, a sample would hold it.
    const GridPoint point{test::make_config(1, 16, 64, 4, 4, 1), 1};
    RunOptions options;
    options.n_reps = 3;
    options.n_warmup = 0;
    options.now_ns = fake_now_ns;
    RecordingFlusher flusher(&fake_ns);
    PointRunner runner(&flusher);
    const PointMeasurement m = runner.run(point, options, never_stop);
    REQUIRE(m.cached);
    REQUIRE(m.uncached);
    CHECK(flusher.n_flushes == 2 * options.n_reps);
    for (const auto* samples : {&m.cached->samples_ns, &m.uncached->samples_ns}) {
        CHECK(*samples == std::vector<std::int64_t>{1, 1, 1});
    }
}
