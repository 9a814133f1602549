// The guards before a run: a grid of hundreds of points, or hours, needs --yes; a point over the memory limit is skipped.
#pragma once

#include "kvbench/measure/run_context.hpp"

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kvbench {

// Above either bound a run must be confirmed with --yes (docs/measuring.md, "Long runs").
inline constexpr std::size_t max_unconfirmed_points = 200;
inline constexpr double max_unconfirmed_seconds = 3600;

// Above this estimate a run says how long it will take before it starts (docs/measuring.md#long-runs).
inline constexpr double long_run_seconds = 60;

// "this sweep will take about 32 min (36 points, estimated from the saved roofline): <advice>",
// said before a run of more than long_run_seconds; nothing for a shorter one. `what` names the run
// ("sweep"), `unit` what the estimate counts ("point"); `assumed`: there is no roofline, so the
// estimate assumes describe_assumed_roofline().
std::optional<std::string> long_run_notice(std::string_view what, const RunEstimate& estimate, std::string_view unit,
                                           bool assumed, std::string_view advice);

// A long run in the unit people plan with: "45 s", "21 min", "5.9 h".
std::string format_run_time(double seconds);

// The likely intent behind a huge grid: the first axis, given as (option, text), with a
// long step-1 range, rewritten geometric ("-n 128-4096*2"). Nothing when no axis has one.
std::optional<std::string> likely_grid_intent(const std::vector<std::pair<std::string_view, std::string_view>>& axes);

// Throws ConfigError (one line: the count, the estimated time, the likely intent, --yes)
// when the grid is above either bound and `confirmed` is false. `dry_run_command`
// ("kvbench sweep") is the command whose --dry-run lists the grid; "" when it has none.
// `cached_path_s`: the same grid's time with --paths cached, where the run also times the
// uncached path and could leave it out; the line offers it when the uncached path is most of
// the time (it recomputes every position, so a long context is hours there and minutes cached).
void confirm_grid_size(std::size_t n_points, double estimated_s, const std::optional<std::string>& likely_intent,
                       bool confirmed, std::string_view dry_run_command,
                       std::optional<double> cached_path_s = std::nullopt);
// The count's half of confirm_grid_size, for before any roofline is measured (RunRequest::
// before_rooflines): a grid of too many points is refused before the run measures or saves
// anything. `assumed_s` is its time at the assumed peaks, and the line says so.
void confirm_point_count(std::size_t n_points, double assumed_s, const std::optional<std::string>& likely_intent,
                         bool confirmed, std::string_view dry_run_command);

// "skipping <label>: it needs 9.00 GiB, more than --max-memory (8.00 GiB); most of it the KV cache
// (8.00 GiB): lower --seq or --batch, ...": the pre-flight's warning for a point over the limit
// (docs/measuring.md#memory-pre-flight); the last part only when `needed` knows its largest term.
std::string memory_skip_warning(const std::string& label, const PointMemory& needed, const MemoryLimit& limit);
// "<label> needs 20.0 GiB of the 22.0 GiB available now (most of it the KV cache): other
// programs and the page cache keep the rest; --max-memory caps the points": a point that fits
// with little to spare (RunRequest::near_limit_warning).
std::string memory_near_limit_warning(const std::string& label, const PointMemory& needed, const MemoryLimit& limit);

// "skipping 79 of 80 points: each needs more than ... (62.0 GiB); the smallest, <label>, needs
// 64.0 GiB, most of it the KV cache (...): lower --seq or --batch": one line for many skipped
// points. `label` names a point as the command does, `unit` what the command calls one.
std::string memory_skip_summary(const std::vector<SkippedPoint>& skipped, std::size_t n_points, const MemoryLimit& limit,
                                const std::function<std::string(const GridPoint&)>& label, std::string_view unit);

}  // namespace kvbench
