// The results database: opening (create, check, migrate), adding runs and rows in transactions, reading runs back as report cells.
#include "kvbench/report/database.hpp"

#include "kvbench/files/input_file.hpp"
#include "sql_script.hpp"
#include "sqlite_connection.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string_view>

namespace kvbench {

class ResultsDatabase::Connection : public SqliteConnection {
public:
    using SqliteConnection::SqliteConnection;
};

namespace {

std::uint64_t parse_count(const std::string& text) {
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    return error == std::errc() && end == text.data() + text.size() ? value : 0;
}

// A file kvbench may read: its own application id, a version it knows. `empty_ok`: a file with
// no table at all (just created) passes too.
void check_identity(const SqliteConnection& db, bool empty_ok) {
    const std::int64_t application_id = db.query_integer("PRAGMA application_id;");
    const std::int64_t version = db.query_integer("PRAGMA user_version;");
    const std::int64_t n_objects = db.query_integer("SELECT count(*) FROM sqlite_master;");
    if (application_id == 0 && n_objects == 0 && empty_ok) return;
    if (application_id != database_application_id) {
        throw std::runtime_error(fmt::format("{} is a SQLite database but not a kvbench results database (it holds "
                                             "other tables; name a new file)",
                                             db.path()));
    }
    // No kvbench writes a version below 1 into a file that holds its tables: from 0 the schema's
    // CREATE ... IF NOT EXISTS would keep tables of an unknown layout and stamp them current, and
    // a migration from below 0 would fail halfway ("duplicate column name").
    if (version < 0 || (version == 0 && n_objects > 0)) {
        throw std::runtime_error(fmt::format("{} has database schema {}, which no kvbench writes: the file was edited "
                                             "(docs/database.md#versions; name a new file)",
                                             db.path(), version));
    }
    if (version > database_schema_version) {
        throw std::runtime_error(fmt::format("{} has database schema {}, newer than this kvbench's {}: use a newer "
                                             "kvbench (docs/database.md#versions)",
                                             db.path(), version, database_schema_version));
    }
}

// A new file gets the schema; an older one the migrations, each in the transaction that checked
// its version, so two processes opening one old file migrate it once.
void prepare_schema(SqliteConnection& db) {
    db.exec("BEGIN IMMEDIATE;");
    try {
        check_identity(db, true);
        const std::int64_t version = db.query_integer("PRAGMA user_version;");
        if (version == 0) {
            db.exec(schema_sql());
        } else {
            for (const Migration& migration : migrations()) {
                if (migration.from_version >= version) db.exec(migration.sql);
            }
            db.exec(fmt::format("PRAGMA user_version = {};", database_schema_version));
        }
        db.exec("COMMIT;");
    } catch (...) {
        try {
            db.exec("ROLLBACK;");
        } catch (const std::exception&) {
            // the transaction was already rolled back by the failing statement
        }
        throw;
    }
}

// A cell as a report's text. SQLite keeps what it is given in any column: a TEXT 'abc' in seq is
// returned as its text, which the reader refuses, where integer() would read it as 0.
std::string cell_text(ColumnType type, const SqliteRow& row, int column) {
    if (type != ColumnType::text && !row.is_number(column)) return row.text(column);
    switch (type) {
    case ColumnType::text: return row.text(column);
    case ColumnType::integer:
        return row.is_integer(column) ? fmt::format("{}", row.integer(column)) : fmt::format("{}", row.real(column));
    case ColumnType::boolean: return row.integer(column) != 0 ? "true" : "false";
    case ColumnType::real:
    case ColumnType::latency_us:
        // An integer-valued REAL comes back as INTEGER from SQLite when it was stored so.
        return row.is_integer(column) ? fmt::format("{}", row.integer(column)) : fmt::format("{}", row.real(column));
    }
    return row.text(column);
}

RunStatus parse_status(const std::string& text) {
    if (text == "finished") return RunStatus::finished;
    if (text == "stopped") return RunStatus::stopped;
    return RunStatus::running;
}

}  // namespace

CellValue StoredRow::cell(const std::string& column) const {
    for (const auto& [name, value] : cells) {
        if (name == column) return value;
    }
    return std::monostate{};
}

std::vector<StoredRow> stored_rows(const std::vector<ResultRow>& rows, const std::vector<ExtraColumn>& extra) {
    for (const ExtraColumn& column : extra) {
        if (!point_column_type(column.name)) {
            throw std::invalid_argument("stored_rows: " + column.name + " is not a column of the points table");
        }
        if (column.values.size() != rows.size()) {
            throw std::invalid_argument("stored_rows: extra column " + column.name + ": one value per row");
        }
    }
    std::vector<StoredRow> stored;
    stored.reserve(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        StoredRow& row = stored.emplace_back();
        for (const RowColumn& column : row_columns()) row.cells.emplace_back(column.name, column.value(rows[i]));
        for (const ExtraColumn& column : extra) row.cells.emplace_back(column.name, column.values[i]);
        row.samples_ns = rows[i].samples_ns;
    }
    return stored;
}

StoredRow stored_row(const ReportCellRow& row) {
    StoredRow stored;
    for (const StoredColumn& column : point_columns()) {
        if (const std::optional<std::string> text = row.cell(column.name)) {
            stored.cells.emplace_back(column.name, cell_of_type(column.type, column.name, *text));
        }
    }
    for (const double sample : row.samples_ns) stored.samples_ns.push_back(std::llround(sample));
    return stored;
}

const char* run_status_name(RunStatus status) {
    switch (status) {
    case RunStatus::running: return "running";
    case RunStatus::finished: return "finished";
    case RunStatus::stopped: return "stopped";
    }
    return "?";
}

std::string new_run_key() {
    std::random_device device;
    std::string key;
    for (int i = 0; i < 4; ++i) key += fmt::format("{:08x}", device());
    return key;
}

std::string machine_class(const Environment& env) {
    // A guest's model name ("AMD EPYC", "Intel(R) Xeon(R) Processor") tells little but its maker,
    // and two makers' 2-core AVX-512 guests, whose guests may list no cache, are otherwise one class.
    const std::string_view vendor = env.cpu_model.find("Intel") != std::string::npos ? "intel"
                                    : env.cpu_model.find("AMD") != std::string::npos ? "amd"
                                                                                      : "other";
    const std::string cores = env.n_cores > 0 ? fmt::format("{}c", env.n_cores) : "?c";
    const std::string llc = env.llc_bytes > 0 ? fmt::format("llc{}mib", env.llc_bytes / (1024 * 1024)) : "llc-unknown";
    return fmt::format("{}-{}-{}-{}", vendor, env.kernel_isa.empty() ? "?" : env.kernel_isa, cores, llc);
}

std::map<std::string, std::string> environment_cells(const Environment& env) {
    return {{"tool_version", env.tool_version},
            {"git_commit", env.git_commit},
            {"build_type", env.build_type},
            {"compiler", env.compiler},
            {"kernel_isa", env.kernel_isa},
            {"kernel_tiles", env.kernel_tiles},
            {"optimized_build", env.optimized_build ? "true" : "false"},
            {"cpu_model", env.cpu_model},
            {"n_cores", env.n_cores > 0 ? fmt::format("{}", env.n_cores) : ""},
            {"llc_bytes", env.llc_bytes > 0 ? fmt::format("{}", env.llc_bytes) : ""},
            {"cache_sizes", env.cache_sizes},
            {"blas_library", env.blas_library},
            {"blas_threading", env.blas_threading},
            {"openblas_coretype", env.openblas_coretype},
            {"openblas_l2_size", env.openblas_l2_size},
            {"transparent_hugepage", env.transparent_hugepage},
            {"timestamp", env.timestamp},
            {"command_line", env.command_line},
            {"shard", env.shard}};
}

Environment environment_of_cells(const std::map<std::string, std::string>& cells) {
    const auto text = [&](const char* name) {
        const auto found = cells.find(name);
        return found == cells.end() ? std::string() : found->second;
    };
    Environment env;
    env.tool_version = text("tool_version");
    env.git_commit = text("git_commit");
    env.build_type = text("build_type");
    env.compiler = text("compiler");
    env.kernel_isa = text("kernel_isa");
    env.kernel_tiles = text("kernel_tiles");
    env.optimized_build = text("optimized_build") != "false";
    env.cpu_model = text("cpu_model");
    env.n_cores = static_cast<std::size_t>(parse_count(text("n_cores")));
    env.llc_bytes = static_cast<std::size_t>(parse_count(text("llc_bytes")));
    env.cache_sizes = text("cache_sizes");
    env.blas_library = text("blas_library");
    env.blas_threading = text("blas_threading");
    env.openblas_coretype = text("openblas_coretype");
    env.openblas_l2_size = text("openblas_l2_size");
    env.transparent_hugepage = text("transparent_hugepage");
    env.timestamp = text("timestamp");
    env.command_line = text("command_line");
    env.shard = text("shard");
    return env;
}

ResultsDatabase::ResultsDatabase(std::unique_ptr<Connection> connection) : connection_(std::move(connection)) {}
ResultsDatabase::ResultsDatabase(ResultsDatabase&&) noexcept = default;
ResultsDatabase& ResultsDatabase::operator=(ResultsDatabase&&) noexcept = default;
ResultsDatabase::~ResultsDatabase() = default;

ResultsDatabase ResultsDatabase::open_for_writing(const std::filesystem::path& path) {
    auto connection = std::make_unique<Connection>(path, SqliteConnection::Mode::write);
    prepare_schema(*connection);
    return ResultsDatabase(std::move(connection));
}

ResultsDatabase ResultsDatabase::open_for_reading(const std::filesystem::path& path) {
    if (!input_path_exists(path)) throw std::runtime_error(fmt::format("{}: no such database", path.string()));
    if (const std::optional<std::string> problem = input_file_problem(path)) {
        throw std::runtime_error(fmt::format("{}: {}, so not a database", path.string(), *problem));
    }
    // SQLite opens an empty file as a database without tables, which check_identity would call
    // another application's.
    if (std::error_code error; std::filesystem::file_size(path, error) == 0 && !error) {
        throw std::runtime_error(fmt::format("{}: the file is empty, so it holds no kvbench run (sweep --db FILE "
                                             "stores one)",
                                             path.string()));
    }
    auto connection = std::make_unique<Connection>(path, SqliteConnection::Mode::read);
    check_identity(*connection, false);
    if (connection->query_integer("PRAGMA user_version;") < database_schema_version) prepare_schema(*connection);
    return ResultsDatabase(std::move(connection));
}

const std::string& ResultsDatabase::path() const { return connection_->path(); }

void ResultsDatabase::add_run(const RunRecord& run, std::span<const StoredRow> rows) {
    connection_->exec("BEGIN IMMEDIATE;\n" + insert_run_sql(run) + insert_rows_sql(run.key, 0, rows) + "COMMIT;\n");
}

void ResultsDatabase::add_rows(const std::string& key, std::size_t first_index, std::span<const StoredRow> rows) {
    // BEGIN IMMEDIATE takes the write lock first: a second writer waits here, not halfway.
    connection_->exec("BEGIN IMMEDIATE;\n" + insert_rows_sql(key, first_index, rows) + "COMMIT;\n");
}

void ResultsDatabase::end_run(const std::string& key, RunStatus status) {
    connection_->exec(end_run_sql(key, status, utc_timestamp_now()));
}

bool ResultsDatabase::has_run(const std::string& key) const {
    return connection_->query_integer("SELECT count(*) FROM runs WHERE run_key = " + sql_quote(key) + ";") > 0;
}

std::vector<StoredRun> ResultsDatabase::runs() const {
    std::vector<StoredRun> runs;
    connection_->query(
        "SELECT runs.*, machines.*, builds.*, (SELECT count(*) FROM points WHERE points.run_id = runs.run_id) AS n_rows "
        "FROM runs JOIN machines USING (machine_id) JOIN builds USING (build_id) ORDER BY runs.run_id;",
        [&](const SqliteRow& row) {
            std::map<std::string, std::string> cells;
            for (int c = 0; c < row.n_columns(); ++c) {
                if (!row.is_null(c)) cells[row.name(c)] = row.is_integer(c) ? fmt::format("{}", row.integer(c)) : row.text(c);
            }
            StoredRun& run = runs.emplace_back();
            run.id = static_cast<std::int64_t>(parse_count(cells["run_id"]));
            run.machine_id = static_cast<std::int64_t>(parse_count(cells["machine_id"]));
            run.build_id = static_cast<std::int64_t>(parse_count(cells["build_id"]));
            run.n_rows = static_cast<std::size_t>(parse_count(cells["n_rows"]));
            cells["timestamp"] = cells["started_at"];
            run.record.key = cells["run_key"];
            run.record.command = cells["command"];
            run.record.status = parse_status(cells["status"]);
            run.record.finished_at = cells["finished_at"];
            run.record.source = cells["source"];
            run.record.env = environment_of_cells(cells);
        });
    return runs;
}

ReportCells ResultsDatabase::run_cells(std::int64_t run_id) const {
    ReportCells report;
    report.format = OutputFormat::sqlite;
    std::string select = "SELECT point_id";
    for (const StoredColumn& column : point_columns()) select += fmt::format(", {}", column.name);
    std::map<std::int64_t, std::size_t> row_of_point;
    connection_->query(fmt::format("{} FROM points WHERE run_id = {} ORDER BY row_index;", select, run_id),
                       [&](const SqliteRow& row) {
                           ReportCellRow& cells = report.rows.emplace_back();
                           cells.number = report.rows.size();
                           row_of_point[row.integer(0)] = report.rows.size() - 1;
                           for (std::size_t c = 0; c < point_columns().size(); ++c) {
                               const int column = static_cast<int>(c) + 1;
                               if (row.is_null(column)) continue;
                               cells.cells[point_columns()[c].name] = cell_text(point_columns()[c].type, row, column);
                           }
                       });
    connection_->query(fmt::format("SELECT point_id, ns FROM samples WHERE point_id IN (SELECT point_id FROM points "
                                   "WHERE run_id = {}) ORDER BY point_id, rep;",
                                   run_id),
                       [&](const SqliteRow& row) {
                           ReportCellRow& cells = report.rows[row_of_point.at(row.integer(0))];
                           cells.has_samples = true;
                           cells.samples_ns.push_back(static_cast<double>(row.integer(1)));
                       });
    // The columns of the report: the contract's always (a NULL roofline_pct is still a column), the
    // others where a row has them (generate's step columns, on a generation's rows only).
    for (const StoredColumn& column : point_columns()) {
        const bool contract = std::find(contract_columns().begin(), contract_columns().end(), column.name) !=
                              contract_columns().end();
        const bool held = std::any_of(report.rows.begin(), report.rows.end(),
                                      [&](const ReportCellRow& row) { return row.cells.contains(column.name); });
        if (contract || held) report.columns.emplace_back(column.name);
    }
    for (const StoredRun& run : runs()) {
        if (run.id != run_id) continue;
        report.environment = environment_cells(run.record.env);
        for (const auto& [name, value] : report.environment) report.columns.push_back(name);
    }
    return report;
}

void check_database_file(const std::filesystem::path& path) {
    std::error_code error;
    const std::filesystem::file_status status = std::filesystem::status(path, error);
    // A symlink loop, or a folder that cannot be searched: SQLite could not open it after the sweep either.
    if (error && error != std::errc::no_such_file_or_directory) {
        throw std::runtime_error(fmt::format("{}: cannot be opened ({})", path.string(), error.message()));
    }
    if (!std::filesystem::exists(status)) return;
    if (!is_regular_input(path)) {
        throw std::runtime_error(fmt::format("{}: not a regular file (a directory, FIFO or device), so not a database",
                                             path.string()));
    }
    if (std::filesystem::file_size(path, error) == 0) return;
    if (!is_sqlite_file(path)) {
        throw std::runtime_error(fmt::format("{} is not a SQLite database (a report of another format? name a new "
                                             "file)",
                                             path.string()));
    }
    const SqliteConnection connection(path, SqliteConnection::Mode::read);
    check_identity(connection, true);
    // A page overwritten inside a valid header is found here, before the sweep measures, rather
    // than by the first write after it (which touched the file). quick_check reads every page
    // once, without the indexes' cross-checks of integrity_check.
    std::string verdict;
    connection.query("PRAGMA quick_check(1);", [&](const SqliteRow& row) {
        for (const char c : row.text(0)) verdict += c == '\n' ? std::string("; ") : std::string(1, c);
    });
    if (verdict != "ok") {
        throw std::runtime_error(fmt::format("{} is damaged (SQLite's quick_check: {}): restore it from a copy, or "
                                             "name a new file",
                                             path.string(), printable(verdict)));
    }
}

bool is_sqlite_file(const std::filesystem::path& path) {
    static constexpr char magic[] = "SQLite format 3";  // the header's first 16 bytes, its NUL included
    if (!is_regular_input(path)) return false;  // opening a FIFO would wait for a writer
    std::ifstream in(path, std::ios::binary);
    char header[sizeof magic] = {};
    in.read(header, sizeof header);
    return in.gcount() == static_cast<std::streamsize>(sizeof header) && std::equal(header, header + sizeof header, magic);
}

}  // namespace kvbench
