// The output streams of a run, and the process-wide -q switch that warnings consult.
#include "cli/output_streams.hpp"

#include <fmt/format.h>

#include <atomic>
#include <iostream>

namespace kvbench {

namespace {

std::atomic<bool> silenced{false};

// Writes go nowhere: a stream without a buffer only sets its badbit.
std::ostream& null_stream() {
    static std::ostream discard(nullptr);
    discard.clear();
    return discard;
}

}  // namespace

OutputStreams::OutputStreams(const OutputPlan& plan)
    : quiet_(plan.quiet), verbose_(plan.verbose), stdout_is_report_(plan.stdout_is_report()) {
    silenced = plan.quiet;
}

std::ostream& OutputStreams::report() const { return std::cout; }

std::ostream& OutputStreams::tables() const {
    if (quiet_) return null_stream();
    return stdout_is_report_ ? std::cerr : std::cout;
}

void OutputStreams::message(const std::string& line) const {
    if (!quiet_) fmt::print(stderr, "{}\n", line);
}

void OutputStreams::detail(const std::string& line) const {
    if (verbose_) fmt::print(stderr, "{}\n", line);
}

bool messages_silenced() { return silenced; }

std::string count_rows(std::size_t n_rows) { return fmt::format("{} row{}", n_rows, n_rows == 1 ? "" : "s"); }

}  // namespace kvbench
