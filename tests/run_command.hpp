// Runs a shell command for the tests that read the real binary's output.
#pragma once

#include <doctest/doctest.h>

#include <cstdio>
#include <memory>
#include <string>

namespace kvbench::test {

// The command's whole standard output.
inline std::string run_and_capture(const std::string& command) {
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
    REQUIRE(pipe != nullptr);
    std::string output;
    char buffer[4096];
    while (const std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe.get())) output.append(buffer, n);
    return output;
}

}  // namespace kvbench::test
