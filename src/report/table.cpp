// The terminal writer: the run description, the legend, the summary tables as space-aligned columns
// within the terminal's width, the growth law and the headline.
#include "kvbench/report/growth_table.hpp"
#include "kvbench/report/headline.hpp"
#include "kvbench/report/report.hpp"
#include "kvbench/report/summary_tables.hpp"

#include <algorithm>
#include <numeric>
#include <optional>
#include <string_view>

namespace kvbench {

namespace {

constexpr std::size_t margin = 2;  // before the first column and between columns
constexpr std::size_t note_indent = 2;
constexpr std::size_t note_hanging_indent = 4;

std::vector<std::string> split_lines(std::string_view text) {
    std::vector<std::string> lines;
    std::size_t start = 0;
    while (true) {
        const std::size_t end = text.find('\n', start);
        lines.emplace_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
        if (end == std::string_view::npos) return lines;
        start = end + 1;
    }
}

void write_cells(std::ostream& out, const std::vector<std::string>& cells, const std::vector<std::size_t>& columns,
                 const std::vector<std::size_t>& widths, const std::vector<Align>& align) {
    std::string line;
    for (const std::size_t i : columns) {
        const std::string padding(widths[i] - display_width(cells[i]), ' ');
        line += std::string(margin, ' ');
        line += align[i] == Align::right ? padding + cells[i] : cells[i] + padding;
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out << line << '\n';
}

std::size_t line_width(const std::vector<std::size_t>& columns, const std::vector<std::size_t>& widths) {
    return std::accumulate(columns.begin(), columns.end(), std::size_t{0},
                           [&](std::size_t sum, std::size_t i) { return sum + margin + widths[i]; });
}

// The columns of each part: all of them when they fit in `width`; else the key columns, then
// as many of the others as fit, part after part (at least one each, so a part may overflow
// only when the key columns alone nearly fill the line).
std::vector<std::vector<std::size_t>> split_columns(std::size_t n_key_columns, const std::vector<std::size_t>& widths,
                                                    std::size_t width) {
    std::vector<std::size_t> all(widths.size());
    std::iota(all.begin(), all.end(), std::size_t{0});
    if (line_width(all, widths) <= width) return {all};
    const std::vector<std::size_t> keys(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n_key_columns));
    std::vector<std::vector<std::size_t>> parts{keys};
    for (std::size_t i = n_key_columns; i < all.size(); ++i) {
        const bool has_figures = parts.back().size() > keys.size();
        if (has_figures && line_width(parts.back(), widths) + margin + widths[i] > width) {
            parts.push_back(keys);
        }
        parts.back().push_back(i);
    }
    return parts;
}

}  // namespace

std::size_t display_width(std::string_view text) {
    return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
        return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    }));
}

std::string wrap_text(std::string_view text, std::size_t indent, std::size_t hanging_indent, std::size_t width) {
    std::string wrapped;
    for (const std::string& paragraph : split_lines(text)) {
        if (!wrapped.empty()) wrapped += '\n';
        std::string line(indent, ' ');
        bool line_has_word = false;
        std::size_t start = 0;
        while (start <= paragraph.size()) {
            std::size_t end = paragraph.find(' ', start);
            if (end == std::string::npos) end = paragraph.size();
            const std::string_view word = std::string_view(paragraph).substr(start, end - start);
            if (line_has_word && display_width(line) + 1 + display_width(word) > width) {
                wrapped += line + '\n';
                line = std::string(hanging_indent, ' ');
                line_has_word = false;
            }
            if (line_has_word) line += ' ';
            line += word;
            line_has_word = true;
            start = end + 1;
        }
        wrapped += line;
    }
    return wrapped;
}

void write_text_table(std::ostream& out, const SummaryTable& summary, std::size_t width) {
    const TextTable& table = summary.text;
    std::vector<std::vector<std::string>> header_lines;  // (header line, column)
    for (std::size_t i = 0; i < table.header.size(); ++i) {
        const std::vector<std::string> names = split_lines(table.header[i]);
        if (header_lines.size() < names.size()) {
            header_lines.resize(names.size(), std::vector<std::string>(table.header.size()));
        }
        for (std::size_t k = 0; k < names.size(); ++k) header_lines[k][i] = names[k];
    }
    std::vector<std::size_t> widths(table.header.size(), 0);
    for (const auto& cells : header_lines) {
        for (std::size_t i = 0; i < cells.size(); ++i) widths[i] = std::max(widths[i], display_width(cells[i]));
    }
    for (const auto& cells : table.lines) {
        for (std::size_t i = 0; i < cells.size(); ++i) widths[i] = std::max(widths[i], display_width(cells[i]));
    }
    std::vector<std::string> rules;
    for (const std::size_t column_width : widths) rules.emplace_back(column_width, '-');

    const std::vector<std::vector<std::size_t>> parts = split_columns(summary.n_key_columns, widths, width);
    for (std::size_t p = 0; p < parts.size(); ++p) {
        if (p > 0) out << '\n';
        // An untitled table (compare's) says "(continued)" alone, not after a space.
        if (p == 0) {
            out << table.title << '\n';
        } else {
            out << (table.title.empty() ? "(continued)" : table.title + " (continued)") << '\n';
        }
        if (p == 0 && !summary.caption.empty()) {
            out << wrap_text(summary.caption, note_indent, note_hanging_indent, width) << '\n';
        }
        for (const auto& cells : header_lines) {
            // A part whose columns have no unit line has no empty line under its names.
            if (std::any_of(parts[p].begin(), parts[p].end(), [&](std::size_t i) { return !cells[i].empty(); })) {
                write_cells(out, cells, parts[p], widths, table.align);
            }
        }
        write_cells(out, rules, parts[p], widths, table.align);
        for (const auto& cells : table.lines) write_cells(out, cells, parts[p], widths, table.align);
    }
    if (!table.footnote.empty()) out << wrap_text(table.footnote, note_indent, note_hanging_indent, width) << '\n';
}

void write_text_table(std::ostream& out, const TextTable& table, std::size_t width) {
    std::size_t n_key_columns = 0;
    for (std::size_t i = 0; i < table.align.size(); ++i) {
        if (table.align[i] == Align::left) n_key_columns = i + 1;
    }
    write_text_table(out, SummaryTable{table, {}, n_key_columns}, width);
}

void write_table(std::ostream& out, const std::vector<ResultRow>& rows, const Environment& env,
                 const TableOptions& options) {
    out << describe_run(rows, env, options.width) << '\n';
    out << wrap_text(axis_legend(), 0, description_indent, options.width) << '\n';
    for (const SummaryTable& table : summary_tables(rows, options)) {
        out << '\n';
        write_text_table(out, table, options.width);
    }
    if (const std::optional<SummaryTable> growth = growth_table(rows)) {
        out << '\n';
        write_text_table(out, *growth, options.width);
    }
    // Last, where the eye lands when the run ends.
    if (const Headline headline = make_headline(rows); !headline.empty()) {
        out << '\n';
        write_headline(out, headline, options.width);
    }
}

void write_table(std::ostream& out, const std::vector<ResultRow>& rows, const Environment& env) {
    write_table(out, rows, env, TableOptions{});
}

}  // namespace kvbench
