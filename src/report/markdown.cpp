// The Markdown writer: the run description as a paragraph, then GitHub pipe tables.
#include "kvbench/report/report.hpp"
#include "kvbench/report/summary_tables.hpp"

#include <string_view>

namespace kvbench {

namespace {

// A '|' inside a cell would end it early.
std::string escape_cell(std::string_view cell) {
    std::string escaped;
    for (const char c : cell) {
        if (c == '|') escaped += '\\';
        escaped += c;
    }
    return escaped;
}

void write_pipe_row(std::ostream& out, const std::vector<std::string>& cells) {
    out << '|';
    for (const std::string& cell : cells) out << ' ' << escape_cell(cell) << " |";
    out << '\n';
}

}  // namespace

void write_markdown(std::ostream& out, const std::vector<ResultRow>& rows, const Environment& env) {
    out << describe_run(rows, env) << '\n';
    for (const TextTable& table : summary_tables(rows)) {
        out << "\n### " << table.title << "\n\n";
        write_pipe_row(out, table.header);
        out << '|';
        for (const Align align : table.align) out << (align == Align::right ? " ---: |" : " --- |");
        out << '\n';
        for (const auto& cells : table.lines) write_pipe_row(out, cells);
        if (!table.footnote.empty()) out << '\n' << escape_cell(table.footnote) << '\n';
    }
}

}  // namespace kvbench
