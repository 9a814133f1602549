// The cells of a GitHub pipe table, shared by the results' Markdown writer and the planners' sheets.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace kvbench {

// Text that GitHub renders as written: '|' would end a cell, '*' and '_' start emphasis,
// '<' a tag, '[' a link; and a leading "* ", "- ", "+ ", "# " or "> " makes a bullet, a
// heading or a quote (the footnotes start with their marks).
std::string escape_markdown(std::string_view text);

// A header cell's lines on one line: "median\nms" reads "median ms", "uncached/\ncached"
// "uncached/cached". A pipe table's row is one line; a '\n' would end the table.
std::string markdown_header_cell(std::string_view name);

// One row of a pipe table, each cell escaped.
void write_pipe_row(std::ostream& out, const std::vector<std::string>& cells);

}  // namespace kvbench
