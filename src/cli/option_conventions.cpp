// Shared option conventions; see option_conventions.hpp for the rules and docs/measuring.md
// for why the thread count follows OMP_NUM_THREADS.
#include "cli/option_conventions.hpp"

#include "cli/omp_environment.hpp"
#include "cli/value_list.hpp"
#include "kvbench/engine/blas.hpp"
#include "kvbench/engine/config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <string_view>
#include <vector>

namespace kvbench {

namespace {

// One value per occurrence (a second word after -n is an extra argument, not a value), all
// occurrences joined with ',' for parse_value_list.
CLI::Option* add_list(CLI::App& command, const std::string& names, std::function<void(std::string)> store,
                      const std::string& description) {
    CLI::Option* option = command.add_option_function<std::vector<std::string>>(
        names,
        [store = std::move(store)](const std::vector<std::string>& values) {
            std::string joined;
            for (const std::string& value : values) joined += (joined.empty() ? "" : ",") + value;
            store(joined);
        },
        description);
    option->allow_extra_args(false)->type_name("LIST");
    return option;
}

}  // namespace

CLI::Option* list_option(CLI::App& command, const std::string& names, std::string& target,
                         const std::string& description) {
    return add_list(command, names, [&target](std::string text) { target = std::move(text); }, description)
        ->default_str(target);
}

CLI::Option* list_option(CLI::App& command, const std::string& names, std::optional<std::string>& target,
                         const std::string& description) {
    return add_list(command, names, [&target](std::string text) { target = std::move(text); }, description);
}

DecodePaths parse_paths(std::string_view text, std::string_view option) {
    if (text.empty()) throw ConfigError(fmt::format("{}: the list is empty (use cached, uncached or both)", option));
    DecodePaths paths;
    std::size_t begin = 0;
    while (true) {
        const std::size_t comma = text.find(',', begin);
        const std::string_view item = text.substr(begin, comma == std::string_view::npos ? comma : comma - begin);
        const std::string word = parse_choice(item, option, {"cached", "uncached", "both"});
        paths.cached = paths.cached || word != "uncached";
        paths.uncached = paths.uncached || word != "cached";
        if (comma == std::string_view::npos) break;
        begin = comma + 1;
    }
    return paths;
}

std::size_t default_thread_count() {
    const char* omp = omp_num_threads_at_start();
    if (omp == nullptr || *omp == '\0') return available_cores();
    const std::string_view text(omp);
    // The first count is this level's, blanks around it allowed, as libgomp reads the list.
    std::string_view first = text.substr(0, text.find(','));
    first.remove_prefix(std::min(first.find_first_not_of(" \t"), first.size()));
    first.remove_suffix(first.size() - std::min(first.find_last_not_of(" \t") + 1, first.size()));
    try {
        return static_cast<std::size_t>(parse_whole_number(first, "OMP_NUM_THREADS", 1, 1024));
    } catch (const ConfigError& error) {
        throw ConfigError(fmt::format("{} (the default of --threads; unset it or give -t)", error.what()));
    }
}

std::string plural(std::size_t count, std::string_view noun) {
    return fmt::format("{} {}{}", count, noun, count == 1 ? "" : "s");
}

}  // namespace kvbench
