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

// The words `command` takes after its name (kvbench help COMMAND, kvbench compare BASE NEW), as
// its help names them; none for most commands.
std::vector<std::string> positional_words(const CLI::App& command) {
    std::vector<std::string> words;
    for (const CLI::Option* option : command.get_options()) {
        if (!option->get_positional()) continue;
        std::string word = option->get_name(true);
        for (char& c : word) c = c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
        words.push_back(word);
    }
    return words;
}

// Whether the first word `command` had no place for follows an option's value (-n 128 256),
// reading `args` (argv less the program) as CLI11 does: an option takes one word (none when
// written --seq=128 or -n128), a flag none, and the command's positional words fill first.
bool follows_option_value(const CLI::App& command, const std::vector<std::string>& args) {
    const auto command_at = std::find(args.begin(), args.end(), command.get_name());
    if (command_at == args.end()) return false;
    std::size_t free_slots = 0;
    for (const CLI::Option* option : command.get_options()) {
        if (option->get_positional()) free_slots += static_cast<std::size_t>(option->get_items_expected_max());
    }
    bool after_value = false;
    bool value_next = false;
    for (auto word = std::next(command_at); word != args.end(); ++word) {
        if (value_next) {
            value_next = false;
            after_value = true;
            continue;
        }
        if (word->size() > 1 && word->front() == '-') {
            const bool long_name = (*word)[1] == '-';
            const std::string name = long_name ? word->substr(0, word->find('=')) : word->substr(0, 2);
            const CLI::Option* option = command.get_option_no_throw(name);
            const bool takes_value = option != nullptr && option->get_items_expected_max() != 0;
            const bool value_attached = long_name ? name.size() < word->size() : word->size() > 2;
            value_next = takes_value && !value_attached;
            after_value = takes_value && value_attached;
            // compare's --base fills BASE: a positional word given by its option's name
            if (option != nullptr && option->get_positional() && free_slots > 0) --free_slots;
            continue;
        }
        if (free_slots > 0) {
            --free_slots;
            after_value = false;
            continue;
        }
        return after_value;
    }
    return false;
}

std::string describe_extra(const CLI::App& app, const CLI::App& command, const std::string& extra,
                           const std::vector<std::string>& args) {
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
    if (follows_option_value(command, args)) {
        return fmt::format("unexpected argument '{}': an option takes one value (write a list as -n 128,256 "
                           "or -n 128 -n 256)",
                           extra);
    }
    const std::vector<std::string> words = positional_words(command);
    if (words.empty()) return fmt::format("{} takes no word after the command: \"{}\"", command_path(command), extra);
    std::string listed;
    for (const std::string& word : words) listed += (listed.empty() ? "" : " ") + word;
    const std::string count = words.size() == 1 ? "one word" : words.size() == 2 ? "two words"
                                                                                 : fmt::format("{} words", words.size());
    return fmt::format("{} takes {} after the command ({}): \"{}\" is one too many", command_path(command), count,
                       listed, extra);
}

}  // namespace

std::string describe_parse_error(const CLI::App& app, const CLI::ParseError& error,
                                 const std::vector<std::string>& args) {
    const CLI::App& command = parsing_command(app);
    const std::string message = error.what();
    std::smatch match;
    if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) {
        const std::vector<std::string> extras = command.remaining();
        if (!extras.empty()) return describe_extra(app, command, extras.front(), args);
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
