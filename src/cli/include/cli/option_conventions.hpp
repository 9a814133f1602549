// The conventions every kvbench command shares: list axes that repeat and concatenate, the
// decode paths, the default thread count (OMP_NUM_THREADS), and English plurals in messages.
#pragma once

#include <CLI/CLI.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace kvbench {

// Registers a list axis as llama-bench has them: each occurrence takes one value, itself a
// list ("1,4,16", "128-4096*2"), and repeated occurrences concatenate ("-n 128 -n 256" is
// "-n 128,256"). The text stays raw for parse_value_list, so its errors are kvbench's; `target`
// keeps its default when the option is absent, which --help shows.
CLI::Option* list_option(CLI::App& command, const std::string& names, std::string& target,
                         const std::string& description);
// The same, for an axis whose default is computed when it is absent (unset then).
CLI::Option* list_option(CLI::App& command, const std::string& names, std::optional<std::string>& target,
                         const std::string& description);

// The decode paths a --paths list names: cached, uncached or both, in any case, repeatable.
struct DecodePaths {
    bool cached = false;
    bool uncached = false;
};
// Throws ConfigError naming `option` on an empty list or an unknown word.
DecodePaths parse_paths(std::string_view text, std::string_view option);

// The thread count used when -t is absent: OMP_NUM_THREADS when it is set (its first value, as
// OpenMP reads "4,2"), else every core this process may run on. Throws ConfigError naming the
// variable when it is set to something other than a whole number from 1 to 1024.
std::size_t default_thread_count();

// "1 point", "2 points", "0 threads": `count` and `noun`, with an "s" unless count is 1.
// Requires: `noun` takes a plain "s" plural.
std::string plural(std::size_t count, std::string_view noun);

}  // namespace kvbench
