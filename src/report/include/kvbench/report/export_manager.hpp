// The export manager: every file and the stdout report of a run, saved after every point and written whole at the end.
#pragma once

#include "kvbench/measure/environment.hpp"
#include "kvbench/measure/run_context.hpp"
#include "kvbench/report/columns.hpp"
#include "kvbench/report/database.hpp"
#include "kvbench/report/report.hpp"
#include "kvbench/report/summary_tables.hpp"

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace kvbench {

// One file a run writes: -o FILE, one --export FORMAT:PATH, or the --db database.
struct OutputTarget {
    OutputFormat format = OutputFormat::csv;
    std::string path;
};

// Rows as a report holds them: the result rows and the columns a command adds to each (generate's
// step and phase; each column holds one value per row).
struct ReportRows {
    std::vector<ResultRow> rows;
    std::vector<ExtraColumn> extra;
};

// Writes `rows` in `format`, one writer per format; the table and Markdown writers leave the
// extra columns out, and take `table` (--time-unit).
void write_rows(std::ostream& out, OutputFormat format, const ReportRows& rows, const Environment& env,
                const TableOptions& table = {});

// Where a run's report goes.
struct ExportPlan {
    std::vector<OutputTarget> files;            // -o FILE first, then each --export
    std::optional<OutputFormat> stdout_format;  // the report's format when stdout carries it (-o -, -f without -o)
    TableOptions table;                         // how a Markdown report on stdout renders (--time-unit)
    std::string run_name = "run";               // "the sweep goes on": what goes on after a failed save
    std::string command = "sweep";              // the subcommand, as a results database records the run
    std::string tables_hold = "the results";    // what the terminal's tables keep when a file fails at the end
};

// What the final write left: the files that hold every row, and those that could not be written.
struct ExportResult {
    std::vector<OutputTarget> written;
    std::vector<std::string> failed;
    bool stdout_report = false;  // the report went to stdout

    std::vector<std::string> written_paths() const;
    // Where the finished rows are, for a closing line: "a.csv and b.json", "the report on
    // standard output" or "the report above" (the terminal's tables).
    std::string holder() const;
    // The first CSV written: the one the plotting script is pointed at. Empty when none.
    std::string csv_to_plot() const;
};

// Output errors are never silent: a full disk behind stdout (`> /dev/full`) is a failure. Flushes
// `out` and C's stdout (where the tables and fmt::print go as well); throws std::runtime_error
// when either failed.
void check_report_stream(std::ostream& out);

// hyperfine's ExportManager for kvbench: one writer per format behind one object, used by every
// command that measures. Every file (-o, --export and --db) holds every finished point as soon as
// it finishes, so a stop of any kind (a signal, a second Ctrl-C, an out-of-memory kill) loses none
// (docs/csv.md#jsonl). A results database (sqlite) gets the run once and each point's rows in one
// transaction; it is never rewritten, and keeps the runs it held (docs/database.md).
class ExportManager {
public:
    // `report_out` is where a report on stdout goes (std::cout; a test's stream).
    ExportManager(ExportPlan plan, const Environment& env, RunMessages messages, std::ostream& report_out);

    // Before the first point: every file written whole with the rows the run starts from (the
    // rows --resume kept, or none), so a resumed file loses the rows of another build and a
    // JSON Lines file starts with the kept rows before the first point's are appended. A
    // database gets the run, as running, without those rows: they are another run's.
    void start(const ReportRows& rows);
    // After a point: its rows appended to each JSON Lines file (one fsynced write) and to each
    // database (one transaction) and, with a JSON Lines report on stdout, written and flushed
    // there; every other file rewritten whole (temporary, fsync, rename) with `all_rows`. A file
    // that cannot be written is said once, with a warning, and tried again at the end.
    void save_point(const ReportRows& point_rows, const ReportRows& all_rows);
    // The end: every file written whole one last time, except a JSON Lines file that already holds
    // every row (rewriting it would swap the file under a reader following it), and a database,
    // which gets the rows it missed and the run's end (`status`: finished, or stopped by a signal);
    // a failure is an error line saying the tables hold the results. Then the report on stdout,
    // unless it is JSON Lines, which went out point by point.
    ExportResult finish(const ReportRows& all_rows, RunStatus status = RunStatus::finished);
    // check_report_stream on the report's stream.
    void check_report_stream() const;

private:
    // A results database the run goes to: opened, and the run added, at the first save that can.
    struct DatabaseTarget {
        std::string path;
        std::optional<ResultsDatabase> database;
        std::vector<StoredRow> pending;  // measured rows not yet stored (the database was busy or failing)
        std::size_t n_stored = 0;        // rows of this run the database holds
    };

    void write_whole(const OutputTarget& target, const ReportRows& rows, RunStatus status = RunStatus::running);
    void write_sql(std::ostream& out, const ReportRows& rows, RunStatus status) const;
    // Opens the database and adds the run when not done yet, then stores the pending rows.
    void store_pending(DatabaseTarget& target);
    bool is_unwritable(const std::string& path) const;
    void note_unwritable(const std::string& path, const std::exception& error);

    ExportPlan plan_;
    const Environment& env_;
    RunMessages messages_;
    std::ostream& report_out_;
    std::string run_key_;                  // this run's key in every database and SQL script it writes
    std::vector<DatabaseTarget> databases_;
    bool started_ = false;                 // start() ran: JSON Lines files hold the rows appended since
    std::vector<std::string> unwritable_;  // files a save failed on during the run
};

}  // namespace kvbench
