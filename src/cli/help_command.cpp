// `kvbench help sweep` is `kvbench sweep --help`, as git and cargo have it.
#include "cli/help_command.hpp"

#include "cli/exit_status.hpp"
#include "cli/suggest.hpp"
#include "kvbench/engine/config.hpp"

#include <fmt/format.h>

#include <vector>

namespace kvbench {

CLI::App* add_help_command(CLI::App& app, std::string& topic) {
    CLI::App* help = app.add_subcommand("help", "Show the help of kvbench or of one command (kvbench help sweep)");
    help->add_option("command", topic, "The command whose help to show")->type_name("COMMAND");
    help->footer("Exit status: 0 ok; 2 no such command.");
    return help;
}

int run_help_command(const CLI::App& app, const std::string& topic) {
    // App::help() would show the selected command's help, which is `help` itself.
    if (topic.empty()) {
        fmt::print("{}", app.get_formatter()->make_help(&app, app.get_name(), CLI::AppFormatMode::Normal));
        return exit_ok;
    }
    std::vector<std::string> names;
    for (const CLI::App* command : app.get_subcommands({})) {
        if (command->get_name() == topic) {
            fmt::print("{}", command->help(app.get_name()));
            return exit_ok;
        }
        names.push_back(command->get_name());
    }
    const std::optional<std::string> hint = suggest_command(topic, names);
    throw ConfigError(fmt::format("help {}: no such command{}; `kvbench --help` lists them", topic,
                                  hint ? fmt::format(" (did you mean {}?)", *hint) : ""));
}

}  // namespace kvbench
