// The JSON writer: the Environment once, then every ResultRow with its raw samples.
#include "cell_json.hpp"
#include "kvbench/report/report.hpp"
#include "kvbench/report/columns.hpp"

#include <nlohmann/json.hpp>

#include <stdexcept>

namespace kvbench {

namespace {

// Environment fields that are "unknown" when empty or zero become null.
Json string_or_null(const std::string& value) { return value.empty() ? Json(nullptr) : Json(value); }

}  // namespace

Json environment_json(const Environment& env) {
    Json j;
    j["tool_version"] = env.tool_version;
    j["git_commit"] = env.git_commit;
    j["build_type"] = env.build_type;
    j["compiler"] = env.compiler;
    j["kernel_isa"] = env.kernel_isa;
    j["kernel_tiles"] = string_or_null(env.kernel_tiles);
    j["optimized_build"] = env.optimized_build;
    j["cpu_model"] = env.cpu_model;
    j["n_cores"] = env.n_cores;
    j["llc_bytes"] = env.llc_bytes == 0 ? Json(nullptr) : Json(env.llc_bytes);
    j["cache_sizes"] = string_or_null(env.cache_sizes);
    j["blas_library"] = env.blas_library;
    j["blas_threading"] = env.blas_threading;
    j["openblas_coretype"] = string_or_null(env.openblas_coretype);
    j["openblas_l2_size"] = string_or_null(env.openblas_l2_size);
    j["blas_core"] = string_or_null(env.blas_core);
    j["blas_held_back"] = string_or_null(env.blas_held_back);
    j["transparent_hugepage"] = string_or_null(env.transparent_hugepage);
    j["timestamp"] = env.timestamp;
    j["command_line"] = string_or_null(env.command_line);
    j["shard"] = string_or_null(env.shard);
    return j;
}

void write_json(std::ostream& out, const std::vector<ResultRow>& rows, const Environment& env) {
    write_json_with_extra(out, rows, {}, env);
}

void write_json_with_extra(std::ostream& out, const std::vector<ResultRow>& rows, const std::vector<ExtraColumn>& extra,
                const Environment& env) {
    for (const ExtraColumn& column : extra) {
        if (column.values.size() != rows.size()) throw std::invalid_argument("extra column " + column.name + ": one value per row");
    }
    Json report;
    report["schema_version"] = report_schema_version;
    report["environment"] = environment_json(env);
    Json json_rows = Json::array();
    for (std::size_t i = 0; i < rows.size(); ++i) {
        Json j;
        for (const RowColumn& column : row_columns()) j[column.name] = cell_json(column.value(rows[i]));
        for (const ExtraColumn& column : extra) j[column.name] = cell_json(column.values[i]);
        // A row --resume kept: the provenance that differs from the environment block, which a
        // reader takes from the row before the block (schema.hpp's ReportCells::provenance), as
        // kvbench merge writes a row of another run.
        for (const EnvironmentColumn& column : environment_columns()) {
            const std::string own = provenance_cell(column, rows[i], env);
            if (own != column.value(env)) j[column.name] = own;
        }
        j["samples_ns"] = rows[i].samples_ns;
        json_rows.push_back(std::move(j));
    }
    report["rows"] = std::move(json_rows);
    out << report.dump(2) << '\n';
}

}  // namespace kvbench
