// prepare_run's memory pre-flight on this machine's available memory: a point that fits with
// little to spare is said before the run (docs/measuring.md#memory-pre-flight).
#include "kvbench/measure/memory.hpp"
#include "kvbench/measure/run_context.hpp"
#include "kvbench/measure/sweep.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace kvbench {

TEST_CASE("a point needing most of the available memory is warned about, unless --max-memory set the cap") {
    const std::optional<std::uint64_t> available = available_memory_bytes();
    if (!available) {
        MESSAGE("no /proc/meminfo: the machine's available memory is unknown, so nothing is said");
        return;
    }
    SweepSpec spec;
    spec.seq = {16};
    spec.dim = {64};
    spec.heads = {4};
    spec.kv_heads = {4};
    const Grid grid = expand(spec);
    std::vector<std::string> warnings;
    RunMessages messages;
    messages.warn = [&](const std::string& message) { warnings.push_back(message); };
    // The number of near-limit warnings of a run whose one point needs `share` of the memory
    // available when the test started (a share well inside (0.8, 1): the run reads it again).
    const auto near_limit_warnings = [&](double share, std::optional<std::uint64_t> max_memory) {
        warnings.clear();
        RunRequest request;
        request.rooflines.none = true;
        request.max_memory_bytes = max_memory;
        request.memory_of = [&](const GridPoint&, const Environment&) {
            return PointMemory{static_cast<std::uint64_t>(share * static_cast<double>(*available)), std::nullopt};
        };
        request.skip_warning = [](const GridPoint&, const PointMemory&, const MemoryLimit&) { return std::string("skip"); };
        request.near_limit_warning = [](const GridPoint&, const PointMemory&, const MemoryLimit& limit) {
            return "near " + limit.name;
        };
        request.estimate_of = [](const GridPoint&, const Roofline*, const Environment&) { return std::vector<double>{1.0}; };
        const RunContext context = prepare_run(grid, request, messages);
        CHECK(context.points.size() == 1);
        return std::count(warnings.begin(), warnings.end(), "near the memory available now");
    };
    CHECK(near_limit_warnings(0.9, std::nullopt) == 1);
    CHECK(near_limit_warnings(0.5, std::nullopt) == 0);
    CHECK(near_limit_warnings(0.9, *available) == 0);  // a cap the user chose: theirs to judge
}

}  // namespace kvbench
