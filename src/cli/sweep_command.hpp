// `kvbench sweep`: plan, check memory, measure every point, report.
#pragma once

#include "cli/sweep_options.hpp"

namespace kvbench {

// Exit status: 0 done, 1 a --verify failure, 130 interrupted (finished points written).
// Throws ConfigError for bad input and std::runtime_error for failures to run or write.
int run_sweep_command(const SweepCliOptions& options);

}  // namespace kvbench
