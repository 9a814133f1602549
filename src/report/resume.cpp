// --resume: reading a sweep's report back and matching its rows to the grid, by build and settings.
#include "kvbench/report/resume.hpp"

#include "kvbench/engine/config.hpp"
#include "kvbench/report/units.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace kvbench {

namespace {

std::vector<DecodePath> planned_paths(const GridPoint& point, const RunOptions& options) {
    std::vector<DecodePath> paths;
    if (options.run_cached) paths.push_back(DecodePath::cached);
    if (times_uncached(point, options)) paths.push_back(DecodePath::uncached);
    return paths;
}

// Why a saved row of `point` does not match what this run would measure, one phrase per difference.
std::vector<std::string> how_measured_otherwise(const ResultRow& row, const GridPoint& point, const RunOptions& options) {
    std::vector<std::string> reasons;
    const std::vector<DecodePath> paths = planned_paths(point, options);
    if (std::find(paths.begin(), paths.end(), row.path) == paths.end()) {
        reasons.push_back(fmt::format("the {} path, which this run leaves out", path_name(row.path)));
        return reasons;
    }
    const std::string cache_state = options.cold_cache ? "cold" : "warm";
    if (row.cache_state != cache_state) {
        reasons.push_back(fmt::format("a {} cache, this run {}", row.cache_state, cache_state));
    }
    if (row.reps_policy != describe_reps_policy(options)) {
        reasons.push_back(fmt::format("{}, this run {}", row.reps_policy, describe_reps_policy(options)));
    }
    if (options.verify && !row.verify_rel_error) reasons.emplace_back("without --verify");
    if (reasons.empty()) reasons.emplace_back("not every path this run measures");  // the point's other path is missing
    return reasons;
}

}  // namespace

bool row_matches(const ResultRow& row, const GridPoint& point, DecodePath path, const RunOptions& options) {
    const ModelConfig config = path == DecodePath::uncached ? uncached_row_config(point.config) : point.config;
    return row.path == path && row.config == config && row.n_threads == point.n_threads &&
           row.cache_state == (options.cold_cache ? "cold" : "warm") &&
           row.reps_policy == describe_reps_policy(options) && (!options.verify || row.verify_rel_error);
}

GridRows match_saved_rows(const std::vector<SavedRow>& saved, const std::vector<GridPoint>& points,
                          const RunOptions& options, const Environment& env, const RunMessages& messages,
                          const std::string& file) {
    GridRows rows;
    rows.by_point.resize(points.size());
    std::size_t n_other_build = 0;
    std::string other_build;
    std::vector<bool> used(saved.size(), false);
    for (std::size_t s = 0; s < saved.size(); ++s) {
        if (saved[s].git_commit != env.git_commit || saved[s].tool_version != env.tool_version) {
            used[s] = true;  // never reused, never kept
            ++n_other_build;
            other_build = fmt::format("kvbench {} ({})", saved[s].tool_version, saved[s].git_commit);
        }
    }
    std::size_t n_resumed = 0;
    for (std::size_t i = 0; i < points.size(); ++i) {
        const std::vector<DecodePath> paths = planned_paths(points[i], options);
        std::vector<std::size_t> found;
        for (const DecodePath path : paths) {
            for (std::size_t s = 0; s < saved.size(); ++s) {
                if (!used[s] && row_matches(saved[s].row, points[i], path, options)) {
                    found.push_back(s);
                    break;
                }
            }
        }
        if (found.size() != paths.size()) continue;
        for (const std::size_t s : found) {
            used[s] = true;
            rows.by_point[i].push_back(saved[s].row);
        }
        ++n_resumed;
    }
    // A saved row of one of these points that matched nothing was measured another way: resuming
    // would replace it with a new measurement, so the user decides.
    std::vector<std::string> otherwise;
    std::size_t n_otherwise = 0;
    for (std::size_t s = 0; s < saved.size(); ++s) {
        if (used[s]) continue;
        const ResultRow& row = saved[s].row;
        const auto point = std::find_if(points.begin(), points.end(), [&](const GridPoint& p) {
            const ModelConfig config = row.path == DecodePath::uncached ? uncached_row_config(p.config) : p.config;
            return row.config == config && row.n_threads == p.n_threads;
        });
        if (point == points.end()) {
            rows.other_rows.push_back(row);
            continue;
        }
        ++n_otherwise;
        for (const std::string& reason : how_measured_otherwise(row, *point, options)) {
            if (std::find(otherwise.begin(), otherwise.end(), reason) == otherwise.end()) otherwise.push_back(reason);
        }
    }
    if (n_otherwise > 0) {
        throw ConfigError(fmt::format("--resume: {} of {} measured these points otherwise ({}): resuming would "
                                      "replace them; give the options they were measured with, run without --resume "
                                      "to measure every point again, or write to another -o",
                                      format_count(n_otherwise, "row"), file, fmt::join(otherwise, "; ")));
    }
    if (n_other_build > 0) {
        messages.warning(fmt::format("--resume: {} of {} were measured by {}, not by this build (kvbench {} ({})): "
                                     "they are not reused, and the file is rewritten without them",
                                     format_count(n_other_build, "row"), file, other_build, env.tool_version,
                                     env.git_commit));
    }
    messages.notice(fmt::format("--resume: {} of {} already in {} (same build and settings){}", n_resumed,
                                format_count(points.size(), "point"), file,
                                n_resumed == points.size()
                                    ? "; nothing left to measure"
                                    : fmt::format("; measuring the other {}", points.size() - n_resumed)));
    return rows;
}

GridRows resume_rows(const std::string& file, OutputFormat format, const std::vector<GridPoint>& points,
                     const RunOptions& options, const Environment& env, const RunMessages& messages) {
    // A symlink loop is read, and refused there by name: exists() would throw filesystem_error.
    if (std::error_code error; !std::filesystem::exists(file, error) && !error) {
        messages.notice(fmt::format("--resume: {} does not exist yet; measuring every point", file));
        GridRows rows;
        rows.by_point.resize(points.size());
        return rows;
    }
    std::vector<SavedRow> saved;
    try {
        saved = read_report_file(file, format);
    } catch (const std::exception& error) {
        throw ConfigError(fmt::format("--resume: {} (it was left as it is)", error.what()));
    }
    return match_saved_rows(saved, points, options, env, messages, file);
}

}  // namespace kvbench
