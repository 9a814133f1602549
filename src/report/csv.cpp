// The CSV writer (docs/csv.md#format): header row, then one RFC 4180 record per ResultRow.
#include "kvbench/report/report.hpp"
#include "kvbench/report/columns.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <string_view>

namespace kvbench {

// RFC 4180: a field holding a comma, quote, CR or LF is quoted, its quotes doubled.
std::string csv_quote_field(std::string_view field) {
    if (field.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(field);
    std::string quoted = "\"";
    for (const char c : field) {
        if (c == '"') quoted += '"';
        quoted += c;
    }
    return quoted + '"';
}

namespace {


struct CellText {
    std::string operator()(std::monostate) const { return ""; }
    std::string operator()(bool value) const { return value ? "true" : "false"; }
    std::string operator()(std::uint64_t value) const { return fmt::format("{}", value); }
    // Six significant figures: rates and ratios are not more accurate than the timer.
    std::string operator()(double value) const { return fmt::format("{:.6g}", value); }
    // Samples are whole ns, so three decimals in µs lose nothing but half-ns medians.
    std::string operator()(Microseconds value) const { return fmt::format("{:.3f}", value.value); }
    std::string operator()(const std::string& value) const { return value; }
};

void write_record(std::ostream& out, const std::vector<std::string>& fields) {
    for (std::size_t i = 0; i < fields.size(); ++i) {
        if (i > 0) out << ',';
        out << csv_quote_field(fields[i]);
    }
    // LF, not RFC 4180's CRLF: every CSV reader accepts it and it diffs cleanly in git.
    out << '\n';
}

}  // namespace

std::string csv_cell_text(const CellValue& cell) { return std::visit(CellText{}, cell); }

void write_csv(std::ostream& out, const std::vector<ResultRow>& rows, const Environment& env) {
    write_csv_with_extra(out, rows, {}, env);
}

void write_csv_with_extra(std::ostream& out, const std::vector<ResultRow>& rows, const std::vector<ExtraColumn>& extra,
               const Environment& env) {
    for (const ExtraColumn& column : extra) {
        if (column.values.size() != rows.size()) throw std::invalid_argument("extra column " + column.name + ": one value per row");
    }
    std::vector<std::string> header;
    for (const RowColumn& column : row_columns()) header.emplace_back(column.name);
    for (const ExtraColumn& column : extra) header.push_back(column.name);
    for (const EnvironmentColumn& column : environment_columns()) header.emplace_back(column.name);
    write_record(out, header);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        std::vector<std::string> fields;
        fields.reserve(header.size());
        for (const RowColumn& column : row_columns()) {
            fields.push_back(csv_cell_text(column.value(rows[i])));
        }
        for (const ExtraColumn& column : extra) fields.push_back(csv_cell_text(column.values[i]));
        // A row --resume kept keeps its own provenance; a row this run measured has the run's.
        for (const EnvironmentColumn& column : environment_columns()) {
            fields.push_back(provenance_cell(column, rows[i], env));
        }
        write_record(out, fields);
    }
}

}  // namespace kvbench
