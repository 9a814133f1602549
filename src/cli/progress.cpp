// Progress events: the bar rewrites one line in place (carriage return, erase line); jsonl
// writes one compact JSON object per line and flushes it, so a reader sees each event at once.
#include "cli/progress.hpp"

#include "kvbench/report/units.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <stdexcept>
#include <unistd.h>

namespace kvbench {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void emit(std::FILE* out, const nlohmann::ordered_json& event) {
    fmt::print(out, "{}\n", event.dump());
    std::fflush(out);
}

nlohmann::ordered_json median_or_null(const std::optional<double>& median_ns) {
    return median_ns ? nlohmann::ordered_json(*median_ns / 1000) : nlohmann::ordered_json(nullptr);
}

}  // namespace

ProgressMode parse_progress_mode(const std::string& text) {
    if (text == "auto") return ProgressMode::auto_detect;
    if (text == "bar") return ProgressMode::bar;
    if (text == "jsonl") return ProgressMode::jsonl;
    if (text == "none") return ProgressMode::none;
    throw std::invalid_argument("--progress must be auto, bar, jsonl or none");
}

Progress::Progress(ProgressMode mode, std::size_t n_points, double total_work, std::FILE* out)
    : mode_(mode), out_(out), n_points_(n_points), total_work_(total_work), start_(std::chrono::steady_clock::now()) {
    if (mode_ == ProgressMode::auto_detect) {
        mode_ = isatty(fileno(out_)) == 1 ? ProgressMode::bar : ProgressMode::none;
    }
}

void Progress::start_point(std::size_t index, const std::string& label) {
    ++n_started_;
    if (mode_ == ProgressMode::jsonl) {
        emit(out_, {{"event", "point_started"}, {"index", index}, {"n_points", n_points_}, {"label", label}});
        return;
    }
    if (mode_ != ProgressMode::bar) return;
    const double elapsed_ns = seconds_since(start_) * 1e9;
    std::string left = "estimating";
    if (done_work_ > 0) {
        // Scale the estimate by how fast the finished points really went.
        left = "about " + format_duration_ns(elapsed_ns * (total_work_ - done_work_) / done_work_) + " left";
    }
    fmt::print(out_, "\r\033[K[{}/{}] {}  elapsed {}, {}", n_started_, n_points_, label,
               format_duration_ns(elapsed_ns), left);
    std::fflush(out_);
}

void Progress::finish_point(std::size_t index, const std::string& label, std::optional<double> cached_median_ns,
                            std::optional<double> uncached_median_ns, double work) {
    done_work_ += work;
    if (mode_ != ProgressMode::jsonl) return;
    emit(out_, {{"event", "point_finished"},
                {"index", index},
                {"label", label},
                {"median_us", {{"cached", median_or_null(cached_median_ns)},
                               {"uncached", median_or_null(uncached_median_ns)}}}});
}

void Progress::fail_point(std::size_t index, const std::string& label, const std::string& reason, double work) {
    done_work_ += work;
    if (mode_ != ProgressMode::jsonl) return;
    emit(out_, {{"event", "point_failed"}, {"index", index}, {"label", label}, {"reason", reason}});
}

void Progress::finish_sweep(std::size_t n_finished, std::size_t n_failed, bool interrupted) {
    clear();
    if (mode_ != ProgressMode::jsonl) return;
    emit(out_, {{"event", "sweep_finished"},
                {"n_points", n_points_},
                {"n_finished", n_finished},
                {"n_failed", n_failed},
                {"interrupted", interrupted},
                {"elapsed_s", seconds_since(start_)}});
}

void Progress::clear() {
    if (mode_ != ProgressMode::bar) return;
    fmt::print(out_, "\r\033[K");
    std::fflush(out_);
}

}  // namespace kvbench
