// Warnings about a run's results: pure functions of the rows, so the tests can feed them made-up ones.
#include "cli/result_warnings.hpp"

#include "kvbench/report/units.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace kvbench {

namespace {

std::string row_label(const ResultRow& row) {
    return fmt::format("{} T={} {}", describe(row.config), row.n_threads, path_name(row.path));
}

}  // namespace

std::optional<std::string> noise_warning(const std::vector<ResultRow>& rows, const NoiseContext& context) {
    const ResultRow* worst = nullptr;
    std::size_t n_noisy = 0;
    bool all_cores = false;
    for (const ResultRow& row : rows) {
        if (!row.noisy) continue;
        ++n_noisy;
        all_cores = all_cores || (row.n_threads > 1 && row.n_threads >= context.n_cores);
        if (worst == nullptr || row.stats.median_uncertainty > worst->stats.median_uncertainty) worst = &row;
    }
    if (worst == nullptr) return std::nullopt;
    std::vector<std::string> fixes;
    if (context.min_time_s > 0) {
        fixes.push_back(fmt::format("--min-time {:g}s -w 10", std::max(1.0, 4 * context.min_time_s)));
    } else {
        fixes.push_back(fmt::format("-r {} -w 10", std::max<std::size_t>(50, 2 * context.n_reps)));
    }
    if (!context.interleave) fixes.emplace_back("--interleave");
    // At one thread, or below the core count, fewer threads would not help.
    if (all_cores) {
        fixes.emplace_back(fmt::format("-t {} (leave a core to the system)", std::max<std::size_t>(1, context.n_cores - 1)));
    }
    return fmt::format("{} of {} noisy, marked ! (worst: {}, median ±{:.0f} % at 95 % confidence over {}): try {}",
                       n_noisy, format_count(rows.size(), "row"), row_label(*worst),
                       100 * worst->stats.median_uncertainty, format_count(worst->stats.n_samples, "repetition"),
                       fmt::join(fixes, ", or "));
}

std::optional<std::string> slow_rows_warning(const std::vector<ResultRow>& rows,
                                             const std::map<std::size_t, Roofline>& rooflines) {
    const ResultRow* worst = nullptr;
    double worst_factor = 0, worst_estimate_s = 0;
    bool worst_assumed = false;
    std::size_t n_slow = 0;
    for (const ResultRow& row : rows) {
        const auto found = rooflines.find(row.n_threads);
        const Roofline* roofline = found == rooflines.end() ? nullptr : &found->second;
        const std::optional<double> factor =
            times_the_estimate(row.cost.flops, row.cost.bytes, row.stats.median_ns, roofline);
        if (!factor || *factor < slow_factor) continue;
        ++n_slow;
        if (*factor > worst_factor) {
            worst = &row;
            worst_factor = *factor;
            worst_estimate_s = row.stats.median_ns * 1e-9 / *factor;
            worst_assumed = roofline == nullptr;
        }
    }
    if (worst == nullptr) return std::nullopt;
    std::vector<std::string> fixes;
    if (worst->n_threads > 1) fixes.emplace_back("-t 1");
    fixes.emplace_back("the same run when the machine is idle (see `top`)");
    return fmt::format(
        "{} of {} took {:.0f}x or more the time this machine allows (worst: {}, median {}, {:.0f}x the estimate "
        "of {} from {}): likely more threads than free cores, another process on the machine, or frequency "
        "throttling; try {}",
        n_slow, format_count(rows.size(), "row"), slow_factor, row_label(*worst),
        format_duration_ns(worst->stats.median_ns), worst_factor, format_duration_ns(worst_estimate_s * 1e9),
        worst_assumed ? "an assumed " + describe_assumed_roofline() : "the roofline", fmt::join(fixes, ", or "));
}

std::vector<std::size_t> threads_above_roofline(const std::vector<ResultRow>& rows) {
    std::vector<std::size_t> threads;
    for (const ResultRow& row : rows) {
        if (above_roofline(row) && std::find(threads.begin(), threads.end(), row.n_threads) == threads.end()) {
            threads.push_back(row.n_threads);
        }
    }
    return threads;
}

std::optional<std::string> above_roofline_warning(const std::vector<ResultRow>& rows,
                                                  const std::map<std::size_t, Roofline>& replaced) {
    const ResultRow* worst = nullptr;
    std::size_t n_above = 0;
    for (const ResultRow& row : rows) {
        if (!above_roofline(row)) continue;
        ++n_above;
        if (worst == nullptr || *row.roofline_pct > *worst->roofline_pct) worst = &row;
    }
    if (worst == nullptr) return std::nullopt;
    std::string message = fmt::format("{} of {} above 100 % of the roofline, marked ^ (worst: {}, {:.0f} % of the "
                                      "roofline {}): the roofline is lower than this machine",
                                      n_above, format_count(rows.size(), "row"), row_label(*worst),
                                      *worst->roofline_pct, worst->roofline_source);
    const auto found = replaced.find(worst->n_threads);
    if (found == replaced.end()) {
        return message + fmt::format(", measured while it was busy; measure it again with `kvbench roofline -t {}` "
                                     "when the machine is idle",
                                     worst->n_threads);
    }
    return message + fmt::format(": it was a quick one, measured low; measured it fully now ({:.1f} GB/s, {:.0f} "
                                 "GFLOP/s) and saved it, so later runs use it (this run's figures stay against the "
                                 "quick one)",
                                 found->second.peak_gbps, found->second.peak_gflops);
}

}  // namespace kvbench
