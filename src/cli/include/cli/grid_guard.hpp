// The safety prompt before a long run: a grid of hundreds of points, or hours, needs --yes.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kvbench {

// Above either bound a run must be confirmed with --yes (docs/measuring.md, "Long runs").
inline constexpr std::size_t max_unconfirmed_points = 200;
inline constexpr double max_unconfirmed_seconds = 3600;

// The likely intent behind a huge grid: the first axis, given as (option, text), with a
// long step-1 range, rewritten geometric ("-n 128-4096*2"). Nothing when no axis has one.
std::optional<std::string> likely_grid_intent(const std::vector<std::pair<std::string_view, std::string_view>>& axes);

// Throws ConfigError (one line: the count, the estimated time, the likely intent, --yes)
// when the grid is above either bound and `confirmed` is false. `dry_run_command`
// ("kvbench sweep") is the command whose --dry-run lists the grid; "" when it has none.
void confirm_grid_size(std::size_t n_points, double estimated_s, const std::optional<std::string>& likely_intent,
                       bool confirmed, std::string_view dry_run_command);

}  // namespace kvbench
