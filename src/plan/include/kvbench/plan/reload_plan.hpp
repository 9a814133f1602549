// Recompute or reload: a prefix's cache read back from a slower tier against the prefill that
// recomputes it, and the prefix length at which the two take the same time
// (docs/planning.md, "Recompute or reload").
#pragma once

#include <cstdint>
#include <optional>
#include <span>

namespace kvbench {

// One prefix length with both times.
struct ReloadPoint {
    std::uint64_t prefix_tokens = 0;
    double reload_s = 0;   // the prefix's KV bytes over the tier's bandwidth
    double prefill_s = 0;  // the uncached forward of the prefix, measured
};

// Where reloading starts to pay, over the prefixes measured.
struct BreakEven {
    enum class Kind {
        crossing,         // recomputing is faster below `tokens`, reloading above
        reload_always,    // reloading was faster at every prefix measured
        recompute_always  // recomputing was faster at every prefix measured
    };
    Kind kind = Kind::recompute_always;
    std::optional<double> tokens;  // the crossing, set only for Kind::crossing
};

// The reload time of a prefix: kv_bytes / tier_bytes_per_s. Requires: tier_bytes_per_s > 0.
double reload_seconds(std::uint64_t kv_bytes, double tier_bytes_per_s);

// The first prefix length, going up, past which reloading stays faster: between the last
// measured prefix where recomputing was no slower and the next one, the difference of the two
// times interpolated linearly in the prefix length. Requires: points ascending by
// prefix_tokens, not empty.
BreakEven find_break_even(std::span<const ReloadPoint> points);

const char* break_even_label(BreakEven::Kind kind);  // "crossing", "reload always", "recompute always"

}  // namespace kvbench
