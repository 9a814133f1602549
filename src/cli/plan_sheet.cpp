// Writers of a Sheet, one per output format.
#include "cli/plan_sheet.hpp"

#include "cli/output_streams.hpp"
#include "kvbench/engine/config.hpp"
#include "kvbench/report/summary_tables.hpp"
#include "kvbench/files/atomic_file.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string_view>

namespace kvbench {

namespace {

std::string csv_text(const nlohmann::ordered_json& value) {
    if (value.is_null()) return "";
    if (value.is_string()) return value.get<std::string>();
    return value.dump();
}

std::string md_cell(std::string_view text) {
    std::string cell;
    for (const char c : text) {
        if (c == '|') cell += '\\';
        cell += c;
    }
    return cell;
}

void write_pipe_row(std::ostream& out, const std::vector<std::string>& cells) {
    out << '|';
    for (const std::string& cell : cells) out << ' ' << md_cell(cell) << " |";
    out << '\n';
}

void write_notes(std::ostream& out, const Sheet& sheet) {
    for (const std::string& note : sheet.notes) out << wrap_text(note, 0, 2) << '\n';
}

// The columns a format shows: all in csv and json, the in_table ones in table and md.
Sheet shown_in(const Sheet& sheet, OutputFormat format) {
    if (format == OutputFormat::csv || format == OutputFormat::json || format == OutputFormat::jsonl) return sheet;
    Sheet shown;
    shown.title = sheet.title;
    shown.notes = sheet.notes;
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

}  // namespace

void write_sheet(std::ostream& out, OutputFormat format, const Sheet& all_columns) {
    const Sheet sheet = shown_in(all_columns, format);
    switch (format) {
    case OutputFormat::table: {
        TextTable table;
        table.title = sheet.title;
        for (const SheetColumn& column : sheet.columns) {
            table.header.push_back(column.header);
            table.align.push_back(column.align);
        }
        for (const auto& row : sheet.rows) {
            std::vector<std::string>& line = table.lines.emplace_back();
            for (const SheetCell& cell : row) line.push_back(cell.shown);
        }
        write_text_table(out, table);
        write_notes(out, sheet);
        return;
    }
    case OutputFormat::md: {
        if (!sheet.title.empty()) out << sheet.title << "\n\n";
        std::vector<std::string> header;
        std::vector<std::string> rule;
        for (const SheetColumn& column : sheet.columns) {
            header.push_back(column.header);
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
    for (const OutputTarget& target : plan.files()) {
        write_file_atomically(target.path, [&](std::ostream& out) { write_sheet(out, target.format, sheet); });
        written.push_back(target.path);
    }
    if (plan.stdout_is_report()) write_sheet(streams.report(), plan.format, sheet);
    write_sheet(streams.tables(), OutputFormat::table, sheet);
    if (!written.empty()) streams.message(fmt::format("wrote {} to {}", count_rows(sheet.rows.size()), fmt::join(written, ", ")));
}

const OutputFormats& sheet_formats() {
    static const OutputFormats formats{OutputFormat::table, OutputFormat::csv, OutputFormat::json,
                                       OutputFormat::jsonl, OutputFormat::md};
    return formats;
}

}  // namespace kvbench
