// A fresh empty directory under the system's temporary directory, removed when the test ends.
#pragma once

#include <fmt/format.h>

#include <filesystem>
#include <iterator>
#include <string_view>
#include <system_error>

#include <unistd.h>

namespace kvbench::test {

struct ScratchDir {
    std::filesystem::path path;
    // `tag` names the test file, so concurrent test binaries never share a directory.
    explicit ScratchDir(std::string_view tag) {
        static int counter = 0;
        path = std::filesystem::temp_directory_path() /
               fmt::format("kvbench_test_{}_{}_{}", tag, ::getpid(), counter++);
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    ~ScratchDir() {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;
    std::size_t n_entries() const {
        return static_cast<std::size_t>(std::distance(std::filesystem::directory_iterator(path),
                                                      std::filesystem::directory_iterator()));
    }
};

}  // namespace kvbench::test
