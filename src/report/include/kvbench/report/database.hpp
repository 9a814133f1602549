// The results database (docs/database.md): runs, machines, builds, points and samples in one SQLite file, added point by point, read back run by run.
#pragma once

#include "kvbench/measure/environment.hpp"
#include "kvbench/report/columns.hpp"
#include "kvbench/report/database_schema.hpp"
#include "kvbench/report/report.hpp"
#include "kvbench/report/schema.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace kvbench {

// One report row as the database stores it: its points columns (point_columns()) by name, and
// every repetition's time.
struct StoredRow {
    std::vector<std::pair<std::string, CellValue>> cells;
    std::vector<std::int64_t> samples_ns;

    // The cell of `column`; std::monostate when the row has none.
    CellValue cell(const std::string& column) const;
};

// The rows of a run as it measured them: each row column, then the extra columns (generate's
// step, phase, prompt, new_tokens). Throws std::invalid_argument when an extra column is not a
// points column or has not one value per row.
std::vector<StoredRow> stored_rows(const std::vector<ResultRow>& rows, const std::vector<ExtraColumn>& extra);
// A row read back from a report, its cells typed by point_columns(); columns that are not points
// columns (provenance, a foreign extra) are left out. Throws std::runtime_error on a malformed cell.
StoredRow stored_row(const ReportCellRow& row);

// How a run ended: `running` until it ends, so a run killed by SIGKILL or a crash keeps it.
enum class RunStatus { running, finished, stopped };
const char* run_status_name(RunStatus status);

// A run as the database records it, beside its points.
struct RunRecord {
    std::string key;                  // unique across databases: adding the same run twice is refused
    std::string command = "sweep";    // the subcommand that measured it: sweep or generate
    RunStatus status = RunStatus::running;
    std::string finished_at;          // UTC, ISO 8601; empty while running
    std::string source;               // empty when measured into the database; else the file kvbench merge read it from
    Environment env;                  // its machine, build, start time, command line and shard
};

// A new run's key: 128 random bits in hex.
std::string new_run_key();

// A run read back, with what the database added.
struct StoredRun {
    std::int64_t id = 0;           // run_id: `run:<id>` in compare's selectors
    std::int64_t machine_id = 0;
    std::int64_t build_id = 0;
    std::size_t n_rows = 0;
    RunRecord record;
};

// "amd-avx512-2c-llc32mib": the class of the machine that ran `env`, as scripts/bench-gate.sh
// names its references (the maker as its model name says it, "intel", "amd" or "other"; kernel
// ISA, cores, last-level cache; "llc-unknown", "?c" when not known).
std::string machine_class(const Environment& env);

// The environment columns (docs/csv.md#provenance-columns, and a JSON report's environment block) of
// a run read back, by name: the cells kvbench writes for `env`.
std::map<std::string, std::string> environment_cells(const Environment& env);
// The inverse, as far as `cells` tell: a CSV row has no n_cores, llc_bytes or cache_sizes, which
// stay 0 or empty, and optimized_build follows build_type then.
Environment environment_of_cells(const std::map<std::string, std::string>& cells);

// An open results database. Every write is a transaction: a process killed at any moment leaves
// the file consistent, holding every run and row whose write finished.
class ResultsDatabase {
public:
    // Opens `path` to add runs, creating it when missing or empty, and migrating an older schema
    // (docs/database.md#versions). Throws std::runtime_error when the file is not a kvbench
    // database, is of a newer schema, or cannot be written.
    static ResultsDatabase open_for_writing(const std::filesystem::path& path);
    // Opens an existing database to read. Throws std::runtime_error when it is missing, is not a
    // kvbench database, or is of a newer schema.
    static ResultsDatabase open_for_reading(const std::filesystem::path& path);

    ResultsDatabase(ResultsDatabase&&) noexcept;
    ResultsDatabase& operator=(ResultsDatabase&&) noexcept;
    ~ResultsDatabase();

    // Adds `run` with its machine and build, and `rows` (a run copied whole, by kvbench merge),
    // in one transaction. Throws std::runtime_error when its key is taken.
    void add_run(const RunRecord& run, std::span<const StoredRow> rows = {});
    // Adds `rows` to the run of `key` as rows first_index, first_index + 1, ..., with their
    // samples, in one transaction: all of them or, after a failure or a kill, none.
    void add_rows(const std::string& key, std::size_t first_index, std::span<const StoredRow> rows);
    // Records the end of the run of `key`: its status and the time.
    void end_run(const std::string& key, RunStatus status);
    bool has_run(const std::string& key) const;

    // Every run, in the order they were added.
    std::vector<StoredRun> runs() const;
    // The rows of run `run_id`, in their order, as a report read back: cells by current column
    // name (the points columns), samples, and the run's provenance as `environment`.
    ReportCells run_cells(std::int64_t run_id) const;

    const std::string& path() const;

private:
    class Connection;
    explicit ResultsDatabase(std::unique_ptr<Connection> connection);
    std::unique_ptr<Connection> connection_;
};

// Whether `path` can take runs: a missing or empty file (it will be created), or a kvbench
// database of this schema or an older one. Throws std::runtime_error saying what it is otherwise;
// creates nothing.
void check_database_file(const std::filesystem::path& path);

// Whether `path` starts as a SQLite file does ("SQLite format 3").
bool is_sqlite_file(const std::filesystem::path& path);

// One run as a script of SQL statements: the schema (CREATE ... IF NOT EXISTS), then the run and
// its rows in one transaction. `sqlite3 results.sqlite < script.sql` adds the run to a database
// of this schema version, as `--db results.sqlite` would have (docs/database.md#sql-scripts).
void write_sql_script(std::ostream& out, std::span<const std::pair<RunRecord, std::vector<StoredRow>>> runs);

}  // namespace kvbench
