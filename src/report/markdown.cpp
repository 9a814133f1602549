// The Markdown writer: the run description as a paragraph, GitHub pipe tables, then the headline as a list.
#include "kvbench/report/growth_table.hpp"
#include "kvbench/report/headline.hpp"
#include "kvbench/report/markdown_cells.hpp"
#include "kvbench/report/report.hpp"
#include "kvbench/report/summary_tables.hpp"
#include "kvbench/report/units.hpp"

#include <fmt/format.h>

#include <optional>

#include <string_view>

namespace kvbench {

namespace {

// Each line a paragraph of its own.
void write_paragraphs(std::ostream& out, std::string_view text) {
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        out << '\n' << escape_markdown(text.substr(start, end - start)) << '\n';
        start = end + 1;
    }
}

}  // namespace

void write_markdown(std::ostream& out, const std::vector<ResultRow>& rows, const Environment& env,
                    const TableOptions& options) {
    // A trailing backslash breaks the line without starting a paragraph.
    const std::vector<std::string> description = run_description_lines(rows, env);
    for (const std::string& line : description) out << escape_markdown(line) << "\\\n";
    out << escape_markdown(axis_legend()) << '\n';
    std::vector<SummaryTable> tables = summary_tables(rows, options);
    if (std::optional<SummaryTable> growth = growth_table(rows)) tables.push_back(std::move(*growth));
    for (const SummaryTable& summary : tables) {
        const TextTable& table = summary.text;
        out << "\n### " << table.title << '\n';
        if (!summary.caption.empty()) write_paragraphs(out, summary.caption);
        out << '\n';
        std::vector<std::string> header;
        for (const std::string& name : table.header) header.push_back(markdown_header_cell(name));
        write_pipe_row(out, header);
        out << '|';
        for (const Align align : table.align) out << (align == Align::right ? " ---: |" : " --- |");
        out << '\n';
        for (const auto& cells : table.lines) write_pipe_row(out, cells);
        if (!table.footnote.empty()) write_paragraphs(out, table.footnote);
    }
    if (const Headline headline = make_headline(rows); !headline.empty()) {
        out << "\n### Headline\n\n";
        if (headline.n_slow_left_out > 0) {
            out << escape_markdown(fmt::format("Medians of this run; {} marked ? (slow) left out.",
                                               format_count(headline.n_slow_left_out, "row")))
                << "\n\n";
        }
        for (const std::string& sentence : headline.sentences) out << "- " << escape_markdown(sentence) << '\n';
    }
}

void write_markdown(std::ostream& out, const std::vector<ResultRow>& rows, const Environment& env) {
    write_markdown(out, rows, env, TableOptions{});
}

}  // namespace kvbench
