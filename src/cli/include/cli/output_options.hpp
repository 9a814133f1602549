// Where a command's results go: -o, -f, --export and -q on any subcommand, -v on those that
// measure points, and the checks that turn them into an OutputPlan before anything is measured.
#pragma once

#include "kvbench/report/export_manager.hpp"
#include "kvbench/report/report.hpp"

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace kvbench {

// What the user typed, unparsed, so that the errors are kvbench's own.
struct OutputCliOptions {
    std::optional<std::string> format;  // -f; unset: from -o's extension, else table
    std::optional<std::string> output;  // -o FILE, or - for stdout; unset: stdout
    std::vector<std::string> exports;   // --export FORMAT:PATH, repeatable
    bool quiet = false;                 // -q: only the report and errors
    bool verbose = false;               // -v: one line per finished point on stderr
    std::optional<std::string> db;      // --db FILE: the results database; unset: $KVBENCH_DB
    bool no_db = false;                 // --no-db: no database, whatever $KVBENCH_DB says
};

// The environment variable that names the results database every measuring run adds itself to
// when --db is not given (docs/database.md#the-default-database).
inline constexpr const char* database_variable = "KVBENCH_DB";

// $KVBENCH_DB, when it is set and not empty.
std::optional<std::string> default_database();

// A failure to read the database at path, as the line `--db PATH: what`; a `what` that starts
// with the path (the database's own messages do) does not get it twice.
std::string database_read_error(const std::string& path, const std::string& what);

struct OutputPlan {
    OutputFormat format = OutputFormat::table;  // of -o FILE, or of stdout without one
    std::optional<std::string> file;            // -o FILE; unset: the report goes to stdout
    std::vector<OutputTarget> exports;          // --export, in the order given, then the database (--db, $KVBENCH_DB)
    bool quiet = false;
    bool verbose = false;

    // Every file the run writes: -o first, then the exports.
    std::vector<OutputTarget> files() const;
    // stdout carries the report itself (-o -, or --format other than table without -o), so the
    // human tables and messages go to stderr and a pipe sees nothing but the report.
    bool stdout_is_report() const { return !file && format != OutputFormat::table; }
};

// The export manager's plan for these outputs: the files, and the report's format on stdout
// when stdout carries it. `run_name` and `tables_hold` word its messages ("the sweep goes on",
// "the results are in the tables below").
ExportPlan to_export_plan(const OutputPlan& out, const TableOptions& table, const std::string& run_name,
                          const std::string& tables_hold);

// The formats a command can write, the first being where its help starts.
// Requires: not empty.
using OutputFormats = std::vector<OutputFormat>;
const OutputFormats& all_output_formats();  // table, csv, json, jsonl, md, sql, sqlite

// "csv", "json", ...: the spelling of --format and of --export's FORMAT.
const char* format_name(OutputFormat format);
// A format by name, in any case ("CSV", "Json"); std::nullopt for any other text.
std::optional<OutputFormat> parse_format_name(const std::string& name);
// The format a file name's extension implies: .csv .json .jsonl .md .sql, .txt for table, and
// .sqlite, .sqlite3 or .db for a results database; std::nullopt for any other extension or none.
std::optional<OutputFormat> format_of_extension(const std::string& path);

// Registers -o/--output, -f/--format, --export and -q/--quiet on `command`.
// `formats`: what the command can write (the help lists them). `table_to_file`: whether the
// table format may go to a file (-o x.txt) rather than only to the terminal.
void add_output_options(CLI::App* command, OutputCliOptions& options, const OutputFormats& formats,
                        bool table_to_file = true);
// Registers -v/--verbose, which excludes -q, on a command that measures points (sweep,
// generate): the others have no point to report, and an option that changes nothing misleads.
// Requires: add_output_options(command, ...) before.
void add_verbose_option(CLI::App* command, OutputCliOptions& options);
// Registers --db and --no-db on a measuring command: the results database its run is added to,
// $KVBENCH_DB when --db is not given (docs/database.md#the-default-database).
void add_database_options(CLI::App* command, OutputCliOptions& options);

// Checks every rule and every target, in this order: the format names, -o's extension against
// --format, each --export, the database (--db, else $KVBENCH_DB unless --no-db), then each file
// (its directory exists, a file can be created there; an existing database is kvbench's, of a
// schema this build writes). Throws ConfigError naming the flag and the rule; creates no file.
OutputPlan to_output_plan(const OutputCliOptions& options, const OutputFormats& formats, bool table_to_file = true);

// Refuses a file target that would fail only after the measurement, or that must not be
// replaced (a device, a directory). `flag` names it in the message ("-o", "--export csv:"), and
// `example` is the file name the message suggests for a directory.
// Throws ConfigError; leaves no file behind.
void check_output_file(const std::string& path, const std::string& flag, const std::string& example = "sweep.csv");

}  // namespace kvbench
