// The one-line progress display of a sweep, on stderr, only when stderr is a terminal.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace kvbench {

class Progress {
public:
    // total_work: the sum of the per-point work estimates (any unit) over the sweep.
    Progress(std::size_t n_points, double total_work);
    // Shows "[i/n] <point>  elapsed 12 s, about 40 s left" before point i (0-based) starts.
    void start_point(std::size_t index, const std::string& label);
    // Records that a point of `work` units finished, for the estimate of what is left.
    void finish_point(double work);
    // Clears the line, so what follows starts on a clean line.
    void clear();

private:
    bool enabled_;
    std::size_t n_points_;
    double total_work_;
    double done_work_ = 0;
    std::chrono::steady_clock::time_point start_;
};

}  // namespace kvbench
