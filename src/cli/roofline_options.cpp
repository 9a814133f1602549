// The roofline options' registration, with their exclusions, for every command that times.
#include "cli/roofline_options.hpp"

namespace kvbench {

void add_roofline_options(CLI::App& command, std::optional<std::string>& file, bool& measure, bool& none,
                          const std::string& without_file, const std::string& none_turns_off) {
    command.add_option("--roofline", file, "Roofline JSON from `kvbench roofline` (default: " + without_file + ")")
        ->type_name("FILE");
    command
        .add_flag("--measure-roofline", measure,
                  "Measure the roofline first (a few seconds per thread count) and save it: "
                  "on a shared machine, bandwidth drifts")
        ->excludes("--roofline");
    command
        .add_flag("--no-roofline", none,
                  "Run without a roofline: " + none_turns_off)
        ->excludes("--roofline")
        ->excludes("--measure-roofline");
}

}  // namespace kvbench
