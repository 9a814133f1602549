// --help in kvbench's words: at most 80 columns, option values named in words (LIST, N, FILE,
// cold|warm), the default in the description, and none of CLI11's type or constraint notes.
#pragma once

#include <CLI/CLI.hpp>

#include <cstddef>
#include <string>

namespace kvbench {

inline constexpr std::size_t help_width = 80;

class HelpFormatter : public CLI::Formatter {
public:
    HelpFormatter();
    std::string make_option(const CLI::Option* option, bool is_positional) const override;
    std::string make_option_opts(const CLI::Option* option) const override;
    std::string make_subcommand(const CLI::App* command) const override;
    std::string make_description(const CLI::App* command) const override;
};

// `text` wrapped at word boundaries to lines of at most `width` columns, each line after the
// first indented by `indent` spaces. Existing line breaks are kept.
std::string wrap_text(const std::string& text, std::size_t width, std::size_t indent);

}  // namespace kvbench
