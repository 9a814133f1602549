// `kvbench sweep`: plan, check memory, measure every point, report.
#pragma once

#include "cli/sweep_options.hpp"

namespace kvbench {

// Exit status: 0 done; 1 when a point failed (an error, a --verify mismatch), the others
// measured and written; 128 + the signal (130 for Ctrl-C) when stopped, finished points written.
// Throws ConfigError for bad input and std::runtime_error for failures to run or write.
int run_sweep_command(const SweepCliOptions& options);

}  // namespace kvbench
