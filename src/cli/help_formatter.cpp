// Two columns, as CLI11 prints them, with the description wrapped to fit 80 columns.
#include "cli/help_formatter.hpp"

#include <sstream>

namespace kvbench {

namespace {

constexpr std::size_t name_column = 26;  // "  -g,--kv-heads LIST" and a gap

// Two columns: the name, then the description wrapped beside it (or below a long name).
std::string two_columns(const std::string& name, const std::string& description) {
    std::string out = "  " + name;
    if (description.empty()) return out + "\n";
    if (out.size() + 2 > name_column) {
        out += "\n" + std::string(name_column, ' ');
    } else {
        out += std::string(name_column - out.size(), ' ');
    }
    return out + wrap_text(description, help_width - name_column, name_column) + "\n";
}

}  // namespace

std::string wrap_text(const std::string& text, std::size_t width, std::size_t indent) {
    std::string out;
    std::istringstream lines(text);
    std::string line;
    bool first_line = true;
    while (std::getline(lines, line)) {
        if (!first_line) out += "\n" + std::string(indent, ' ');
        first_line = false;
        std::istringstream words(line);
        std::string word;
        std::size_t column = 0;
        while (words >> word) {
            if (column > 0 && column + 1 + word.size() > width) {
                out += "\n" + std::string(indent, ' ');
                column = 0;
            } else if (column > 0) {
                out += ' ';
                ++column;
            }
            out += word;
            column += word.size();
        }
    }
    return out;
}

HelpFormatter::HelpFormatter() { column_width(name_column); }

std::string HelpFormatter::make_option(const CLI::Option* option, bool is_positional) const {
    std::string description = make_option_desc(option);
    const std::string& default_value = option->get_default_str();
    // A flag has no value name, and no default worth showing.
    const bool takes_value = !option->get_type_name().empty();
    if (takes_value && !default_value.empty() && description.find("default") == std::string::npos) {
        description += " (default " + default_value + ")";
    }
    return two_columns(make_option_name(option, is_positional) + make_option_opts(option), description);
}

// Only the value's name: the default goes into the description, and the type, range and
// excludes notes are CLI11's, not the user's.
std::string HelpFormatter::make_option_opts(const CLI::Option* option) const {
    std::string name = option->get_type_name();
    name = name.substr(0, name.find(':'));  // "TEXT:{table,csv}": the choices are in the description
    if (name == "TEXT") name = "VALUE";
    if (name == "UINT" || name == "INT") name = "N";
    if (name == "FLOAT") name = "NUMBER";
    return name.empty() ? "" : " " + name;
}

std::string HelpFormatter::make_subcommand(const CLI::App* command) const {
    return two_columns(command->get_display_name(true), command->get_description());
}

std::string HelpFormatter::make_description(const CLI::App* command) const {
    const std::string& description = command->get_description();
    return description.empty() ? std::string() : wrap_text(description, help_width, 0) + "\n";
}

}  // namespace kvbench
