// Writers of a Sheet, one per output format.
#include "cli/plan_sheet.hpp"

#include "cli/output_streams.hpp"
#include "kvbench/engine/config.hpp"
#include "kvbench/report/markdown_cells.hpp"
#include "kvbench/report/summary_tables.hpp"
#include "kvbench/report/units.hpp"
#include "kvbench/files/atomic_file.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string_view>

namespace kvbench {

SheetCell text_cell(const std::string& text) { return {text, text}; }
SheetCell count_cell(std::uint64_t n) { return {n, fmt::format("{}", n)}; }
SheetCell bytes_cell(std::uint64_t n_bytes) { return {n_bytes, format_bytes(n_bytes)}; }
SheetCell ms_cell(double seconds) { return {seconds * 1e3, format_number(seconds * 1e3)}; }
SheetCell null_cell() { return {nullptr, "-"}; }

namespace {

// A real with six significant figures, as the sweep's CSV prints its reals (docs/csv.md#format):
// a model's estimate is not more accurate than that, and 0.1137448448 s read as a measurement.
std::string csv_text(const nlohmann::ordered_json& value) {
    if (value.is_null()) return "";
    if (value.is_string()) return value.get<std::string>();
    if (value.is_number_float()) return fmt::format("{:.6g}", value.get<double>());
    return value.dump();
}

void write_notes(std::ostream& out, const Sheet& sheet, std::size_t width) {
    for (const std::string& note : sheet.notes) out << wrap_text(note, 0, 2, width) << '\n';
}

// The columns a format shows: all in csv and json, the in_table ones in table and md.
Sheet shown_in(const Sheet& sheet, OutputFormat format) {
    if (format == OutputFormat::csv || format == OutputFormat::json || format == OutputFormat::jsonl) return sheet;
    Sheet shown;
    shown.title = sheet.title;
    shown.notes = sheet.notes;
    shown.table_rows = sheet.table_rows;
    for (const SheetColumn& column : sheet.columns) {
        if (column.in_table) shown.columns.push_back(column);
    }
    for (const auto& row : sheet.rows) {
        std::vector<SheetCell>& cells = shown.rows.emplace_back();
        for (std::size_t i = 0; i < row.size(); ++i) {
            if (sheet.columns[i].in_table) cells.push_back(row[i]);
        }
    }
    return shown;
}

// The terminal's table: the caption for the axes with one value, the key and varying axis
// columns first (repeated in each part when it must split), then the figures.
SummaryTable sheet_table(const Sheet& sheet) {
    std::vector<std::size_t> keys, figures;
    std::vector<std::string> constants;
    for (std::size_t i = 0; i < sheet.columns.size(); ++i) {
        const SheetColumn& column = sheet.columns[i];
        const bool one_value = std::all_of(sheet.rows.begin(), sheet.rows.end(), [&](const std::vector<SheetCell>& row) {
            return row[i].shown == sheet.rows.front()[i].shown;
        });
        if (column.role == SheetRole::axis && one_value && !sheet.rows.empty()) {
            // Words read "KV dtype f16", numbers "N=32768".
            constants.push_back(column.header + (column.align == Align::left ? " " : "=") + sheet.rows.front()[i].shown);
        } else if (column.role != SheetRole::figure) {
            keys.push_back(i);
        } else {
            figures.push_back(i);
        }
    }
    std::vector<std::size_t> order = keys;
    order.insert(order.end(), figures.begin(), figures.end());
    SummaryTable table;
    table.text.title = sheet.title;
    table.caption = constants.empty() ? "" : fmt::format("every line: {}", fmt::join(constants, ", "));
    table.n_key_columns = keys.size();
    for (const std::size_t i : order) {
        table.text.header.push_back(sheet.columns[i].header);
        table.text.align.push_back(sheet.columns[i].align);
    }
    const std::size_t n_shown = sheet.table_rows == 0 ? sheet.rows.size() : std::min(sheet.table_rows, sheet.rows.size());
    for (std::size_t r = 0; r < n_shown; ++r) {
        std::vector<std::string>& line = table.text.lines.emplace_back();
        for (const std::size_t i : order) line.push_back(sheet.rows[r][i].shown);
    }
    if (n_shown < sheet.rows.size()) {
        table.text.footnote = fmt::format("... and {} more, left out here: -o FILE.csv or -f csv lists every one",
                                          sheet.rows.size() - n_shown);
    }
    return table;
}

}  // namespace

void write_sheet(std::ostream& out, OutputFormat format, const Sheet& all_columns, std::size_t width) {
    const Sheet sheet = shown_in(all_columns, format);
    switch (format) {
    case OutputFormat::table: {
        write_text_table(out, sheet_table(sheet), width);
        write_notes(out, sheet, width);
        return;
    }
    case OutputFormat::md: {
        if (!sheet.title.empty()) out << sheet.title << "\n\n";
        std::vector<std::string> header;
        std::vector<std::string> rule;
        for (const SheetColumn& column : sheet.columns) {
            header.push_back(markdown_header_cell(column.header));
            rule.push_back(column.align == Align::right ? "---:" : "---");
        }
        write_pipe_row(out, header);
        out << '|';
        for (const std::string& cell : rule) out << ' ' << cell << " |";
        out << '\n';
        for (const auto& row : sheet.rows) {
            std::vector<std::string> cells;
            for (const SheetCell& cell : row) cells.push_back(cell.shown);
            write_pipe_row(out, cells);
        }
        // Blank lines between notes, or Markdown runs them into one paragraph.
        for (const std::string& note : sheet.notes) out << '\n' << note << '\n';
        return;
    }
    case OutputFormat::csv: {
        for (std::size_t i = 0; i < sheet.columns.size(); ++i) out << (i > 0 ? "," : "") << sheet.columns[i].key;
        out << '\n';
        for (const auto& row : sheet.rows) {
            for (std::size_t i = 0; i < row.size(); ++i) out << (i > 0 ? "," : "") << csv_quote_field(csv_text(row[i].value));
            out << '\n';
        }
        return;
    }
    case OutputFormat::json: {
        nlohmann::ordered_json array = nlohmann::ordered_json::array();
        for (const auto& row : sheet.rows) {
            nlohmann::ordered_json& record = array.emplace_back(nlohmann::ordered_json::object());
            for (std::size_t i = 0; i < row.size(); ++i) record[sheet.columns[i].key] = row[i].value;
        }
        out << array.dump(2) << '\n';
        return;
    }
    case OutputFormat::jsonl: {
        for (const auto& row : sheet.rows) {
            nlohmann::ordered_json record = nlohmann::ordered_json::object();
            for (std::size_t i = 0; i < row.size(); ++i) record[sheet.columns[i].key] = row[i].value;
            out << record.dump() << '\n';
        }
        return;
    }
    case OutputFormat::sql:
    case OutputFormat::sqlite: break;  // measured runs only: sheet_formats() never offers them
    }
    throw std::invalid_argument("write_sheet: a planner's sheet is not a run for the results database");
}

void emit_sheet(const Sheet& sheet, const OutputPlan& plan) {
    const OutputStreams streams(plan);
    std::vector<std::string> written;
    std::string csv;
    for (const OutputTarget& target : plan.files()) {
        write_file_atomically(target.path, [&](std::ostream& out) { write_sheet(out, target.format, sheet); });
        written.push_back(target.path);
        if (target.format == OutputFormat::csv && csv.empty()) csv = target.path;
    }
    if (plan.stdout_is_report()) write_sheet(streams.report(), plan.format, sheet);
    write_sheet(streams.tables(), OutputFormat::table, sheet, streams.table_width());
    if (!written.empty()) streams.message(fmt::format("wrote {} to {}", count_rows(sheet.rows.size()), fmt::join(written, ", ")));
    if (!sheet.plot_script.empty() && !csv.empty() && !sheet.rows.empty()) {
        streams.message(plot_hint(sheet.plot_script, csv));
    }
}

std::string first_line_of(const Sheet& sheet, OutputFormat format) {
    std::ostringstream out;
    write_sheet(out, format, sheet);
    const std::string text = out.str();
    return text.substr(0, text.find('\n'));
}

const OutputFormats& sheet_formats() {
    static const OutputFormats formats{OutputFormat::table, OutputFormat::csv, OutputFormat::json,
                                       OutputFormat::jsonl, OutputFormat::md};
    return formats;
}

}  // namespace kvbench
