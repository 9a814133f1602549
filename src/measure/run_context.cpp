// The run context: environment and its warnings, the memory pre-flight, the roofline policy and the estimate, once per command.
#include "kvbench/measure/run_context.hpp"

#include "kvbench/engine/config.hpp"
#include "kvbench/measure/memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <stdexcept>

namespace kvbench {

namespace {

std::string thread_count(std::size_t n_threads) {
    return fmt::format("{} thread{}", n_threads, n_threads == 1 ? "" : "s");
}

// A roofline measured elsewhere is still used, but never silently.
void warn_if_foreign(const Roofline& roofline, const std::filesystem::path& path, const Environment& env,
                     std::size_t n_threads, const RunMessages& messages) {
    const std::vector<std::string> reasons = roofline_mismatches(roofline, env, n_threads);
    if (reasons.empty()) return;
    messages.warning(fmt::format("roofline {} may not describe this run: {}; re-measure with `kvbench roofline -t {}` "
                                 "or `kvbench sweep --measure-roofline`",
                                 path.string(), fmt::join(reasons, "; "), n_threads));
}

void save_roofline_creating_directory(const std::filesystem::path& path, const Roofline& roofline) {
    if (!path.parent_path().empty()) std::filesystem::create_directories(path.parent_path());
    save_roofline(path, roofline);
}

// Measures the roofline on n_threads for this run and saves it where later runs look for it;
// a roofline that cannot be saved is still used.
Roofline measure_for_this_run(std::size_t n_threads, const RooflineOptions& options, const RunMessages& messages) {
    Roofline measured = measure_roofline(n_threads, options);
    measured.source = options.quick ? "measured this run (quick)" : "measured this run";
    try {
        save_roofline_creating_directory(default_roofline_path(n_threads), measured);
    } catch (const std::exception& error) {
        messages.warning(fmt::format("roofline measured but not saved: {}", error.what()));
    }
    return measured;
}

// The saved roofline of n_threads, when there is a readable one; a corrupt one is said and ignored.
std::optional<Roofline> load_saved_roofline(const std::filesystem::path& saved, const Environment& env,
                                            std::size_t n_threads, const RunMessages& messages) {
    if (!std::filesystem::exists(saved)) return std::nullopt;
    try {
        Roofline loaded = load_roofline(saved);
        loaded.source = fmt::format("saved (measured {}{})", loaded.measured_at, loaded.quick ? ", quick" : "");
        warn_if_foreign(loaded, saved, env, n_threads, messages);
        return loaded;
    } catch (const std::runtime_error& error) {
        messages.warning(fmt::format("ignoring the saved roofline: {}; `kvbench roofline -t {}` measures it again",
                                     error.what(), n_threads));
        return std::nullopt;
    }
}

// No saved roofline: a quick one now, so that the first run on a machine has one.
Roofline measure_missing_roofline(std::size_t n_threads, const std::filesystem::path& saved,
                                  const RunMessages& messages) {
    const auto start = std::chrono::steady_clock::now();
    Roofline measured = measure_for_this_run(n_threads, quick_roofline_options(), messages);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    messages.notice(fmt::format("no roofline saved for {}: measured one in {:.1f} s ({:.1f} GB/s, {:.0f} GFLOP/s) and "
                                "saved it to {}; `kvbench roofline -t {}` measures it fully",
                                thread_count(n_threads), took.count(), measured.peak_gbps, measured.peak_gflops,
                                saved.string(), n_threads));
    return measured;
}

std::optional<Roofline> roofline_for(std::size_t n_threads, const RooflinePolicy& policy, const Environment& env,
                                     const RunMessages& messages) {
    if (policy.given) {
        warn_if_foreign(policy.given->roofline, policy.given->path, env, n_threads, messages);
        return policy.given->roofline;
    }
    if (policy.measure) return measure_for_this_run(n_threads, RooflineOptions{}, messages);
    std::filesystem::path saved;
    try {
        saved = default_roofline_path(n_threads);
    } catch (const std::runtime_error&) {
        return std::nullopt;  // no home or cache directory: run without a roofline
    }
    if (std::optional<Roofline> loaded = load_saved_roofline(saved, env, n_threads, messages)) return loaded;
    if (!policy.measure_missing) return std::nullopt;
    return measure_missing_roofline(n_threads, saved, messages);
}

// More threads than cores is allowed, but those points time the scheduler too (docs/measuring.md#threads).
void warn_about_threads(const Grid& grid, const Environment& env, const RunMessages& messages) {
    std::size_t max_threads = 0;
    for (const GridPoint& point : grid.points) max_threads = std::max(max_threads, point.n_threads);
    if (max_threads > env.n_cores) {
        messages.warning(fmt::format("--threads {} is more than the {} cores this process may use: those points also "
                                     "time the scheduler",
                                     max_threads, env.n_cores));
    }
}

// Drops the points whose peak memory exceeds the limit, with one warning each, or one for all
// when there are many (a huge grid must not bury its one error under a page of warnings).
std::vector<GridPoint> keep_points_that_fit(const Grid& grid, const RunRequest& request, const MemoryLimit& limit,
                                            const Environment& env, const RunMessages& messages) {
    std::vector<GridPoint> kept;
    std::vector<SkippedPoint> skipped;
    for (const GridPoint& point : grid.points) {
        const PointMemory needed = request.memory_of(point, env);
        if (limit.bytes && needed.total_bytes > *limit.bytes) {
            skipped.push_back({point, needed});
            continue;
        }
        kept.push_back(point);
    }
    if (skipped.size() <= max_skip_warnings || !request.skip_summary) {
        for (const SkippedPoint& each : skipped) messages.warning(request.skip_warning(each.point, each.needed, limit));
    } else {
        messages.warning(request.skip_summary(skipped, grid.points.size(), limit));
    }
    if (kept.empty()) {
        throw ConfigError(fmt::format("no {} fits in {}: {}", request.nothing_fits, limit.name, request.nothing_fits_hint));
    }
    if (request.near_limit_warning && limit.bytes && !limit.user_given) {
        std::optional<SkippedPoint> largest;
        for (const GridPoint& point : kept) {
            const PointMemory needed = request.memory_of(point, env);
            if (!largest || needed.total_bytes > largest->needed.total_bytes) largest = SkippedPoint{point, needed};
        }
        if (static_cast<double>(largest->needed.total_bytes) > near_limit_fraction * static_cast<double>(*limit.bytes)) {
            messages.warning(request.near_limit_warning(largest->point, largest->needed, limit));
        }
    }
    return kept;
}

RunEstimate estimate_run(const std::vector<GridPoint>& points, const RunRequest& request, const Rooflines& rooflines,
                         const Environment& env) {
    RunEstimate estimate;
    for (const GridPoint& point : points) {
        const std::vector<double>& units =
            estimate.unit_seconds.emplace_back(request.estimate_of(point, roofline_of(rooflines, point.n_threads), env));
        estimate.total_seconds = std::accumulate(units.begin(), units.end(), estimate.total_seconds);
        estimate.n_units += units.size();
    }
    return estimate;
}

}  // namespace

void RunMessages::warning(const std::string& message) const {
    if (warn) warn(message);
}

void RunMessages::notice(const std::string& message) const {
    if (note) note(message);
}

void RunMessages::failure(const std::string& message) const {
    if (error) error(message);
}

const Roofline* roofline_of(const Rooflines& rooflines, std::size_t n_threads) {
    const auto found = rooflines.find(n_threads);
    return found == rooflines.end() ? nullptr : &found->second;
}

GivenRoofline load_given_roofline(const std::string& path) {
    if (path.empty()) throw ConfigError("--roofline: the file name is empty (give a file saved by `kvbench roofline`)");
    if (std::error_code ignored; std::filesystem::is_directory(path, ignored)) {
        throw ConfigError(fmt::format("--roofline {}: is a directory (give a file saved by `kvbench roofline`)", path));
    }
    try {
        GivenRoofline given{path, load_roofline(path)};
        given.roofline.source = fmt::format("--roofline file (measured {})", given.roofline.measured_at);
        return given;
    } catch (const std::runtime_error& error) {
        throw ConfigError(fmt::format("--roofline: {}", error.what()));
    }
}

Roofline measure_and_save_roofline(std::size_t n_threads, const RooflineOptions& options,
                                   const std::filesystem::path& path) {
    const Roofline measured = measure_roofline(n_threads, options);
    save_roofline_creating_directory(path, measured);
    return measured;
}

Rooflines load_rooflines(const RooflinePolicy& policy, const std::vector<GridPoint>& points, const Environment& env,
                         const RunMessages& messages) {
    Rooflines rooflines;
    if (policy.none) return rooflines;
    for (const GridPoint& point : points) {
        if (rooflines.contains(point.n_threads)) continue;
        if (std::optional<Roofline> roofline = roofline_for(point.n_threads, policy, env, messages)) {
            rooflines.emplace(point.n_threads, std::move(*roofline));
        }
    }
    return rooflines;
}

Rooflines replace_beaten_quick_rooflines(const Rooflines& used, const std::vector<std::size_t>& beaten,
                                         const RooflinePolicy& policy, const RunMessages& messages) {
    Rooflines replaced;
    if (policy.given || policy.none) return replaced;  // a file the user named is theirs to replace
    for (const std::size_t n_threads : beaten) {
        const Roofline* quick = roofline_of(used, n_threads);
        if (quick == nullptr || !quick->quick || replaced.contains(n_threads)) continue;
        try {
            replaced.emplace(n_threads, measure_for_this_run(n_threads, RooflineOptions{}, messages));
        } catch (const std::exception& error) {
            messages.warning(fmt::format("could not measure the roofline again on {}: {}", thread_count(n_threads),
                                         error.what()));
        }
    }
    return replaced;
}

MemoryLimit memory_limit(std::optional<std::uint64_t> max_memory_bytes) {
    if (max_memory_bytes) return {max_memory_bytes, "--max-memory", true};
    return {available_memory_bytes(), "the memory available now", false};
}

double RunEstimate::point_seconds(std::size_t point) const {
    const std::vector<double>& units = unit_seconds.at(point);
    return std::accumulate(units.begin(), units.end(), 0.0);
}

Environment collect_run_environment(const std::string& command_line, const std::string& consequence,
                                    const RunMessages& messages) {
    Environment env = collect_environment();
    env.command_line = command_line;
    if (!env.optimized_build) {
        messages.warning(fmt::format("this is a {} build: {}; build with -DCMAKE_BUILD_TYPE=Release", env.build_type,
                                     consequence));
    }
    return env;
}

RunContext prepare_run(const Grid& grid, const RunRequest& request, const RunMessages& messages) {
    RunContext context;
    context.env = collect_run_environment(request.command_line, request.unoptimized_consequence, messages);
    context.env.shard = request.shard;
    warn_about_threads(grid, context.env, messages);
    context.memory_limit = memory_limit(request.max_memory_bytes);
    context.points = keep_points_that_fit(grid, request, context.memory_limit, context.env, messages);
    if (request.before_rooflines) {
        request.before_rooflines(context.points.size(), estimate_run(context.points, request, {}, context.env).total_seconds);
    }
    context.rooflines = load_rooflines(request.rooflines, context.points, context.env, messages);
    context.estimate = estimate_run(context.points, request, context.rooflines, context.env);
    return context;
}

}  // namespace kvbench
