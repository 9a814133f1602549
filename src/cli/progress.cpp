// Progress line: carriage return and erase-line, so it rewrites itself in place.
#include "cli/progress.hpp"

#include "kvbench/report/units.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <unistd.h>

namespace kvbench {

Progress::Progress(std::size_t n_points, double total_work)
    : enabled_(isatty(STDERR_FILENO) == 1),
      n_points_(n_points),
      total_work_(total_work),
      start_(std::chrono::steady_clock::now()) {}

void Progress::start_point(std::size_t index, const std::string& label) {
    if (!enabled_) return;
    const double elapsed_ns =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start_).count();
    std::string left = "estimating";
    if (done_work_ > 0) {
        // Scale the estimate by how fast the finished points really went.
        left = "about " + format_duration_ns(elapsed_ns * (total_work_ - done_work_) / done_work_) + " left";
    }
    fmt::print(stderr, "\r\033[K[{}/{}] {}  elapsed {}, {}", index + 1, n_points_, label,
               format_duration_ns(elapsed_ns), left);
    std::fflush(stderr);
}

void Progress::finish_point(double work) { done_work_ += work; }

void Progress::clear() {
    if (!enabled_) return;
    fmt::print(stderr, "\r\033[K");
    std::fflush(stderr);
}

}  // namespace kvbench
