// The run context: what a measuring command settles once, before its first point, and hands to every
// step: the environment, the rooflines, the memory limit, the points that fit and the time estimate.
#pragma once

#include "kvbench/measure/budget.hpp"
#include "kvbench/measure/environment.hpp"
#include "kvbench/measure/roofline.hpp"
#include "kvbench/measure/sweep.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kvbench {

// Where a run's messages go: the command line prints them ("kvbench: warning: ...", warnings and
// notes silenced by -q), a test collects them. A function left empty drops its messages.
struct RunMessages {
    std::function<void(const std::string&)> warn;   // a result may mislead: the cause and the fix
    std::function<void(const std::string&)> note;   // neither a warning nor a result ("measured a roofline")
    std::function<void(const std::string&)> error;  // something failed and the run goes on; never silenced

    void warning(const std::string& message) const;
    void notice(const std::string& message) const;
    void failure(const std::string& message) const;
};

// The roofline of each thread count a run uses, by thread count.
using Rooflines = std::map<std::size_t, Roofline>;

// The roofline of n_threads, or nullptr when the run has none for it.
const Roofline* roofline_of(const Rooflines& rooflines, std::size_t n_threads);

// A roofline file given on the command line, read once, when the options are checked.
struct GivenRoofline {
    std::filesystem::path path;
    Roofline roofline;  // its source says "--roofline file (measured <when>)"
};

// Reads --roofline FILE: a missing, corrupt or foreign file is a usage error before the first
// point, not a failure after the sweep. Throws ConfigError naming --roofline.
GivenRoofline load_given_roofline(const std::string& path);

// Where a run's rooflines come from: one policy for every command (docs/measuring.md#roofline-measurement),
// each thread count taking the first that applies.
struct RooflinePolicy {
    bool none = false;                 // --no-roofline: no roofline at all
    std::optional<GivenRoofline> given;  // --roofline FILE: this one for every thread count
    bool measure = false;              // --measure-roofline: measured fully now, and saved
    // No saved roofline for a thread count: measure a quick one now and save it, so the first run
    // on a machine has one; false: run without it (a dry run, or a command that never measures one).
    bool measure_missing = true;
};

// Measures the roofline on n_threads and saves it to `path`, creating its directory.
// Throws std::runtime_error when it cannot be saved.
Roofline measure_and_save_roofline(std::size_t n_threads, const RooflineOptions& options,
                                   const std::filesystem::path& path);

// The roofline of each thread count of `points`, per `policy`. A saved or given roofline measured
// on another machine or setup is used with a warning; a corrupt saved one is ignored with a warning.
Rooflines load_rooflines(const RooflinePolicy& policy, const std::vector<GridPoint>& points, const Environment& env,
                         const RunMessages& messages);

// A quick roofline (a first run's, measured in about a second) that a run beat, with rows above
// 100 % of it, was measured low: on a busy machine, say. For each thread count of `beaten`
// whose roofline is quick and not a --roofline file, measures the roofline fully and saves it
// where later runs look, replacing the quick one; returns the new rooflines by thread count.
// The run's own rows keep the roofline they were computed with (docs/measuring.md#roofline-measurement).
Rooflines replace_beaten_quick_rooflines(const Rooflines& used, const std::vector<std::size_t>& beaten,
                                         const RooflinePolicy& policy, const RunMessages& messages);

// The memory a run may use, derived once: --max-memory, else what the machine has available now.
struct MemoryLimit {
    std::optional<std::uint64_t> bytes;  // unset: unknown (no /proc/meminfo), so nothing is refused
    std::string name;                    // "--max-memory" or "the memory available now", for messages
    bool user_given = false;             // --max-memory: a cap the user chose, not the machine's
};
MemoryLimit memory_limit(std::optional<std::uint64_t> max_memory_bytes);

// What a point of a run holds at its peak: the total, and its largest part when the command
// knows the parts (docs/memory.md), for the message that skips it.
struct PointMemory {
    std::uint64_t total_bytes = 0;
    std::optional<MemoryTerm> largest;
};

// A point the pre-flight leaves out, and what it would have needed.
struct SkippedPoint {
    GridPoint point;
    PointMemory needed;
};

// What a run will take, computed once over the points that fit: the progress line's time left,
// the dry run's column, the --yes bound and generate's long-run warning all read it.
struct RunEstimate {
    // Per point, the seconds of each unit of progress: one unit per point for a sweep, one per
    // step (cached steps, then uncached) for a generation.
    std::vector<std::vector<double>> unit_seconds;
    double total_seconds = 0;
    std::size_t n_units = 0;

    double point_seconds(std::size_t point) const;
};

// What a command tells the context about itself.
struct RunRequest {
    std::string command_line;  // Environment::command_line: the command as typed
    std::string shard;         // Environment::shard: "K/N" of a sweep with --shard, else empty
    // What a build that is not optimised makes of this command's results ("its timings mean nothing").
    std::string unoptimized_consequence = "its timings mean nothing";
    RooflinePolicy rooflines;
    std::optional<std::uint64_t> max_memory_bytes;  // --max-memory; unset: the memory available now
    // A point's peak memory on this machine (its buffers, plus the run's flush buffer and probe).
    std::function<PointMemory(const GridPoint& point, const Environment& env)> memory_of;
    // The warning that skips a point over the limit; the command names its points its own way.
    std::function<std::string(const GridPoint& point, const PointMemory& needed, const MemoryLimit& limit)>
        skip_warning;
    // The warning for the largest kept point when it needs more than near_limit_fraction of the
    // memory available now (not of a --max-memory the user chose); unset: none.
    std::function<std::string(const GridPoint& point, const PointMemory& needed, const MemoryLimit& limit)>
        near_limit_warning;
    // The one warning for all skipped points when there are more than max_skip_warnings.
    std::function<std::string(const std::vector<SkippedPoint>& skipped, std::size_t n_points, const MemoryLimit& limit)>
        skip_summary;
    // The ConfigError when no point fits: "no {nothing_fits} fits in {limit}: {nothing_fits_hint}".
    std::string nothing_fits = "point of the grid";
    std::string nothing_fits_hint;
    // The seconds of each unit of progress of a point, from its roofline (nullptr: the assumed one).
    std::function<std::vector<double>(const GridPoint& point, const Roofline* roofline, const Environment& env)>
        estimate_of;
    // Called with the number of points that fit and their time at the assumed peaks before any
    // roofline is loaded or measured, so that a grid the command refuses leaves nothing behind
    // (no roofline measured and saved); may throw. Unset: nothing is checked there.
    std::function<void(std::size_t n_points, double assumed_seconds)> before_rooflines;
};

// Up to this many points over the memory limit get a warning each; more get one line for all.
inline constexpr std::size_t max_skip_warnings = 3;
// A point that fits but needs more than this share of the memory available now leaves the rest
// of the machine (other programs, the page cache) little: it is said before it runs.
inline constexpr double near_limit_fraction = 0.8;

// Built once per command by prepare_run, then only read.
struct RunContext {
    Environment env;
    MemoryLimit memory_limit;
    std::vector<GridPoint> points;  // the grid's points that fit in memory_limit, in grid order
    Rooflines rooflines;            // one per thread count of `points`, per the policy
    RunEstimate estimate;           // of `points`
};

// The environment of this run, with the command line, and the warning for a build whose
// timings mean nothing (`consequence` says what it means for this command).
Environment collect_run_environment(const std::string& command_line, const std::string& consequence,
                                    const RunMessages& messages);

// The run context, in this order: the environment (and its warnings: an unoptimised build, more
// threads than cores), the pre-flight (points over the memory limit skipped, one warning each up to
// max_skip_warnings, else one for all), the
// rooflines (loaded, or measured, once), the estimate. Throws ConfigError when no point fits or the
// roofline policy cannot be honoured.
RunContext prepare_run(const Grid& grid, const RunRequest& request, const RunMessages& messages);

}  // namespace kvbench
