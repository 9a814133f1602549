// The SQL text of a run: its machine, build and run rows, its points with their samples, its end; and the whole script of -f sql.
#include "sql_script.hpp"

#include "sqlite_connection.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace kvbench {

namespace {

// The machines and builds tables' columns: the environment's fields of the same names.
const std::vector<std::string>& machine_fields() {
    static const std::vector<std::string> fields = {"cpu_model", "kernel_isa", "n_cores", "llc_bytes", "cache_sizes",
                                                    "transparent_hugepage", "blas_library", "blas_threading",
                                                    "openblas_coretype", "openblas_l2_size"};
    return fields;
}

const std::vector<std::string>& build_fields() {
    static const std::vector<std::string> fields = {"tool_version", "git_commit", "build_type", "compiler"};
    return fields;
}

// Unknown numbers are 0 and unknown texts '', never NULL: UNIQUE must find the machine again.
std::string field_literal(const std::map<std::string, std::string>& cells, const std::string& field) {
    const auto found = cells.find(field);
    const std::string text = found == cells.end() ? "" : found->second;
    if (field == "n_cores" || field == "llc_bytes") return text.empty() ? "0" : sql_literal(cell_of_type(ColumnType::integer, field, text));
    return sql_quote(text);
}

// "(SELECT machine_id FROM machines WHERE cpu_model = '...' AND ...)"
std::string select_id(const std::string& table, const std::string& id, const std::vector<std::string>& fields,
                      const std::map<std::string, std::string>& cells) {
    std::vector<std::string> conditions;
    for (const std::string& field : fields) conditions.push_back(fmt::format("{} = {}", field, field_literal(cells, field)));
    return fmt::format("(SELECT {} FROM {} WHERE {})", id, table, fmt::join(conditions, " AND "));
}

std::string insert_ignoring(const std::string& table, const std::vector<std::string>& fields,
                            const std::map<std::string, std::string>& cells) {
    std::vector<std::string> values;
    for (const std::string& field : fields) values.push_back(field_literal(cells, field));
    return fmt::format("INSERT OR IGNORE INTO {} ({}) VALUES ({});\n", table, fmt::join(fields, ", "),
                       fmt::join(values, ", "));
}

std::string run_id_of(const std::string& key) {
    return fmt::format("(SELECT run_id FROM runs WHERE run_key = {})", sql_quote(key));
}

}  // namespace

std::string sql_literal(const CellValue& value) {
    struct Visit {
        std::string operator()(std::monostate) const { return "NULL"; }
        std::string operator()(bool b) const { return b ? "1" : "0"; }
        std::string operator()(std::uint64_t n) const {
            if (n > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
                throw std::runtime_error(fmt::format("{} is above the database's largest integer, 2^63 - 1", n));
            }
            return fmt::format("{}", n);
        }
        // The shortest text that reads back as the same double: the database loses no digit.
        std::string operator()(double x) const { return std::isfinite(x) ? fmt::format("{}", x) : "NULL"; }
        std::string operator()(Microseconds us) const { return (*this)(us.value); }
        std::string operator()(const std::string& text) const { return sql_quote(text); }
    };
    return std::visit(Visit{}, value);
}

std::string insert_run_sql(const RunRecord& run) {
    const std::map<std::string, std::string> cells = environment_cells(run.env);
    std::string sql = insert_ignoring("machines", machine_fields(), cells);
    sql += insert_ignoring("builds", build_fields(), cells);
    sql += fmt::format(
        "INSERT INTO runs (run_key, command, status, machine_id, build_id, started_at, finished_at, command_line, "
        "shard, source, kernel_tiles)\n  VALUES ({}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {});\n",
        sql_quote(run.key), sql_quote(run.command), sql_quote(run_status_name(run.status)),
        select_id("machines", "machine_id", machine_fields(), cells), select_id("builds", "build_id", build_fields(), cells),
        sql_quote(run.env.timestamp), run.finished_at.empty() ? "NULL" : sql_quote(run.finished_at),
        sql_quote(run.env.command_line), sql_quote(run.env.shard), sql_quote(run.source), sql_quote(run.env.kernel_tiles));
    return sql;
}

std::string insert_rows_sql(const std::string& key, std::size_t first_index, std::span<const StoredRow> rows) {
    std::string sql;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const StoredRow& row = rows[i];
        std::vector<std::string> names = {"run_id", "row_index"};
        std::vector<std::string> values = {run_id_of(key), fmt::format("{}", first_index + i)};
        for (const auto& [name, value] : row.cells) {
            names.push_back(name);
            values.push_back(sql_literal(value));
        }
        sql += fmt::format("INSERT INTO points ({}) VALUES ({});\n", fmt::join(names, ", "), fmt::join(values, ", "));
        if (row.samples_ns.empty()) continue;
        // One statement for all of a row's samples: json_each numbers them from 0.
        sql += fmt::format(
            "INSERT INTO samples (point_id, rep, ns) SELECT point_id, key, value FROM points, json_each('[{}]')\n"
            "  WHERE run_id = {} AND row_index = {};\n",
            fmt::join(row.samples_ns, ","), run_id_of(key), first_index + i);
    }
    return sql;
}

std::string end_run_sql(const std::string& key, RunStatus status, const std::string& finished_at) {
    return fmt::format("UPDATE runs SET status = {}, finished_at = {} WHERE run_key = {};\n",
                       sql_quote(run_status_name(status)), sql_quote(finished_at), sql_quote(key));
}

void write_sql_script(std::ostream& out, std::span<const std::pair<RunRecord, std::vector<StoredRow>>> runs) {
    out << fmt::format("-- kvbench results, database schema {} (docs/database.md).\n"
                       "-- Load into a database file: sqlite3 results.sqlite < this-file\n"
                       "PRAGMA foreign_keys = ON;\nBEGIN;\n{}COMMIT;\n",
                       database_schema_version, schema_sql());
    for (const auto& [run, rows] : runs) {
        out << "BEGIN;\n" << insert_run_sql(run) << insert_rows_sql(run.key, 0, rows) << "COMMIT;\n";
    }
}

}  // namespace kvbench
