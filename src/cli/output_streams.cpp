// The output streams of a run, and the process-wide -q switch that warnings consult.
#include "cli/output_streams.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include <sys/ioctl.h>
#include <unistd.h>

namespace kvbench {

namespace {

std::atomic<bool> silenced{false};

// Wider than any table kvbench prints: a bogus $COLUMNS cannot make lines absurdly long.
constexpr std::size_t max_table_width = 1000;

// Writes go nowhere: a stream without a buffer only sets its badbit.
std::ostream& null_stream() {
    static std::ostream discard(nullptr);
    discard.clear();
    return discard;
}

}  // namespace

OutputStreams::OutputStreams(const OutputPlan& plan)
    : quiet_(plan.quiet),
      verbose_(plan.verbose),
      stdout_is_report_(plan.stdout_is_report()),
      tables_are_report_(!plan.file && plan.format == OutputFormat::table) {
    silenced = plan.quiet;
}

std::ostream& OutputStreams::report() const { return std::cout; }

std::ostream& OutputStreams::tables() const {
    if (quiet_ && !tables_are_report_) return null_stream();
    return stdout_is_report_ ? std::cerr : std::cout;
}

std::ostream& OutputStreams::notes() const {
    if (quiet_) return null_stream();
    return stdout_is_report_ ? std::cerr : std::cout;
}

std::size_t table_width_for(int fd) {
    // An explicit COLUMNS wins, as for ls and man; a terminal says its own width.
    if (const char* columns = std::getenv("COLUMNS"); columns != nullptr && *columns != '\0') {
        std::size_t value = 0;
        const char* end = columns + std::strlen(columns);
        const auto [stop, error] = std::from_chars(columns, end, value);
        if (error == std::errc() && stop == end) return std::clamp(value, terminal_columns, max_table_width);
    }
    winsize size{};
    if (::isatty(fd) == 1 && ::ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) {
        return std::clamp(static_cast<std::size_t>(size.ws_col), terminal_columns, max_table_width);
    }
    return terminal_columns;
}

std::size_t OutputStreams::table_width() const {
    return table_width_for(stdout_is_report_ ? STDERR_FILENO : STDOUT_FILENO);
}

std::ostream& OutputStreams::tables_after(const ExportResult& exported) const {
    if (exported.failed.empty()) return tables();
    return stdout_is_report_ ? std::cerr : std::cout;
}

void OutputStreams::message(const std::string& line) const {
    if (!quiet_) fmt::print(stderr, "{}\n", line);
}

void OutputStreams::detail(const std::string& line) const {
    if (verbose_) fmt::print(stderr, "{}\n", line);
}

bool messages_silenced() { return silenced; }

RunMessages cli_messages() {
    RunMessages messages;
    messages.warn = [](const std::string& message) {
        if (!messages_silenced()) fmt::print(stderr, "kvbench: warning: {}\n", message);
    };
    messages.note = [](const std::string& message) {
        if (!messages_silenced()) fmt::print(stderr, "kvbench: {}\n", message);
    };
    messages.error = [](const std::string& message) { fmt::print(stderr, "kvbench: error: {}\n", message); };
    return messages;
}

void announce_written(const OutputStreams& streams, const ExportResult& exported, std::size_t n_rows) {
    if (!exported.written.empty()) {
        streams.message(fmt::format("wrote {} to {}", count_rows(n_rows), fmt::join(exported.written_paths(), ", ")));
    }
    // Nothing to plot in a file of no rows (every point failed).
    if (const std::string csv = exported.csv_to_plot(); !csv.empty() && n_rows > 0) {
        streams.message(plot_hint("plots/kvbench_plot.py", csv));
    }
}

std::string count_rows(std::size_t n_rows) { return fmt::format("{} row{}", n_rows, n_rows == 1 ? "" : "s"); }

std::string plot_hint(const std::string& script, const std::string& csv) {
    return fmt::format("plot it: /usr/bin/python3 {} {} (from the kvbench source tree)", script, csv);
}

}  // namespace kvbench
