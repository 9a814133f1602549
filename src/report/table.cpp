// The terminal writer: the run description, then the summary tables as space-aligned columns.
#include "kvbench/report/report.hpp"
#include "kvbench/report/summary_tables.hpp"

#include <algorithm>
#include <string_view>

namespace kvbench {

namespace {

// Terminal columns of UTF-8 text ("µs" is two bytes, one column): count non-continuation bytes.
std::size_t display_width(std::string_view text) {
    return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
        return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    }));
}

void write_cells(std::ostream& out, const std::vector<std::string>& cells,
                 const std::vector<std::size_t>& widths, const std::vector<Align>& align) {
    std::string line = " ";
    for (std::size_t i = 0; i < cells.size(); ++i) {
        const std::string padding(widths[i] - display_width(cells[i]), ' ');
        line += ' ';
        line += align[i] == Align::right ? padding + cells[i] : cells[i] + padding;
        line += ' ';
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out << line << '\n';
}

}  // namespace

void write_text_table(std::ostream& out, const TextTable& table) {
    std::vector<std::size_t> widths;
    for (const std::string& name : table.header) widths.push_back(display_width(name));
    for (const auto& cells : table.lines) {
        for (std::size_t i = 0; i < cells.size(); ++i) widths[i] = std::max(widths[i], display_width(cells[i]));
    }
    out << table.title << '\n';
    write_cells(out, table.header, widths, table.align);
    std::vector<std::string> rules;
    for (const std::size_t width : widths) rules.emplace_back(width, '-');
    write_cells(out, rules, widths, table.align);
    for (const auto& cells : table.lines) write_cells(out, cells, widths, table.align);
    if (!table.footnote.empty()) out << "  " << table.footnote << '\n';
}

void write_table(std::ostream& out, const std::vector<ResultRow>& rows, const Environment& env) {
    out << describe_run(rows, env) << '\n';
    for (const TextTable& table : summary_tables(rows)) {
        out << '\n';
        write_text_table(out, table);
    }
}

}  // namespace kvbench
