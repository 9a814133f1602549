// A typo such as -n 128-4096 (step 1: 3,969 contexts) should cost one line, not a night.
#include "cli/grid_guard.hpp"

#include "cli/option_conventions.hpp"
#include "cli/value_list.hpp"
#include "kvbench/engine/config.hpp"
#include "kvbench/report/units.hpp"

#include <fmt/format.h>

namespace kvbench {

namespace {

// A long run in the unit people plan with: "21 min", "5.9 h" rather than "21314 s".
std::string format_run_time(double seconds) {
    if (seconds < 60) return format_duration_ns(seconds * 1e9);
    if (seconds < 3600) return fmt::format("{:.0f} min", seconds / 60);
    return fmt::format("{:.1f} h", seconds / 3600);
}

}  // namespace

std::optional<std::string> likely_grid_intent(const std::vector<std::pair<std::string_view, std::string_view>>& axes) {
    for (const auto& [option, text] : axes) {
        if (const std::optional<std::string> geometric = likely_geometric_list(text)) {
            return fmt::format("{} {}", option, *geometric);
        }
    }
    return std::nullopt;
}

void confirm_grid_size(std::size_t n_points, double estimated_s, const std::optional<std::string>& likely_intent,
                       bool confirmed, std::string_view dry_run_command) {
    if (confirmed || (n_points <= max_unconfirmed_points && estimated_s <= max_unconfirmed_seconds)) return;
    throw ConfigError(fmt::format("the grid has {}, about {} to measure (more than {} points or an hour): "
                                  "{}give --yes to run it as it is{}",
                                  plural(n_points, "point"), format_run_time(estimated_s),
                                  max_unconfirmed_points,
                                  likely_intent ? fmt::format("did you mean {}? Or ", *likely_intent) : "",
                                  dry_run_command.empty() ? "" : fmt::format(", or list it with {} --dry-run",
                                                                             dry_run_command)));
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

}  // namespace kvbench
