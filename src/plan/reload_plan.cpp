// The break-even of recompute against reload, from times at a few prefix lengths.
#include "kvbench/plan/reload_plan.hpp"

namespace kvbench {

double reload_seconds(std::uint64_t kv_bytes, double tier_bytes_per_s) {
    return static_cast<double>(kv_bytes) / tier_bytes_per_s;
}

BreakEven find_break_even(std::span<const ReloadPoint> points) {
    // Reloading grows linearly with the prefix and the prefill faster (its attention is
    // quadratic), so past some length reloading wins. Noise may flip a point near the
    // crossing: the crossing is after the last point where recomputing still won.
    std::optional<std::size_t> last_recompute;
    for (std::size_t i = 0; i < points.size(); ++i) {
        if (points[i].prefill_s <= points[i].reload_s) last_recompute = i;
    }
    if (!last_recompute) return {BreakEven::Kind::reload_always, std::nullopt};
    if (*last_recompute + 1 == points.size()) return {BreakEven::Kind::recompute_always, std::nullopt};
    const ReloadPoint& low = points[*last_recompute];
    const ReloadPoint& high = points[*last_recompute + 1];
    const double low_gap = low.reload_s - low.prefill_s;     // >= 0: recomputing no slower
    const double high_gap = high.reload_s - high.prefill_s;  // < 0: reloading faster
    const double t = low_gap / (low_gap - high_gap);
    const double tokens = static_cast<double>(low.prefix_tokens) +
                          t * static_cast<double>(high.prefix_tokens - low.prefix_tokens);
    return {BreakEven::Kind::crossing, tokens};
}

const char* break_even_label(BreakEven::Kind kind) {
    switch (kind) {
        case BreakEven::Kind::crossing: return "crossing";
        case BreakEven::Kind::reload_always: return "reload always";
        case BreakEven::Kind::recompute_always: return "recompute always";
    }
    return "?";
}

}  // namespace kvbench
