// `kvbench generate`: a whole generation per configuration, step by step, on both paths.
#pragma once

#include "cli/generate_options.hpp"

namespace kvbench {

// Exit status: 0 done, 1 a --verify failure, 130 interrupted (finished steps written).
// Throws ConfigError for bad input and std::runtime_error for failures to run or write.
int run_generate_command(const GenerateCliOptions& options);

}  // namespace kvbench
