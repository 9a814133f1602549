// A sweep's progress on stderr: a self-rewriting line for people, JSON lines for programs, or nothing.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>

namespace kvbench {

// --progress: `auto` is `bar` when stderr is a terminal and `none` otherwise.
enum class ProgressMode { auto_detect, bar, jsonl, none };

// Parses "auto", "bar", "jsonl" or "none". Throws std::invalid_argument otherwise.
ProgressMode parse_progress_mode(const std::string& text);

class Progress {
public:
    // total_work: the sum of the per-point work estimates (any unit) over the sweep.
    Progress(ProgressMode mode, std::size_t n_points, double total_work, std::FILE* out = stderr);

    // index: the point's place in the grid. bar: "[k/n] <point>  elapsed 12 s, about 40 s left",
    // k counting the points started; jsonl: {"event":"point_started","index":...}.
    void start_point(std::size_t index, const std::string& label);
    // A point measured in full; its medians (ns) per path, absent for a path not run.
    // `work` (the point's estimate) feeds the bar's time-left figure.
    void finish_point(std::size_t index, const std::string& label, std::optional<double> cached_median_ns,
                      std::optional<double> uncached_median_ns, double work);
    // A point that failed; the sweep goes on.
    void fail_point(std::size_t index, const std::string& label, const std::string& reason, double work);
    void finish_sweep(std::size_t n_finished, std::size_t n_failed, bool interrupted);
    // Clears the bar's line, so a warning that follows starts on a clean line.
    void clear();

private:
    ProgressMode mode_;  // never auto_detect once constructed
    std::FILE* out_;
    std::size_t n_points_;
    std::size_t n_started_ = 0;
    double total_work_;
    double done_work_ = 0;
    std::chrono::steady_clock::time_point start_;
};

}  // namespace kvbench
