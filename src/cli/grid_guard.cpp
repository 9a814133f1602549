// A typo such as -n 128-4096 (step 1: 3,969 contexts) should cost one line, not a night.
#include "cli/grid_guard.hpp"

#include "cli/option_conventions.hpp"
#include "cli/value_list.hpp"
#include "kvbench/engine/config.hpp"
#include "kvbench/report/units.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace kvbench {

std::string format_run_time(double seconds) {
    if (seconds < 60) return format_duration_ns(seconds * 1e9);
    if (seconds < 3600) return fmt::format("{:.0f} min", seconds / 60);
    return fmt::format("{:.1f} h", seconds / 3600);
}

std::optional<std::string> long_run_notice(std::string_view what, const RunEstimate& estimate, std::string_view unit,
                                           bool assumed, std::string_view advice) {
    if (estimate.total_seconds <= long_run_seconds) return std::nullopt;
    return fmt::format("this {} will take about {} ({}, {}): {}", what, format_run_time(estimate.total_seconds),
                       format_count(estimate.n_units, unit),
                       assumed ? fmt::format("assuming {}; `kvbench roofline` measures this machine's",
                                             describe_assumed_roofline())
                               : "estimated from the roofline",
                       advice);
}

std::optional<std::string> likely_grid_intent(const std::vector<std::pair<std::string_view, std::string_view>>& axes) {
    for (const auto& [option, text] : axes) {
        if (const std::optional<std::string> geometric = likely_geometric_list(text)) {
            return fmt::format("{} {}", option, *geometric);
        }
    }
    return std::nullopt;
}

namespace {

[[noreturn]] void refuse_grid(std::size_t n_points, double estimated_s, std::string_view time_basis,
                              const std::optional<std::string>& likely_intent, std::string_view dry_run_command,
                              std::optional<double> cached_path_s = std::nullopt) {
    const bool offer_cached = cached_path_s && *cached_path_s <= estimated_s / 2;
    throw ConfigError(fmt::format("the grid has {}, about {} to measure{} (more than {} points or an hour): "
                                  "{}{}give --yes to run it as it is{}",
                                  plural(n_points, "point"), format_run_time(estimated_s), time_basis,
                                  max_unconfirmed_points,
                                  likely_intent ? fmt::format("did you mean {}? Or ", *likely_intent) : "",
                                  offer_cached ? fmt::format("--paths cached would take about {}, the uncached path "
                                                             "being the rest; or ",
                                                             format_run_time(*cached_path_s))
                                               : "",
                                  dry_run_command.empty() ? "" : fmt::format(", or list it with {} --dry-run",
                                                                             dry_run_command)));
}

}  // namespace

void confirm_grid_size(std::size_t n_points, double estimated_s, const std::optional<std::string>& likely_intent,
                       bool confirmed, std::string_view dry_run_command, std::optional<double> cached_path_s) {
    if (confirmed || (n_points <= max_unconfirmed_points && estimated_s <= max_unconfirmed_seconds)) return;
    refuse_grid(n_points, estimated_s, "", likely_intent, dry_run_command, cached_path_s);
}

void confirm_point_count(std::size_t n_points, double assumed_s, const std::optional<std::string>& likely_intent,
                         bool confirmed, std::string_view dry_run_command) {
    if (confirmed || n_points <= max_unconfirmed_points) return;
    refuse_grid(n_points, assumed_s, " at the assumed peaks", likely_intent, dry_run_command);
}

std::string memory_skip_warning(const std::string& label, const PointMemory& needed, const MemoryLimit& limit) {
    std::string warning = fmt::format("skipping {}: it needs {}, more than {} ({})", label,
                                      format_bytes(needed.total_bytes), limit.name, format_bytes(limit.bytes.value_or(0)));
    if (needed.largest) {
        warning += fmt::format("; most of it {} ({}): {}", needed.largest->name, format_bytes(needed.largest->bytes),
                               needed.largest->hint);
    }
    return warning;
}

std::string memory_near_limit_warning(const std::string& label, const PointMemory& needed, const MemoryLimit& limit) {
    return fmt::format("{} needs {} of the {} available now{}: other programs and the page cache keep the rest, so "
                       "the machine may swap or a program fail to allocate; --max-memory caps the points",
                       label, format_bytes(needed.total_bytes), format_bytes(limit.bytes.value_or(0)),
                       needed.largest ? fmt::format(" (most of it {})", needed.largest->name) : "");
}

std::string memory_skip_summary(const std::vector<SkippedPoint>& skipped, std::size_t n_points, const MemoryLimit& limit,
                                const std::function<std::string(const GridPoint&)>& label, std::string_view unit) {
    const SkippedPoint& smallest = *std::min_element(skipped.begin(), skipped.end(), [](const auto& a, const auto& b) {
        return a.needed.total_bytes < b.needed.total_bytes;
    });
    std::string warning = fmt::format("skipping {} of {}: each needs more than {} ({}); the smallest, {}, needs {}",
                                      skipped.size(), plural(n_points, unit), limit.name,
                                      format_bytes(limit.bytes.value_or(0)), label(smallest.point),
                                      format_bytes(smallest.needed.total_bytes));
    if (smallest.needed.largest) {
        warning += fmt::format(", most of it {} ({}): {}", smallest.needed.largest->name,
                               format_bytes(smallest.needed.largest->bytes), smallest.needed.largest->hint);
    }
    return warning;
}

}  // namespace kvbench
