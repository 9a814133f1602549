// Where each kind of output goes: the report, the human tables, messages and per-point details.
#pragma once

#include "cli/output_options.hpp"
#include "kvbench/measure/run_context.hpp"
#include "kvbench/report/export_manager.hpp"

#include <cstddef>
#include <ostream>
#include <string>

namespace kvbench {

// The columns a table written to descriptor `fd` may fill: $COLUMNS when it holds a number, else
// the terminal's width, else terminal_columns; never fewer than terminal_columns.
std::size_t table_width_for(int fd);

// stdout holds the report when it is one (OutputPlan::stdout_is_report), else the tables;
// stderr holds everything else. -q silences messages, warnings and the tables, unless the tables
// are the report (no -o, table format): then it leaves them alone. -v adds details.
class OutputStreams {
public:
    // Also sets messages_silenced() for the process, so warnings far from the plan obey -q.
    explicit OutputStreams(const OutputPlan& plan);

    // The report's own stream: stdout.
    std::ostream& report() const;
    // The human tables: stdout, stderr when stdout is the report, nowhere under -q unless they
    // are the report.
    std::ostream& tables() const;
    // The closing notes beside the tables ("verify: ..."): where the tables go, nowhere under -q.
    std::ostream& notes() const;
    // The columns the tables may fill: $COLUMNS when it holds a number, else the width of the
    // terminal the tables go to, else terminal_columns; never fewer than terminal_columns.
    std::size_t table_width() const;
    // Where the tables go after the final write: tables(), but when a file could not be written
    // they are printed even under -q, so that no result is lost.
    std::ostream& tables_after(const ExportResult& exported) const;
    // One line on stderr, unless -q: "wrote 8 rows to a.csv".
    void message(const std::string& line) const;
    // One line on stderr under -v only.
    void detail(const std::string& line) const;
    bool verbose() const { return verbose_; }
    bool quiet() const { return quiet_; }

private:
    bool quiet_;
    bool verbose_;
    bool stdout_is_report_;
    bool tables_are_report_;  // no -o and the table format: what -q keeps
};

// True under -q: warnings and notes are not printed (errors always are).
bool messages_silenced();

// The command line's RunMessages: "kvbench: warning: ...", "kvbench: ..." (both silenced by -q)
// and "kvbench: error: ..." on stderr.
RunMessages cli_messages();

// The closing messages of a run that wrote files: "wrote 8 rows to a.csv, b.json", and the
// command that plots the first CSV.
void announce_written(const OutputStreams& streams, const ExportResult& exported, std::size_t n_rows);

// "1 row", "8 rows".
std::string count_rows(std::size_t n_rows);

// The line that tells how to draw a written csv: the plot script of plots/ that reads it.
std::string plot_hint(const std::string& script, const std::string& csv);

}  // namespace kvbench
