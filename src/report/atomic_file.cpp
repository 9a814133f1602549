// Complete-or-absent file writes: temporary file, flush, close, rename.
#include "kvbench/report/atomic_file.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>

#include <unistd.h>

namespace kvbench {

namespace {

[[noreturn]] void fail(const std::filesystem::path& path, const std::filesystem::path& temp,
                       const std::string& reason) {
    std::error_code ignored;  // the original failure is the one worth reporting
    std::filesystem::remove(temp, ignored);
    throw std::runtime_error(fmt::format("cannot write {}: {}", path.string(), reason));
}

}  // namespace

void write_file_atomically(const std::filesystem::path& path,
                           const std::function<void(std::ostream&)>& write) {
    // The pid keeps two kvbench processes writing the same report from sharing a temporary.
    std::filesystem::path temp = path;
    temp += fmt::format(".tmp-{}", ::getpid());

    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out.is_open()) fail(path, temp, std::strerror(errno));
    try {
        write(out);
    } catch (const std::exception& error) {
        out.close();
        fail(path, temp, error.what());
    } catch (...) {
        out.close();
        fail(path, temp, "unknown error while writing");
    }
    out.flush();
    if (!out) fail(path, temp, "write failed (disk full?)");
    out.close();
    if (!out) fail(path, temp, std::strerror(errno));

    std::error_code error;
    std::filesystem::rename(temp, path, error);
    if (error) fail(path, temp, error.message());
}

}  // namespace kvbench
