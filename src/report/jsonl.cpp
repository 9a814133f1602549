// The JSON Lines writer (docs/csv.md#jsonl): one self-contained JSON object per ResultRow and line.
#include "cell_json.hpp"
#include "kvbench/report/columns.hpp"
#include "kvbench/report/report.hpp"

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string_view>

namespace kvbench {

void write_jsonl(std::ostream& out, const std::vector<ResultRow>& rows, const Environment& env) {
    write_jsonl_with_extra(out, rows, {}, env);
}

void write_jsonl_with_extra(std::ostream& out, const std::vector<ResultRow>& rows,
                            const std::vector<ExtraColumn>& extra, const Environment& env) {
    for (const ExtraColumn& column : extra) {
        if (column.values.size() != rows.size()) throw std::invalid_argument("extra column " + column.name + ": one value per row");
    }
    for (std::size_t i = 0; i < rows.size(); ++i) {
        Json j;
        j["schema_version"] = report_schema_version;
        for (const RowColumn& column : row_columns()) j[column.name] = cell_json(column.value(rows[i]));
        for (const ExtraColumn& column : extra) j[column.name] = cell_json(column.values[i]);
        // Every line carries its provenance, as every CSV row does: a line read alone is reproducible.
        // A row --resume kept keeps its own.
        for (const EnvironmentColumn& column : environment_columns()) {
            if (std::string_view(column.name) == "schema_version") continue;
            j[column.name] = provenance_cell(column, rows[i], env);
        }
        j["samples_ns"] = rows[i].samples_ns;
        // One write per line: a reader following the file or the pipe sees whole lines.
        out << j.dump() + '\n';
    }
    out.flush();
}

}  // namespace kvbench
