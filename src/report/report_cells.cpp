// Reads kvbench's CSV (RFC 4180), JSON and JSON Lines reports (nlohmann-json) into cells of the current schema.
#include "kvbench/report/schema.hpp"

#include "kvbench/files/json_unique_keys.hpp"
#include "kvbench/report/database_schema.hpp"
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace kvbench {

namespace {

// A report has some seventy columns; a header or row of thousands is another file, refused
// before it is read further.
constexpr std::size_t max_report_columns = 1024;

[[noreturn]] void bad_row(std::size_t number, const std::string& why) {
    throw std::runtime_error(fmt::format("row {}: {}", number, why));
}

void add_column(ReportCells& report, const std::string& name) {
    if (std::find(report.columns.begin(), report.columns.end(), name) == report.columns.end()) {
        report.columns.push_back(name);
    }
}

// A cell under its name as the file spells it, stored under the current name and unit.
void set_cell(ReportCellRow& row, const std::string& name, const std::string& text) {
    if (!text.empty()) row.cells[current_column_name(name)] = current_cell_text(name, text);
}

ReportCells read_csv_cells(const std::string& text) {
    const std::vector<std::vector<std::string>> records = parse_csv_records(text);
    if (records.empty()) throw std::runtime_error("the file is empty (no CSV header)");
    const std::vector<std::string>& header = records.front();
    ReportCells report;
    report.format = OutputFormat::csv;
    if (header.size() > max_report_columns) {
        throw std::runtime_error(fmt::format("a header of {} columns, more than any kvbench report has", header.size()));
    }
    std::set<std::string> seen;
    for (const std::string& name : header) {
        const std::string current = current_column_name(name);
        // Two cells of one column: which one a reader took would decide the figures.
        if (!seen.insert(current).second) throw std::runtime_error(fmt::format("the header names column {} twice", current));
        report.columns.push_back(current);
    }
    for (std::size_t r = 1; r < records.size(); ++r) {
        const std::vector<std::string>& record = records[r];
        if (record.size() == 1 && record.front().empty() && header.size() > 1) continue;  // a blank line
        if (record.size() != header.size()) {
            bad_row(r, fmt::format("{} fields, the header has {}", record.size(), header.size()));
        }
        ReportCellRow row;
        row.number = r;
        for (std::size_t c = 0; c < header.size(); ++c) set_cell(row, header[c], record[c]);
        // As a JSON row's: a CSV of a schema this build does not know is not read as this one.
        if (const std::optional<std::string> version = row.cell("schema_version");
            version && (version->size() != 1 || (*version)[0] < '1' || (*version)[0] > '0' + report_schema_version)) {
            bad_row(r, fmt::format("schema_version {} is not one this kvbench reads (1 to {})", *version,
                                   report_schema_version));
        }
        report.rows.push_back(std::move(row));
    }
    return report;
}

// A JSON scalar as the text the CSV would hold; null is an empty cell.
std::string json_text(const nlohmann::json& value) {
    if (value.is_null()) return "";
    if (value.is_string()) return value.get<std::string>();
    if (value.is_number_float()) return fmt::format("{}", value.get<double>());
    return value.dump();
}

// A JSON or JSON Lines report this build can read: schema 1 to the current one (docs/csv.md#schema-version).
void check_schema_version(const nlohmann::json& object) {
    const auto found = object.find("schema_version");
    if (found == object.end()) throw std::runtime_error("no schema_version");
    // Unsigned only: get<int>() would wrap 2^64 - 1 to a version in range.
    if (!found->is_number_unsigned() || found->get<std::uint64_t>() < 1 ||
        found->get<std::uint64_t>() > static_cast<std::uint64_t>(report_schema_version)) {
        throw std::runtime_error(fmt::format("schema_version {} is not one this kvbench reads (1 to {})", found->dump(),
                                             report_schema_version));
    }
}

// kvbench writes a count or a figure as a JSON number, a flag as true or false and a word as a
// string (cell_json.hpp); a row's column of another JSON type ("seq": "16") was written by
// another tool, though its text would read as the cell. null is an absent cell.
void check_json_type(const std::string& column, const nlohmann::json& value, std::size_t number) {
    const std::optional<ColumnType> type = point_column_type(column);
    if (!type || value.is_null()) return;  // provenance, or a column of another tool
    const auto [fits, what] = [&]() -> std::pair<bool, const char*> {
        switch (*type) {
        case ColumnType::integer:
        case ColumnType::real:
        case ColumnType::latency_us: return {value.is_number(), "a JSON number"};
        case ColumnType::boolean: return {value.is_boolean(), "true or false"};
        case ColumnType::text: return {value.is_string(), "a JSON string"};
        }
        return {true, ""};
    }();
    if (!fits) {
        std::string shown = value.dump();
        if (shown.size() > 40) shown = shown.substr(0, 37) + "...";  // an array or object of any length
        bad_row(number, fmt::format("column {}: {} is a JSON {}, not {} as kvbench writes it", column,
                                    printable(shown), value.type_name(), what));
    }
}

ReportCellRow read_json_row(const nlohmann::json& object, std::size_t number, ReportCells& report) {
    if (!object.is_object()) bad_row(number, "not a JSON object");
    if (object.size() > max_report_columns) bad_row(number, fmt::format("{} keys, more than any kvbench report's row has", object.size()));
    ReportCellRow row;
    row.number = number;
    for (const auto& [name, value] : object.items()) {
        if (name == "samples_ns") continue;
        check_json_type(current_column_name(name), value, number);
        add_column(report, current_column_name(name));
        set_cell(row, name, json_text(value));
    }
    if (const auto samples = object.find("samples_ns"); samples != object.end()) {
        if (!samples->is_array()) bad_row(number, "samples_ns is not an array");
        row.has_samples = true;
        for (const nlohmann::json& sample : *samples) {
            if (!sample.is_number()) bad_row(number, "samples_ns holds something other than numbers");
            row.samples_ns.push_back(sample.get<double>());
        }
    }
    return row;
}

ReportCells read_json_cells(const std::string& text) {
    check_json_depth(text);
    nlohmann::json document;
    try {
        document = parse_json_unique_keys(text);
    } catch (const nlohmann::json::exception& error) {
        throw std::runtime_error(fmt::format("not valid JSON ({})", error.what()));
    }
    if (!document.is_object()) throw std::runtime_error("not a JSON object");
    check_schema_version(document);
    const auto rows = document.find("rows");
    if (rows == document.end() || !rows->is_array()) throw std::runtime_error("\"rows\" is missing or not an array");
    ReportCells report;
    report.format = OutputFormat::json;
    if (const auto environment = document.find("environment"); environment != document.end() && environment->is_object()) {
        for (const auto& [name, value] : environment->items()) {
            report.environment[current_column_name(name)] = current_cell_text(name, json_text(value));
        }
    }
    std::size_t number = 0;
    for (const nlohmann::json& object : *rows) report.rows.push_back(read_json_row(object, ++number, report));
    return report;
}

ReportCells read_jsonl_cells(const std::string& text) {
    check_json_depth(text);
    ReportCells report;
    report.format = OutputFormat::jsonl;
    std::istringstream in(text);
    std::string line;
    std::size_t number = 0;
    while (std::getline(in, line)) {
        // A last line without its line break was cut short (a crash, a full disk): the rows
        // before it are whole, and it is dropped (docs/csv.md#jsonl), its number kept for merge
        // to say so.
        if (in.eof()) {
            if (line.find_first_not_of(" \t\r") != std::string::npos) report.cut_line = number + 1;
            break;
        }
        ++number;
        if (line.empty()) continue;
        nlohmann::json object;
        try {
            object = parse_json_unique_keys(line);
            check_schema_version(object);
        } catch (const nlohmann::json::exception& error) {
            bad_row(number, fmt::format("not valid JSON ({})", error.what()));
        } catch (const std::runtime_error& error) {
            bad_row(number, error.what());
        }
        report.rows.push_back(read_json_row(object, number, report));
    }
    return report;
}

}  // namespace

std::optional<std::string> ReportCellRow::cell(const std::string& column) const {
    const auto found = cells.find(column);
    if (found == cells.end() || found->second.empty()) return std::nullopt;
    return found->second;
}

std::optional<std::string> ReportCells::provenance(const ReportCellRow& row, const std::string& column) const {
    if (std::optional<std::string> own = row.cell(column)) return own;
    const auto found = environment.find(column);
    if (found == environment.end() || found->second.empty()) return std::nullopt;
    return found->second;
}

std::vector<std::vector<std::string>> parse_csv_records(const std::string& text) {
    std::vector<std::vector<std::string>> records;
    std::vector<std::string> record;
    std::string field;
    bool quoted = false;
    bool record_open = false;  // something of the current record was read
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (quoted) {
            if (c != '"') {
                field += c;
            } else if (i + 1 < text.size() && text[i + 1] == '"') {
                field += '"';
                ++i;
            } else {
                quoted = false;
            }
            continue;
        }
        if (c == '"') {
            quoted = true;
            record_open = true;
        } else if (c == ',') {
            record.push_back(std::move(field));
            field.clear();
            record_open = true;
        } else if (c == '\n' || (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n')) {
            if (c == '\r') ++i;
            record.push_back(std::move(field));
            field.clear();
            records.push_back(std::move(record));
            record.clear();
            record_open = false;
        } else {
            field += c;
            record_open = true;
        }
    }
    if (quoted) {
        throw std::runtime_error(records.empty() ? std::string("the header: a quoted field is not closed")
                                                 : fmt::format("row {}: a quoted field is not closed", records.size()));
    }
    if (record_open) {  // a last record without its line break
        record.push_back(std::move(field));
        records.push_back(std::move(record));
    }
    return records;
}

namespace {

ReportCells read_cells(const std::string& text, OutputFormat format) {
    try {
        switch (format) {
        case OutputFormat::csv: return read_csv_cells(text);
        case OutputFormat::json: return read_json_cells(text);
        case OutputFormat::jsonl: return read_jsonl_cells(text);
        case OutputFormat::table:
        case OutputFormat::md:
        case OutputFormat::sql:
        case OutputFormat::sqlite: break;  // a database is read by ResultsDatabase (database.hpp)
        }
    } catch (const nlohmann::json::exception& error) {
        throw std::runtime_error(fmt::format("unexpected JSON layout ({})", error.what()));
    }
    throw std::invalid_argument("read_report_cells: only csv, json and jsonl reports can be read back");
}

}  // namespace

ReportCells read_report_cells(const std::string& text, OutputFormat format) {
    ReportCells report = read_cells(text, format);
    check_report_rows(report);
    return report;
}

bool starts_as_json_lines(const std::string& text) {
    const std::size_t start = text.find_first_not_of(" \t\r\n");
    if (start == std::string::npos || text[start] != '{') return false;
    const std::size_t end = text.find('\n', start);
    const std::string first_line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    return nlohmann::json::accept(first_line);
}

OutputFormat report_text_format(const std::string& text) {
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos || text[first] != '{') return OutputFormat::csv;
    check_json_depth(text);
    // A report written on one line is one JSON value with "rows", though its first line is an
    // object as a JSON Lines file's is.
    const nlohmann::json value = nlohmann::json::parse(text, nullptr, false);
    if (!value.is_discarded() && value.is_object() && value.contains("rows")) return OutputFormat::json;
    return starts_as_json_lines(text) ? OutputFormat::jsonl : OutputFormat::json;
}

void check_json_depth(const std::string& text) {
    std::size_t depth = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\') {
                ++i;  // the escaped character, a quote included
            } else if (c == '"') {
                in_string = false;
            }
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > max_report_json_depth) {
                throw std::runtime_error(fmt::format("nested deeper than {} levels, which no kvbench report is",
                                                     max_report_json_depth));
            }
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
}

}  // namespace kvbench
