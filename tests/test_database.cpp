// The results database: its schema against the report columns and docs/database.md, a run written and read back, a writer killed mid-transaction, foreign files refused.
#include "kvbench/report/database.hpp"
#include "kvbench/report/database_schema.hpp"
#include "kvbench/report/export_manager.hpp"
#include "kvbench/report/report.hpp"

#include "scratch_dir.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sqlite3.h>

#include <csignal>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

using namespace kvbench;
using kvbench::test::ScratchDir;

namespace {

// Two measured rows of B=1 N=4 D=8 H=2 G=1 (as test_report.cpp's), with samples.
std::vector<ResultRow> two_rows() {
    ModelConfig config;
    config.n_batch = 1;
    config.seq_len = 4;
    config.model_dim = 8;
    config.n_heads = 2;
    config.n_kv_heads = 1;
    config.n_layers = 1;
    PointMeasurement measured;
    measured.cached = PathMeasurement{{1000, 1200, 1100}, FlopCount{512, 512}, {}};
    measured.uncached = PathMeasurement{{4400, 4000}, FlopCount{1856, 2048}, {}};
    measured.verify_rel_error = 3e-7;
    Roofline roofline;
    roofline.peak_gflops = 100;
    roofline.peak_gbps = 8;
    roofline.source = "measured this run";
    return make_result_rows({config, 2}, measured, RunOptions{}, &roofline, Environment{});
}

Environment test_environment() {
    Environment env;
    env.tool_version = "0.1.0";
    env.git_commit = "v0.1-4-gabc1234def56-dirty";
    env.build_type = "Release";
    env.compiler = "GNU 12.2.0";
    env.kernel_isa = "avx2+fma";
    env.kernel_tiles = "amx-int8";
    env.cpu_model = "AMD 'Zen', 8-core";  // a quote: SQL must escape it
    env.n_cores = 8;
    env.llc_bytes = 32u << 20;
    env.cache_sizes = "L1d 32 KiB, L3 32 MiB";
    env.blas_library = "OpenBLAS 0.3.21";
    env.blas_threading = "openmp";
    env.transparent_hugepage = "madvise";
    env.timestamp = "2024-01-02T03:04:05Z";
    env.command_line = "kvbench sweep -g 4,1 -o 'a b.csv'";
    env.shard = "2/4";
    return env;
}

RunRecord test_run(const std::string& key = "run-key-1") { return RunRecord{key, "sweep", RunStatus::running, "", "", test_environment()}; }

std::string read_all(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// One SQL statement's first column, through SQLite itself rather than the code under test.
std::string query(const std::filesystem::path& path, const std::string& sql) {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK);
    sqlite3_stmt* statement = nullptr;
    REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr) == SQLITE_OK);
    std::string value;
    if (sqlite3_step(statement) == SQLITE_ROW && sqlite3_column_text(statement, 0) != nullptr) {
        value = reinterpret_cast<const char*>(sqlite3_column_text(statement, 0));
    }
    sqlite3_finalize(statement);
    sqlite3_close(db);
    return value;
}

void execute(const std::filesystem::path& path, const std::string& sql) {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    char* error = nullptr;
    const int status = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
    const std::string message = error != nullptr ? error : "";
    sqlite3_free(error);
    sqlite3_close(db);
    REQUIRE_MESSAGE(status == SQLITE_OK, message);
}

// What a stored value's type must be, from the C++ value a report column produces.
std::optional<ColumnType> type_of(const CellValue& value) {
    if (std::holds_alternative<bool>(value)) return ColumnType::boolean;
    if (std::holds_alternative<std::uint64_t>(value)) return ColumnType::integer;
    if (std::holds_alternative<double>(value)) return ColumnType::real;
    if (std::holds_alternative<Microseconds>(value)) return ColumnType::latency_us;
    if (std::holds_alternative<std::string>(value)) return ColumnType::text;
    return std::nullopt;  // an absent optional tells nothing
}

}  // namespace

TEST_CASE("every report column is a points column of the type its values have") {
    for (const ResultRow& row : two_rows()) {
        for (const RowColumn& column : row_columns()) {
            const std::optional<ColumnType> stored = point_column_type(column.name);
            REQUIRE_MESSAGE(stored.has_value(), column.name, " is written to reports but not to the database");
            const std::optional<ColumnType> produced = type_of(column.value(row));
            if (produced) CHECK_MESSAGE(*stored == *produced, column.name);
        }
    }
    for (const char* column : {"step", "phase", "prompt", "new_tokens"}) CHECK(point_column_type(column).has_value());
    CHECK(point_columns().size() == row_columns().size() + 4);
}

TEST_CASE("docs/database.md shows the schema the code creates, verbatim") {
    const std::string page = read_all(std::filesystem::path(KVBENCH_DOCS_DIR) / "database.md");
    const std::size_t start = page.find("```sql\n");
    REQUIRE(start != std::string::npos);
    const std::size_t end = page.find("```", start + 7);
    REQUIRE(end != std::string::npos);
    CHECK(page.substr(start + 7, end - start - 7) == schema_sql());
}

TEST_CASE("a run written point by point reads back with every cell, sample and provenance field") {
    const ScratchDir dir("database");
    const std::filesystem::path path = dir.path / "results.sqlite";
    const std::vector<ResultRow> rows = two_rows();
    {
        ResultsDatabase database = ResultsDatabase::open_for_writing(path);
        database.add_run(test_run());
        const std::vector<StoredRow> stored = stored_rows(rows, {});
        database.add_rows("run-key-1", 0, std::span(stored).first(1));
        database.add_rows("run-key-1", 1, std::span(stored).subspan(1));
        database.end_run("run-key-1", RunStatus::stopped);
    }
    const ResultsDatabase database = ResultsDatabase::open_for_reading(path);
    const std::vector<StoredRun> runs = database.runs();
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].n_rows == 2);
    CHECK(runs[0].record.status == RunStatus::stopped);
    CHECK_FALSE(runs[0].record.finished_at.empty());
    const Environment& env = runs[0].record.env;
    CHECK(env.cpu_model == "AMD 'Zen', 8-core");
    CHECK(env.git_commit == "v0.1-4-gabc1234def56-dirty");
    CHECK(env.n_cores == 8);
    CHECK(env.llc_bytes == 32u << 20);
    CHECK(env.shard == "2/4");
    CHECK(env.kernel_tiles == "amx-int8");
    CHECK(env.command_line == "kvbench sweep -g 4,1 -o 'a b.csv'");
    CHECK(env.timestamp == "2024-01-02T03:04:05Z");
    CHECK(machine_class(env) == "amd-avx2+fma-8c-llc32mib");

    const ReportCells cells = database.run_cells(runs[0].id);
    REQUIRE(cells.rows.size() == 2);
    CHECK(cells.rows[0].cell("path") == "cached");
    CHECK(cells.rows[1].cell("path") == "uncached");
    CHECK(cells.rows[0].cell("flops") == "512");
    CHECK(cells.rows[0].cell("fits_in_llc") == (rows[0].fits_in_llc ? "true" : "false"));
    CHECK(cells.rows[1].cell("noisy") == (rows[1].noisy ? "true" : "false"));
    CHECK(cells.rows[0].cell("reps_policy") == rows[0].reps_policy);
    CHECK_FALSE(cells.rows[0].cell("kv_rel_error").has_value());  // NULL stays absent
    CHECK_FALSE(cells.rows[0].cell("step").has_value());
    // Reals keep every digit: the database is not rounded like the CSV.
    CHECK(std::stod(*cells.rows[0].cell("gflops")) == rows[0].gflops);
    CHECK(std::stod(*cells.rows[0].cell("latency_us_mean")) == rows[0].stats.mean_ns / 1000);
    CHECK(cells.rows[0].samples_ns == std::vector<double>{1000, 1200, 1100});
    CHECK(cells.rows[1].samples_ns == std::vector<double>{4400, 4000});
    CHECK(cells.environment.at("cpu_model") == "AMD 'Zen', 8-core");
    CHECK(query(path, "PRAGMA integrity_check;") == "ok");
    CHECK(query(path, "SELECT count(*) FROM results WHERE git_commit = 'v0.1-4-gabc1234def56-dirty';") == "2");
}

TEST_CASE("a second run on the same machine and build shares their rows; a key is added once") {
    const ScratchDir dir("database");
    const std::filesystem::path path = dir.path / "results.sqlite";
    ResultsDatabase database = ResultsDatabase::open_for_writing(path);
    database.add_run(test_run("a"), stored_rows(two_rows(), {}));
    database.add_run(test_run("b"));
    CHECK_THROWS_AS(database.add_run(test_run("a")), std::runtime_error);
    CHECK(query(path, "SELECT count(*) FROM machines;") == "1");
    CHECK(query(path, "SELECT count(*) FROM builds;") == "1");
    CHECK(query(path, "SELECT count(*) FROM runs;") == "2");
    CHECK(query(path, "SELECT count(*) FROM samples;") == "5");
    CHECK(database.has_run("b"));
}

TEST_CASE("the sql script loaded by SQLite itself holds what the database writer stores") {
    const ScratchDir dir("database");
    const std::vector<StoredRow> rows = stored_rows(two_rows(), {});
    ResultsDatabase::open_for_writing(dir.path / "written.sqlite").add_run(test_run(), rows);
    std::ostringstream script;
    const std::pair<RunRecord, std::vector<StoredRow>> runs[] = {{test_run(), rows}};
    write_sql_script(script, runs);
    execute(dir.path / "loaded.sqlite", script.str());
    const auto cells = [](const std::filesystem::path& path) {
        const ResultsDatabase database = ResultsDatabase::open_for_reading(path);
        return database.run_cells(database.runs().at(0).id);
    };
    const ReportCells written = cells(dir.path / "written.sqlite");
    const ReportCells loaded = cells(dir.path / "loaded.sqlite");
    REQUIRE(loaded.rows.size() == 2);
    for (std::size_t i = 0; i < 2; ++i) {
        CHECK(loaded.rows[i].cells == written.rows[i].cells);
        CHECK(loaded.rows[i].samples_ns == written.rows[i].samples_ns);
    }
    CHECK(loaded.environment == written.environment);
}

TEST_CASE("a generation's step columns are stored; a column the database lacks is refused") {
    const std::vector<ResultRow> rows = two_rows();
    const std::vector<ExtraColumn> steps = {{"step", {std::uint64_t{0}, std::uint64_t{0}}},
                                            {"phase", {std::string("prefill"), std::string("prefill")}},
                                            {"prompt", {std::uint64_t{8}, std::uint64_t{8}}},
                                            {"new_tokens", {std::uint64_t{4}, std::uint64_t{4}}}};
    const std::vector<StoredRow> stored = stored_rows(rows, steps);
    CHECK(std::get<std::string>(stored[1].cell("phase")) == "prefill");
    CHECK_THROWS_AS(stored_rows(rows, {{"unknown_column", {std::uint64_t{1}, std::uint64_t{2}}}}),
                    std::invalid_argument);
}

TEST_CASE("a writer killed in the middle of a transaction leaves a consistent database with every committed point") {
    const ScratchDir dir("database");
    const std::filesystem::path path = dir.path / "killed.sqlite";
    const std::vector<StoredRow> rows = stored_rows(two_rows(), {});
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        // Two points committed, then a third transaction far larger than the page cache, so its
        // pages reach the database file before the commit, and SIGKILL in the middle of it.
        ResultsDatabase database = ResultsDatabase::open_for_writing(path);
        database.add_run(test_run());
        database.add_rows("run-key-1", 0, rows);
        database.add_rows("run-key-1", 2, rows);
        sqlite3* db = nullptr;
        sqlite3_open(path.c_str(), &db);
        sqlite3_exec(db, "PRAGMA cache_size = 1; BEGIN IMMEDIATE;", nullptr, nullptr, nullptr);
        for (int i = 0; i < 2000; ++i) {
            const std::string insert = fmt::format(
                "INSERT INTO points (run_id, row_index, path, reps_policy) VALUES (1, {}, 'cached', '{}');", 4 + i,
                std::string(200, 'x'));
            sqlite3_exec(db, insert.c_str(), nullptr, nullptr, nullptr);
        }
        std::raise(SIGKILL);
    }
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    REQUIRE(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGKILL);
    // A journal the dead writer left behind proves the kill landed inside the transaction.
    CHECK(std::filesystem::exists(dir.path / "killed.sqlite-journal"));

    const ResultsDatabase database = ResultsDatabase::open_for_reading(path);  // rolls the journal back
    CHECK(query(path, "PRAGMA integrity_check;") == "ok");
    const std::vector<StoredRun> runs = database.runs();
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].record.status == RunStatus::running);  // it never ended
    CHECK(runs[0].n_rows == 4);
    const ReportCells cells = database.run_cells(runs[0].id);
    REQUIRE(cells.rows.size() == 4);
    CHECK(cells.rows[3].samples_ns == std::vector<double>{4400, 4000});
}

TEST_CASE("a version-1 database is migrated when a run is added: its points read as attention blocks") {
    const ScratchDir dir("database");
    const std::filesystem::path path = dir.path / "old.sqlite";
    ResultsDatabase::open_for_writing(path).add_run(test_run("old"), stored_rows(two_rows(), {}));
    // Version 1 as it was: no variant column, and the view without it.
    execute(path, "DROP VIEW results; ALTER TABLE points DROP COLUMN variant; ALTER TABLE points DROP COLUMN block; "
                  "ALTER TABLE points DROP COLUMN ffn_dim; ALTER TABLE points DROP COLUMN weight_dtype; "
                  "ALTER TABLE points DROP COLUMN experts_read; ALTER TABLE points DROP COLUMN weight_rel_error; "
                  "ALTER TABLE points DROP COLUMN seq_lens; ALTER TABLE points DROP COLUMN query_tokens; "
                  "ALTER TABLE points DROP COLUMN latency_us_per_token; ALTER TABLE points DROP COLUMN k_dtype; "
                  "ALTER TABLE points DROP COLUMN v_dtype; ALTER TABLE points DROP COLUMN shared_prefix; ALTER TABLE points DROP COLUMN kv_block; "
                  "ALTER TABLE runs DROP COLUMN kernel_tiles; PRAGMA user_version = 1;");
    std::vector<ResultRow> windowed = two_rows();
    for (ResultRow& row : windowed) row.config.layer_windows = {2};
    ResultsDatabase::open_for_writing(path).add_run(test_run("new"), stored_rows(windowed, {}));
    CHECK(query(path, "PRAGMA user_version;") == "5");
    CHECK(query(path, "SELECT count(*) FROM results WHERE variant = '';") == "2");
    CHECK(query(path, "SELECT count(*) FROM results WHERE seq_lens = '';") == "4");  // version 3's, uniform
    // Version 3's key and value types: an older point's both its kv_dtype.
    CHECK(query(path, "SELECT count(*) FROM results WHERE k_dtype = kv_dtype AND v_dtype = kv_dtype;") == "4");
    CHECK(query(path, "SELECT count(*) FROM results WHERE variant = 'W=2:all';") == "2");
    CHECK(query(path, "SELECT count(*) FROM results WHERE block IS NULL;") == "2");  // read as attn by the reader
    CHECK(query(path, "SELECT count(*) FROM results WHERE block = 'attn';") == "2");
    CHECK(query(path, "PRAGMA integrity_check;") == "ok");
}

TEST_CASE("a version-2 database is migrated when a run is added: its points read as uniform batches of one cache type") {
    const ScratchDir dir("database");
    const std::filesystem::path path = dir.path / "old.sqlite";
    ResultsDatabase::open_for_writing(path).add_run(test_run("old"), stored_rows(two_rows(), {}));
    execute(path, "DROP VIEW results; ALTER TABLE points DROP COLUMN seq_lens; ALTER TABLE points DROP COLUMN "
                  "query_tokens; ALTER TABLE points DROP COLUMN latency_us_per_token; ALTER TABLE points DROP COLUMN "
                  "k_dtype; ALTER TABLE points DROP COLUMN v_dtype; ALTER TABLE points DROP COLUMN shared_prefix; ALTER TABLE points DROP COLUMN kv_block; "
                  "ALTER TABLE runs DROP COLUMN kernel_tiles; PRAGMA user_version = 2;");
    std::vector<ResultRow> ragged = two_rows();
    for (ResultRow& row : ragged) {
        row.config.n_batch = 2;
        row.config.seq_lens = {4, 1};
    }
    ResultsDatabase::open_for_writing(path).add_run(test_run("new"), stored_rows(ragged, {}));
    CHECK(query(path, "PRAGMA user_version;") == "5");
    CHECK(query(path, "SELECT count(*) FROM results WHERE seq_lens = '';") == "2");
    CHECK(query(path, "SELECT count(*) FROM results WHERE seq_lens = '4 1';") == "2");
    CHECK(query(path, "SELECT count(*) FROM results WHERE query_tokens = 1;") == "4");
    CHECK(query(path, "SELECT count(*) FROM results WHERE latency_us_per_token = latency_us_median;") == "4");
    CHECK(query(path, "SELECT count(*) FROM results WHERE k_dtype = kv_dtype AND v_dtype = kv_dtype;") == "4");
    CHECK(query(path, "PRAGMA integrity_check;") == "ok");
}

TEST_CASE("a version-3 database is migrated when a run is added: its points share no prefix") {
    const ScratchDir dir("database");
    const std::filesystem::path path = dir.path / "old.sqlite";
    ResultsDatabase::open_for_writing(path).add_run(test_run("old"), stored_rows(two_rows(), {}));
    execute(path, "DROP VIEW results; ALTER TABLE points DROP COLUMN shared_prefix; ALTER TABLE points DROP COLUMN kv_block; ALTER TABLE runs DROP COLUMN kernel_tiles; PRAGMA user_version = 3;");
    std::vector<ResultRow> shared = two_rows();
    for (ResultRow& row : shared) {
        row.config.n_batch = 2;
        row.config.shared_prefix = 2;
    }
    ResultsDatabase::open_for_writing(path).add_run(test_run("new"), stored_rows(shared, {}));
    CHECK(query(path, "PRAGMA user_version;") == "5");
    CHECK(query(path, "SELECT count(*) FROM results WHERE shared_prefix = 0;") == "2");
    CHECK(query(path, "SELECT count(*) FROM results WHERE shared_prefix = 2;") == "2");
}

TEST_CASE("a version-3 database is migrated when a run is added: its points read as contiguous caches") {
    const ScratchDir dir("database");
    const std::filesystem::path path = dir.path / "old.sqlite";
    ResultsDatabase::open_for_writing(path).add_run(test_run("old"), stored_rows(two_rows(), {}));
    execute(path, "DROP VIEW results; ALTER TABLE points DROP COLUMN shared_prefix; ALTER TABLE points DROP COLUMN kv_block; ALTER TABLE runs DROP COLUMN kernel_tiles; PRAGMA user_version = 3;");
    std::vector<ResultRow> paged = two_rows();
    paged.front().config.kv_block = 16;  // the cached row; the uncached one keeps no cache
    ResultsDatabase::open_for_writing(path).add_run(test_run("new"), stored_rows(paged, {}));
    CHECK(query(path, "PRAGMA user_version;") == "5");
    CHECK(query(path, "SELECT count(*) FROM results WHERE kv_block = 0;") == "3");
    CHECK(query(path, "SELECT count(*) FROM results WHERE kv_block = 16;") == "1");
    CHECK(query(path, "PRAGMA integrity_check;") == "ok");
}

TEST_CASE("a version-4 database is migrated when a run is added: its runs name no matrix units") {
    const ScratchDir dir("database");
    const std::filesystem::path path = dir.path / "old.sqlite";
    ResultsDatabase::open_for_writing(path).add_run(test_run("old"), stored_rows(two_rows(), {}));
    execute(path, "DROP VIEW results; ALTER TABLE runs DROP COLUMN kernel_tiles; PRAGMA user_version = 4;");
    ResultsDatabase::open_for_writing(path).add_run(test_run("new"), stored_rows(two_rows(), {}));
    CHECK(query(path, "PRAGMA user_version;") == "5");
    CHECK(query(path, "SELECT count(*) FROM results WHERE kernel_tiles = '';") == "2");
    CHECK(query(path, "SELECT count(*) FROM results WHERE kernel_tiles = 'amx-int8';") == "2");
    CHECK(query(path, "PRAGMA integrity_check;") == "ok");
}

TEST_CASE("files that are not a kvbench database of a known schema are refused before anything is written") {
    const ScratchDir dir("database");
    CHECK_NOTHROW(check_database_file(dir.path / "new.sqlite"));  // created at the first point
    std::ofstream(dir.path / "empty.sqlite").close();
    CHECK_NOTHROW(check_database_file(dir.path / "empty.sqlite"));
    std::ofstream(dir.path / "report.csv") << "path,batch\ncached,1\n";
    CHECK_THROWS_WITH(check_database_file(dir.path / "report.csv"), doctest::Contains("not a SQLite database"));
    execute(dir.path / "foreign.sqlite", "CREATE TABLE people (name TEXT);");
    CHECK_THROWS_WITH(check_database_file(dir.path / "foreign.sqlite"),
                      doctest::Contains("not a kvbench results database"));
    CHECK_THROWS_WITH(ResultsDatabase::open_for_writing(dir.path / "foreign.sqlite"),
                      doctest::Contains("not a kvbench results database"));
    CHECK(query(dir.path / "foreign.sqlite", "SELECT count(*) FROM sqlite_master;") == "1");  // untouched
    ResultsDatabase::open_for_writing(dir.path / "newer.sqlite");
    execute(dir.path / "newer.sqlite", "PRAGMA user_version = 99;");
    CHECK_THROWS_WITH(check_database_file(dir.path / "newer.sqlite"), doctest::Contains("schema 99, newer"));
    // Schema 0 with kvbench's tables: its layout is unknown, so it is neither migrated nor stamped.
    ResultsDatabase::open_for_writing(dir.path / "zero.sqlite").add_run(test_run("zero"), stored_rows(two_rows(), {}));
    execute(dir.path / "zero.sqlite", "PRAGMA user_version = 0;");
    CHECK_THROWS_WITH(check_database_file(dir.path / "zero.sqlite"), doctest::Contains("schema 0, which no kvbench writes"));
    CHECK_THROWS_WITH(ResultsDatabase::open_for_writing(dir.path / "zero.sqlite"),
                      doctest::Contains("schema 0, which no kvbench writes"));
    CHECK_THROWS_WITH(ResultsDatabase::open_for_reading(dir.path / "zero.sqlite"),
                      doctest::Contains("schema 0, which no kvbench writes"));
    CHECK(query(dir.path / "zero.sqlite", "PRAGMA user_version;") == "0");
    CHECK_THROWS_WITH(ResultsDatabase::open_for_reading(dir.path / "missing.sqlite"), doctest::Contains("no such database"));
    // A target may be empty (the run is its first); a database to read may not: SQLite would
    // open it as one without tables, "another application's".
    CHECK_THROWS_WITH(ResultsDatabase::open_for_reading(dir.path / "empty.sqlite"),
                      doctest::Contains("empty.sqlite: the file is empty, so it holds no kvbench run"));
    CHECK(std::filesystem::file_size(dir.path / "empty.sqlite") == 0);
    CHECK_THROWS_WITH(ResultsDatabase::open_for_reading(dir.path), doctest::Contains("is a directory, not a file"));
}

TEST_CASE("the export manager adds the run once, each point in its transaction, and its end") {
    const ScratchDir dir("database");
    const std::filesystem::path path = dir.path / "run.sqlite";
    ExportPlan plan;
    plan.files = {{OutputFormat::sqlite, path.string()}, {OutputFormat::sql, (dir.path / "run.sql").string()}};
    const Environment env = test_environment();
    std::ostringstream report;
    ExportManager exporter(plan, env, RunMessages{}, report);
    const std::vector<ResultRow> rows = two_rows();
    exporter.start({});
    exporter.save_point({{rows[0]}, {}}, {{rows[0]}, {}});
    CHECK(query(path, "SELECT count(*) FROM points;") == "1");
    CHECK(query(path, "SELECT status FROM runs;") == "running");
    exporter.save_point({{rows[1]}, {}}, {rows, {}});
    const ExportResult result = exporter.finish({rows, {}}, RunStatus::finished);
    CHECK(result.failed.empty());
    CHECK(result.written.size() == 2);
    CHECK(query(path, "SELECT count(*) FROM points;") == "2");
    CHECK(query(path, "SELECT status FROM runs;") == "finished");
    // The script names the same run: loading it into the database is refused, not a second copy.
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    const std::string script = read_all(dir.path / "run.sql");
    CHECK(sqlite3_exec(db, script.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK);
    sqlite3_exec(db, "ROLLBACK;", nullptr, nullptr, nullptr);
    sqlite3_close(db);
    CHECK(query(path, "SELECT count(*) FROM runs;") == "1");
}
