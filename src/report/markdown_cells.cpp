// escape_markdown(), markdown_header_cell() and write_pipe_row(): a pipe table's cells.
#include "kvbench/report/markdown_cells.hpp"

namespace kvbench {

std::string escape_markdown(std::string_view text) {
    std::string escaped;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        const bool inline_mark = c == '\\' || c == '|' || c == '*' || c == '_' || c == '<' || c == '[' || c == ']';
        const bool line_mark = i == 0 && (c == '-' || c == '+' || c == '#' || c == '>');
        if (inline_mark || line_mark) escaped += '\\';
        escaped += c;
    }
    return escaped;
}

std::string markdown_header_cell(std::string_view name) {
    std::string joined;
    for (const char c : name) {
        if (c == '\n') {
            if (!joined.empty() && joined.back() != '/') joined += ' ';
        } else {
            joined += c;
        }
    }
    return joined;
}

void write_pipe_row(std::ostream& out, const std::vector<std::string>& cells) {
    out << '|';
    for (const std::string& cell : cells) out << ' ' << escape_markdown(cell) << " |";
    out << '\n';
}

}  // namespace kvbench
