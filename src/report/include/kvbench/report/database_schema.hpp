// The results database's schema in one place (docs/database.md): its version, the type of every stored column, the SQL that creates it and the migrations from older versions.
#pragma once

#include "kvbench/report/columns.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kvbench {

// The layout of the database (docs/database.md#versions), kept in SQLite's PRAGMA user_version.
// A database of an older version is migrated when a run is added to it; a newer one is refused.
constexpr int database_schema_version = 5;

// PRAGMA application_id of a kvbench database ("kvbr"): a SQLite file without it holds
// someone else's tables and is never written to.
constexpr std::int32_t database_application_id = 0x6b766272;

// How a stored value is typed: in SQL (INTEGER, REAL, TEXT; a boolean is 0 or 1) and when it
// is written back as JSON or CSV. latency_us is a REAL that a CSV prints with three decimals.
enum class ColumnType { text, integer, real, latency_us, boolean };

struct StoredColumn {
    const char* name;
    ColumnType type;
};

// The points table's measured columns: every row column of the reports (columns.hpp), then
// generate's step, phase, prompt and new_tokens, in report order. A report column missing here
// would never reach the database: tests/test_database.cpp holds the two lists together.
const std::vector<StoredColumn>& point_columns();
// The type of a points column, or std::nullopt for a name that is not one.
std::optional<ColumnType> point_column_type(const std::string& name);

// Every statement that creates the current schema, in the order they run (CREATE TABLE IF NOT
// EXISTS ..., the results view, the two pragmas). docs/database.md#schema shows it verbatim.
const std::string& schema_sql();

// The step from database version `from_version` to from_version + 1: SQL run in the same
// transaction as the check of the version (docs/database.md#versions has the rule).
struct Migration {
    int from_version;
    std::string sql;
};
// Version 1 to 2 adds the points' variant and the full layer's columns (block, ffn_dim,
// weight_dtype, experts_read, weight_rel_error), and makes the results view again; 2 to 3 adds
// seq_lens, a ragged batch's contexts (empty on older points, uniform batches), query_tokens and
// latency_us_per_token (1 and the median on older points), and the cache's key and value types
// (k_dtype, v_dtype; an older point's both its kv_dtype); 3 to 4 adds shared_prefix (0 on older
// points) and kv_block, a paged cache's positions per block (0, contiguous, on older points);
// 4 to 5 adds the runs' kernel_tiles ('' on older runs, which did not record it).
const std::vector<Migration>& migrations();

// `text` (a report's cell) as a value of `type`. Throws std::runtime_error naming `column` when
// it is not one ("column seq: 'x' is not an integer").
CellValue cell_of_type(ColumnType type, const std::string& column, const std::string& text);

}  // namespace kvbench
