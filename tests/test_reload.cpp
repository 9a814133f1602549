// Recompute or reload: the break-even on given times, and the tier probe on a small file.
#include "kvbench/measure/file_bandwidth.hpp"
#include "kvbench/plan/reload_plan.hpp"
#include "scratch_dir.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

namespace kvbench {

TEST_CASE("reload time is the prefix's KV bytes over the tier's bandwidth") {
    CHECK(reload_seconds(2'000'000'000, 1e9) == doctest::Approx(2.0));
}

TEST_CASE("the break-even sits where the two times cross, interpolated between the prefixes around it") {
    // Recomputing wins at 1K (1 ms against 2 ms), reloading at 2K (8 ms against 4 ms): the
    // gap goes from +1 to -4, so it closes a fifth of the way, at 1024 + 1024 / 5.
    const std::vector<ReloadPoint> points = {{512, 1e-3, 0.2e-3}, {1024, 2e-3, 1e-3}, {2048, 4e-3, 8e-3}};
    const BreakEven even = find_break_even(points);
    CHECK(even.kind == BreakEven::Kind::crossing);
    REQUIRE(even.tokens.has_value());
    CHECK(*even.tokens == doctest::Approx(1024 + 1024.0 / 5));
}

TEST_CASE("a prefix where reloading wins before the last one recomputing wins does not end the search") {
    // Noise at 1K: the crossing is after 2K, the last prefix where recomputing still won.
    const std::vector<ReloadPoint> points = {{512, 1e-3, 0.5e-3}, {1024, 2e-3, 2.5e-3}, {2048, 4e-3, 3e-3},
                                             {4096, 8e-3, 16e-3}};
    const BreakEven even = find_break_even(points);
    REQUIRE(even.tokens.has_value());
    CHECK(*even.tokens > 2048);
    CHECK(*even.tokens < 4096);
}

TEST_CASE("one side winning everywhere has no crossing, and says which side") {
    const std::vector<ReloadPoint> reload_wins = {{512, 1e-3, 2e-3}, {1024, 2e-3, 5e-3}};
    CHECK(find_break_even(reload_wins).kind == BreakEven::Kind::reload_always);
    CHECK_FALSE(find_break_even(reload_wins).tokens.has_value());
    const std::vector<ReloadPoint> recompute_wins = {{512, 3e-3, 2e-3}, {1024, 6e-3, 5e-3}};
    CHECK(find_break_even(recompute_wins).kind == BreakEven::Kind::recompute_always);
    CHECK(std::string(break_even_label(BreakEven::Kind::recompute_always)) == "recompute always");
}

TEST_CASE("the tier probe reads a small file and a directory's probe file at a finite positive rate") {
    const test::ScratchDir scratch("reload");
    const std::string file = (scratch.path / "tier.bin").string();
    {
        std::ofstream out(file, std::ios::binary);
        const std::string block(100'000, 'k');
        for (int i = 0; i < 10; ++i) out << block;
    }
    const FileReadProbe read = probe_read_bandwidth(file, std::uint64_t{1} << 30);
    CHECK(read.bytes == 1'000'000);
    CHECK(std::isfinite(read.bytes_per_s()));
    CHECK(read.bytes_per_s() > 0);
    CHECK_FALSE(read.method.empty());

    const FileReadProbe written = probe_read_bandwidth(scratch.path.string(), 1 << 20);
    CHECK(written.bytes == 1 << 20);
    CHECK(written.bytes_per_s() > 0);
    CHECK(scratch.n_entries() == 1);  // the probe file is gone, tier.bin stays
}

TEST_CASE("the tier probe refuses what it cannot read, naming it") {
    const test::ScratchDir scratch("reload");
    const std::string missing = (scratch.path / "missing").string();
    CHECK_THROWS_WITH_AS(probe_read_bandwidth(missing, 4096), doctest::Contains("missing"), std::invalid_argument);
    const std::string empty = (scratch.path / "empty").string();
    std::ofstream{empty};
    CHECK_THROWS_AS(probe_read_bandwidth(empty, 4096), std::invalid_argument);
}

}  // namespace kvbench
