// The results database's schema: the points columns and their types, the CREATE statements made from them, the migrations.
#include "kvbench/report/database_schema.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstring>
#include <iterator>
#include <stdexcept>

namespace kvbench {

namespace {

const char* sql_type(ColumnType type) {
    switch (type) {
    case ColumnType::text: return "TEXT";
    case ColumnType::integer: return "INTEGER";
    case ColumnType::real: return "REAL";
    case ColumnType::latency_us: return "REAL";
    case ColumnType::boolean: return "INTEGER";
    }
    return "";
}

// Machines and builds are kept once each: a run refers to them, so "every run of this commit"
// and "every run on this CPU" are one join. Every column is NOT NULL ('' or 0 when a report
// does not say) so that UNIQUE finds the same machine again: SQLite's NULLs are all distinct.
constexpr const char* tables_before_points = R"(CREATE TABLE IF NOT EXISTS machines (
  machine_id INTEGER PRIMARY KEY,
  cpu_model TEXT NOT NULL,
  kernel_isa TEXT NOT NULL,
  n_cores INTEGER NOT NULL,
  llc_bytes INTEGER NOT NULL,
  cache_sizes TEXT NOT NULL,
  transparent_hugepage TEXT NOT NULL,
  blas_library TEXT NOT NULL,
  blas_threading TEXT NOT NULL,
  openblas_coretype TEXT NOT NULL,
  openblas_l2_size TEXT NOT NULL,
  UNIQUE (cpu_model, kernel_isa, n_cores, llc_bytes, cache_sizes, transparent_hugepage,
          blas_library, blas_threading, openblas_coretype, openblas_l2_size)
);
CREATE TABLE IF NOT EXISTS builds (
  build_id INTEGER PRIMARY KEY,
  tool_version TEXT NOT NULL,
  git_commit TEXT NOT NULL,
  build_type TEXT NOT NULL,
  compiler TEXT NOT NULL,
  UNIQUE (tool_version, git_commit, build_type, compiler)
);
CREATE TABLE IF NOT EXISTS runs (
  run_id INTEGER PRIMARY KEY,
  run_key TEXT NOT NULL UNIQUE,
  command TEXT NOT NULL,
  status TEXT NOT NULL,
  machine_id INTEGER NOT NULL REFERENCES machines (machine_id),
  build_id INTEGER NOT NULL REFERENCES builds (build_id),
  started_at TEXT NOT NULL,
  finished_at TEXT,
  command_line TEXT NOT NULL,
  shard TEXT NOT NULL,
  source TEXT NOT NULL,
  kernel_tiles TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS points (
  point_id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  row_index INTEGER NOT NULL,
)";

constexpr const char* tables_after_points = R"(  UNIQUE (run_id, row_index)
);
CREATE TABLE IF NOT EXISTS samples (
  point_id INTEGER NOT NULL REFERENCES points (point_id) ON DELETE CASCADE,
  rep INTEGER NOT NULL,
  ns INTEGER NOT NULL,
  PRIMARY KEY (point_id, rep)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS runs_by_build ON runs (build_id);
CREATE INDEX IF NOT EXISTS runs_by_machine ON runs (machine_id);
)";

// The results view: every point with its run's provenance, as one CSV row holds it.
constexpr const char* view_provenance = R"(  builds.tool_version, builds.git_commit, builds.build_type, builds.compiler,
  machines.kernel_isa, runs.kernel_tiles, machines.cpu_model, machines.n_cores, machines.llc_bytes,
  machines.blas_library, machines.blas_threading, machines.openblas_coretype,
  machines.openblas_l2_size, machines.transparent_hugepage,
  runs.shard, runs.command_line, runs.started_at AS timestamp, runs.command, runs.status
FROM points JOIN runs USING (run_id) JOIN builds USING (build_id) JOIN machines USING (machine_id);
)";

// The results view over the current points columns; a migration that adds a column makes it again.
std::string results_view_sql() {
    std::string sql = "CREATE VIEW IF NOT EXISTS results AS SELECT\n  runs.run_id, points.point_id, points.row_index,\n";
    std::size_t line_size = 0;  // of the view's current line of points columns, wrapped near 100 characters
    for (const StoredColumn& column : point_columns()) {
        if (line_size == 0 || line_size + std::strlen(column.name) > 90) {
            sql += line_size == 0 ? " " : "\n ";
            line_size = 1;
        }
        fmt::format_to(std::back_inserter(sql), " points.{},", column.name);
        line_size += std::strlen(column.name) + 9;
    }
    sql += '\n';
    sql += view_provenance;
    return sql;
}

std::string make_schema_sql() {
    std::string sql = tables_before_points;
    for (const StoredColumn& column : point_columns()) {
        sql += fmt::format("  {} {},\n", column.name, sql_type(column.type));
    }
    sql += tables_after_points;
    sql += results_view_sql();
    sql += fmt::format("PRAGMA application_id = {};\nPRAGMA user_version = {};\n", database_application_id,
                       database_schema_version);
    return sql;
}

template <typename Number>
Number parse_or_throw(const std::string& column, const std::string& text, const char* expected) {
    Number value{};
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
        throw std::runtime_error(fmt::format("column {}: '{}' is not {}", column, text, expected));
    }
    return value;
}

}  // namespace

const std::vector<StoredColumn>& point_columns() {
    static const std::vector<StoredColumn> columns{
        {"path", ColumnType::text},
        {"batch", ColumnType::integer},
        {"seq", ColumnType::integer},
        {"dim", ColumnType::integer},
        {"heads", ColumnType::integer},
        {"kv_heads", ColumnType::integer},
        {"head_dim", ColumnType::integer},
        {"layers", ColumnType::integer},
        {"threads", ColumnType::integer},
        {"kv_dtype", ColumnType::text},
        {"flops", ColumnType::integer},
        {"bytes", ColumnType::integer},
        {"kv_bytes", ColumnType::integer},
        {"reps", ColumnType::integer},
        {"latency_us_median", ColumnType::latency_us},
        {"latency_us_min", ColumnType::latency_us},
        {"latency_us_max", ColumnType::latency_us},
        {"gflops", ColumnType::real},
        {"gb_per_s", ColumnType::real},
        {"roofline_pct", ColumnType::real},
        {"speedup", ColumnType::real},
        {"grouping", ColumnType::text},
        {"variant", ColumnType::text},
        {"seq_lens", ColumnType::text},
        {"query_tokens", ColumnType::integer},
        {"latency_us_per_token", ColumnType::latency_us},
        {"shared_prefix", ColumnType::integer},
        {"cache_state", ColumnType::text},
        {"latency_us_p90", ColumnType::latency_us},
        {"latency_us_mean", ColumnType::latency_us},
        {"latency_cv_pct", ColumnType::real},
        {"latency_mdape_pct", ColumnType::real},
        {"verify_rel_error", ColumnType::real},
        {"kv_rel_error", ColumnType::real},
        {"block", ColumnType::text},
        {"ffn_dim", ColumnType::integer},
        {"weight_dtype", ColumnType::text},
        {"experts_read", ColumnType::integer},
        {"weight_rel_error", ColumnType::real},
        {"fits_in_llc", ColumnType::boolean},
        {"flops_executed", ColumnType::integer},
        {"noisy", ColumnType::boolean},
        {"flags", ColumnType::text},
        {"reps_policy", ColumnType::text},
        {"seed", ColumnType::integer},
        {"warmup", ColumnType::integer},
        {"roofline_peak_gflops", ColumnType::real},
        {"roofline_peak_gb_per_s", ColumnType::real},
        {"roofline_source", ColumnType::text},
        {"k_dtype", ColumnType::text},
        {"v_dtype", ColumnType::text},
        {"kv_block", ColumnType::integer},
        // kvbench generate's columns (docs/generate.md#the-csv-and-json); NULL on a sweep's rows.
        {"step", ColumnType::integer},
        {"phase", ColumnType::text},
        {"prompt", ColumnType::integer},
        {"new_tokens", ColumnType::integer},
    };
    return columns;
}

std::optional<ColumnType> point_column_type(const std::string& name) {
    for (const StoredColumn& column : point_columns()) {
        if (name == column.name) return column.type;
    }
    return std::nullopt;
}

const std::string& schema_sql() {
    static const std::string sql = make_schema_sql();
    return sql;
}

const std::vector<Migration>& migrations() {
    // Version 2 names each point's variant and the full layer's columns (docs/csv.md); older
    // points are attention blocks of f32 weights. The view is made again to show them.
    static const std::vector<Migration> steps{
        {1, "ALTER TABLE points ADD COLUMN variant TEXT;\nUPDATE points SET variant = '';\n"
            "ALTER TABLE points ADD COLUMN block TEXT;\nALTER TABLE points ADD COLUMN ffn_dim INTEGER;\n"
            "ALTER TABLE points ADD COLUMN weight_dtype TEXT;\nALTER TABLE points ADD COLUMN experts_read INTEGER;\n"
            "ALTER TABLE points ADD COLUMN weight_rel_error REAL;\nDROP VIEW IF EXISTS results;\n" +
                results_view_sql()},
        // Version 3 names a ragged batch's contexts, the step's query tokens and the cache's key
        // and value types; older points are uniform batches of one token a step, of one type.
        {2, "ALTER TABLE points ADD COLUMN seq_lens TEXT;\nUPDATE points SET seq_lens = '';\n"
            "ALTER TABLE points ADD COLUMN query_tokens INTEGER;\nUPDATE points SET query_tokens = 1;\n"
            "ALTER TABLE points ADD COLUMN latency_us_per_token REAL;\n"
            "UPDATE points SET latency_us_per_token = latency_us_median;\n"
            "ALTER TABLE points ADD COLUMN k_dtype TEXT;\nALTER TABLE points ADD COLUMN v_dtype TEXT;\n"
            "UPDATE points SET k_dtype = kv_dtype, v_dtype = kv_dtype;\n"
            "DROP VIEW IF EXISTS results;\n" +
                results_view_sql()},
        // Version 4 names the positions a batch shares and a paged cache's positions per block;
        // older points share none and are contiguous caches.
        {3, "ALTER TABLE points ADD COLUMN shared_prefix INTEGER;\nUPDATE points SET shared_prefix = 0;\n"
            "ALTER TABLE points ADD COLUMN kv_block INTEGER;\nUPDATE points SET kv_block = 0;\n"
            "DROP VIEW IF EXISTS results;\n" +
                results_view_sql()},
        // Version 5 names the matrix units a run's kernels used (kernel_tiles): a run's, not
        // its machine's, as the OS may refuse them on a CPU that has them. Older runs say ''.
        {4, "ALTER TABLE runs ADD COLUMN kernel_tiles TEXT NOT NULL DEFAULT '';\n"
            "DROP VIEW IF EXISTS results;\n" +
                results_view_sql()},
    };
    return steps;
}

CellValue cell_of_type(ColumnType type, const std::string& column, const std::string& text) {
    switch (type) {
    case ColumnType::text: return text;
    case ColumnType::integer: return parse_or_throw<std::uint64_t>(column, text, "a whole number");
    case ColumnType::real: return parse_or_throw<double>(column, text, "a number");
    case ColumnType::latency_us: return Microseconds{parse_or_throw<double>(column, text, "a number")};
    case ColumnType::boolean:
        if (text == "true" || text == "1") return true;
        if (text == "false" || text == "0") return false;
        throw std::runtime_error(fmt::format("column {}: '{}' is not true or false", column, text));
    }
    throw std::invalid_argument("cell_of_type: unknown column type");
}

}  // namespace kvbench
