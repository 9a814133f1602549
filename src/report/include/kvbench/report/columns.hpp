// The columns of a result row, in CSV order, each with its typed value: one list for the CSV and JSON writers.
#pragma once

#include "kvbench/measure/environment.hpp"
#include "kvbench/report/report.hpp"
#include "kvbench/report/schema.hpp"

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace kvbench {

// A latency in microseconds: the CSV prints it with fixed decimals (ns resolution),
// other reals with six significant figures.
struct Microseconds {
    double value = 0;
};

// std::monostate is an absent optional: an empty CSV field, a JSON null.
using CellValue = std::variant<std::monostate, bool, std::uint64_t, double, Microseconds, std::string>;

// A cell as the CSV writer prints it (docs/csv.md#format); kvbench merge writes the cells it
// read through it, so that a merged CSV reads like a sweep's whatever format its shards were.
std::string csv_cell_text(const CellValue& cell);

// A column computed from the ResultRow alone.
struct RowColumn {
    const char* name;
    CellValue (*value)(const ResultRow& row);
};

// A column repeated on every CSV row from the run's Environment (docs/csv.md#provenance-columns: every row is reproducible).
struct EnvironmentColumn {
    const char* name;
    std::string (*value)(const Environment& env);
};

// A column a command adds to its rows beyond ResultRow's own, one value per row, in row order
// (generate's step and phase). Sizes must match the rows'.
struct ExtraColumn {
    std::string name;
    std::vector<CellValue> values;
};

// A row's cell of a provenance column: its own (ResultRow::provenance, a row --resume kept),
// else the run's from `env`. schema_version is always the run's: the file's layout.
std::string provenance_cell(const EnvironmentColumn& column, const ResultRow& row, const Environment& env);

// The contract columns first (contract_columns(), in their order), then the extras.
const std::vector<RowColumn>& row_columns();
// Follow the row columns in the CSV; the JSON writer puts the whole Environment once instead.
const std::vector<EnvironmentColumn>& environment_columns();

// write_csv and write_json with `extra` columns after the row columns (and before the CSV's
// environment columns). Throws std::invalid_argument when a column's size is not rows.size().
void write_csv_with_extra(std::ostream& out, const std::vector<ResultRow>& rows, const std::vector<ExtraColumn>& extra,
               const Environment& env);
void write_json_with_extra(std::ostream& out, const std::vector<ResultRow>& rows, const std::vector<ExtraColumn>& extra,
                const Environment& env);
// One line per row, flushed: the row columns, the extras, the environment columns and the
// samples, so each line stands alone (docs/csv.md#jsonl).
void write_jsonl_with_extra(std::ostream& out, const std::vector<ResultRow>& rows,
                            const std::vector<ExtraColumn>& extra, const Environment& env);

}  // namespace kvbench
