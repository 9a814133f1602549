// Writers of a Sheet, one per output format.
#include "cli/plan_sheet.hpp"

#include "kvbench/report/summary_tables.hpp"

#include "kvbench/engine/config.hpp"
#include "kvbench/report/atomic_file.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <string_view>

namespace kvbench {

namespace {

// RFC 4180: a field holding a comma, quote, CR or LF is quoted, its quotes doubled.
std::string quote_field(std::string_view field) {
    if (field.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(field);
    std::string quoted = "\"";
    for (const char c : field) {
        if (c == '"') quoted += '"';
        quoted += c;
    }
    return quoted + '"';
}

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
            for (std::size_t i = 0; i < row.size(); ++i) out << (i > 0 ? "," : "") << quote_field(csv_text(row[i].value));
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
    }
}

void check_sheet_output(const std::string& path) {
    namespace fs = std::filesystem;
    if (path.empty()) throw ConfigError("-o: the file name is empty (name the report file, e.g. -o memory.csv)");
    std::error_code ignored;
    const fs::file_status status = fs::status(path, ignored);
    if (fs::is_directory(status)) {
        throw ConfigError(fmt::format("-o {}: is a directory (name a file inside it)", path));
    }
    // The file is replaced by a rename (report/atomic_file.hpp): a device would become a file.
    if (fs::exists(status) && !fs::is_regular_file(status)) {
        throw ConfigError(fmt::format("-o {}: is not a regular file (name a file in a writable directory)", path));
    }
    const fs::path parent = fs::absolute(path, ignored).parent_path();
    if (!fs::is_directory(parent, ignored)) {
        throw ConfigError(fmt::format("-o {}: directory {} does not exist", path, parent.string()));
    }
}

void emit_sheet(const Sheet& sheet, OutputFormat format, const std::optional<std::string>& output) {
    if (!output) {
        write_sheet(std::cout, format, sheet);
        return;
    }
    write_file_atomically(*output, [&](std::ostream& out) { write_sheet(out, format, sheet); });
    write_sheet(std::cout, OutputFormat::table, sheet);
}

OutputFormat output_format_named(const std::string& name) {
    if (name == "csv") return OutputFormat::csv;
    if (name == "json") return OutputFormat::json;
    if (name == "md") return OutputFormat::md;
    return OutputFormat::table;
}

}  // namespace kvbench
