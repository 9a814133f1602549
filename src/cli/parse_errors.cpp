// Each kind of CLI11 parse error kvbench can meet, reworded. The option names are read back
// from CLI11's messages ("--seq: 1 required LIST missing"), which all start with the name.
#include "cli/parse_errors.hpp"

#include "cli/suggest.hpp"
#include "cli/value_list.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <regex>
#include <vector>

namespace kvbench {

namespace {

// The last subcommand parsed: the one whose options were being read.
const CLI::App& parsing_command(const CLI::App& app) {
    const CLI::App* command = &app;
    while (!command->get_subcommands().empty()) command = command->get_subcommands().front();
    return *command;
}

std::vector<std::string> option_names(const CLI::App& command) {
    std::vector<std::string> names;
    for (const CLI::Option* option : command.get_options()) {
        for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
        for (const std::string& name : option->get_snames()) names.push_back("-" + name);
    }
    return names;
}

std::string command_path(const CLI::App& command) {
    return command.get_parent() == nullptr ? "kvbench" : "kvbench " + command.get_name();
}

std::string describe_extra(const CLI::App& app, const CLI::App& command, const std::string& extra) {
    if (extra.size() > 1 && extra.front() == '-') {
        const std::string typed = extra.substr(0, extra.find('='));
        // After the command: kvbench sweep --version. Top-level options come before it,
        // and an exact top-level name beats a near one of the command's (-V is not -v).
        if (&command != &app) {
            const std::vector<std::string> top_level = option_names(app);
            if (std::find(top_level.begin(), top_level.end(), typed) != top_level.end()) {
                return fmt::format("unknown option '{}' (did you mean kvbench {}?)", typed, typed);
            }
        }
        const std::optional<std::string> hint =
            suggest_option(typed, command.get_parent() == nullptr ? "" : command.get_name(), option_names(command));
        if (hint) return fmt::format("unknown option '{}' (did you mean {}?)", typed, *hint);
        // Before the command: kvbench --seq 16 sweep. Options follow the command they belong to.
        if (&command == &app) {
            for (const CLI::App* sub : app.get_subcommands({})) {
                const std::vector<std::string> names = option_names(*sub);
                if (std::find(names.begin(), names.end(), typed) != names.end()) {
                    return fmt::format("unknown option '{}' (did you mean kvbench {} {}?)", typed, sub->get_name(),
                                       typed);
                }
            }
        }
        return fmt::format("unknown option '{}' for {}", typed, command_path(command));
    }
    if (&command == &app) {
        std::vector<std::string> commands;
        for (const CLI::App* sub : app.get_subcommands({})) commands.push_back(sub->get_name());
        if (const std::optional<std::string> hint = suggest_command(extra, commands)) {
            return fmt::format("unknown command '{}' (did you mean {}?)", extra, *hint);
        }
        std::string listed;
        for (const std::string& name : commands) listed += (listed.empty() ? "" : ", ") + name;
        return fmt::format("unknown command '{}' (the commands are {})", extra, listed);
    }
    for (const CLI::App* sub : app.get_subcommands({})) {
        if (sub->get_name() == extra) {
            return fmt::format("unexpected command '{}' after '{}': kvbench runs one command at a time", extra,
                               command.get_name());
        }
    }
    return fmt::format("unexpected argument '{}': an option takes one value (write a list as -n 128,256 "
                       "or -n 128 -n 256)",
                       extra);
}

}  // namespace

std::string describe_parse_error(const CLI::App& app, const CLI::ParseError& error) {
    const CLI::App& command = parsing_command(app);
    const std::string message = error.what();
    std::smatch match;
    if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) {
        const std::vector<std::string> extras = command.remaining();
        if (!extras.empty()) return describe_extra(app, command, extras.front());
    }
    if (dynamic_cast<const CLI::ArgumentMismatch*>(&error) != nullptr) {
        if (std::regex_match(message, match, std::regex(R"(([^:]+): \d+ required .* missing)"))) {
            return fmt::format("{} needs a value", match[1].str());
        }
        if (std::regex_match(message, match, std::regex(R"(([^:]+): At Most \d+ required but received \d+)"))) {
            return fmt::format("{} was given more than once (give it once)", match[1].str());
        }
    }
    if (dynamic_cast<const CLI::ExcludesError*>(&error) != nullptr &&
        std::regex_match(message, match, std::regex(R"((\S+) excludes (\S+))"))) {
        return fmt::format("{} excludes {}: give one or the other", match[1].str(), match[2].str());
    }
    if (dynamic_cast<const CLI::ConversionError*>(&error) != nullptr &&
        std::regex_match(message, match, std::regex(R"(([^:]+): (too many inputs for a flag|Should be true/false.*))"))) {
        return fmt::format("{} is a flag and takes no value", match[1].str());
    }
    if (dynamic_cast<const CLI::ConversionError*>(&error) != nullptr &&
        std::regex_match(message, match, std::regex(R"(Could not convert: (\S+) = (.*))"))) {
        return fmt::format("{} is a flag: give it alone, without \"={}\"", match[1].str(), match[2].str());
    }
    if (dynamic_cast<const CLI::ValidationError*>(&error) != nullptr) {
        if (std::regex_match(message, match, std::regex(R"(([^:]+): (.*) not in \{(.*)\})"))) {
            std::vector<std::string> choices;
            const std::string listed = match[3].str();
            for (std::size_t start = 0, comma = 0; comma != std::string::npos; start = comma + 1) {
                comma = listed.find(',', start);
                choices.push_back(listed.substr(start, comma - start));
            }
            return not_a_choice_message(match[2].str(), match[1].str(), choices);
        }
        if (std::regex_match(message, match, std::regex(R"(([^:]+): Value (.*) not in range (\S+) to (\S+))"))) {
            return fmt::format("{}: \"{}\" must be from {} to {}", match[1].str(), match[2].str(), match[3].str(),
                               match[4].str());
        }
    }
    return message;
}

std::string without_library_tags(std::string message) {
    static const std::regex tag(R"(\[json\.exception\.[a-z_]+\.[0-9]+\] )");
    return std::regex_replace(message, tag, "");
}

}  // namespace kvbench
