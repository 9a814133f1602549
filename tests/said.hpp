// What a run said, collected instead of printed, for tests of the parts that warn or fail
// through RunMessages.
#pragma once

#include "kvbench/measure/run_context.hpp"

#include <string>
#include <vector>

namespace kvbench::test {

struct Said {
    std::vector<std::string> warnings;
    std::vector<std::string> errors;

    RunMessages messages() {
        RunMessages messages;
        messages.warn = [this](const std::string& line) { warnings.push_back(line); };
        messages.error = [this](const std::string& line) { errors.push_back(line); };
        return messages;
    }
};

}  // namespace kvbench::test
