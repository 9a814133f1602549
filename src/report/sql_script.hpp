// The SQL statements that add a run and its rows to the results database: run by the database writer, printed by -f sql (private to report/).
#pragma once

#include "kvbench/report/database.hpp"

#include <cstddef>
#include <span>
#include <string>

namespace kvbench {

// A value as an SQL literal: NULL (absent, or not finite), an integer, a real, 0 or 1, or a
// quoted string. Throws std::runtime_error for an integer above SQLite's 2^63 - 1.
std::string sql_literal(const CellValue& value);

// The run's machine and build (each added once), then the run itself.
std::string insert_run_sql(const RunRecord& run);
// The rows, numbered from first_index within the run of `key`, and their samples.
std::string insert_rows_sql(const std::string& key, std::size_t first_index, std::span<const StoredRow> rows);
// The run's end: its status and finished_at.
std::string end_run_sql(const std::string& key, RunStatus status, const std::string& finished_at);

}  // namespace kvbench
