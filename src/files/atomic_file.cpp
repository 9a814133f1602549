// Complete-or-absent file writes: render in memory, write a temporary, fsync, rename, fsync the directory.
#include "kvbench/files/atomic_file.hpp"

#include "kvbench/files/file_descriptor.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

namespace kvbench {

namespace {

[[noreturn]] void fail(const std::filesystem::path& path, const std::filesystem::path& temp,
                       const std::string& reason) {
    std::error_code ignored;  // the original failure is the one worth reporting
    std::filesystem::remove(temp, ignored);
    throw std::runtime_error(fmt::format("cannot write {}: {}", path.string(), reason));
}

// Linux's own limit on the links one path name may follow (MAXSYMLINKS).
constexpr int max_symlinks_followed = 40;

}  // namespace

std::filesystem::path write_destination(const std::filesystem::path& path) {
    std::filesystem::path name = path;
    for (int followed = 0; followed <= max_symlinks_followed; ++followed) {
        std::error_code error;
        if (!std::filesystem::is_symlink(std::filesystem::symlink_status(name, error)) || error) return name;
        const std::filesystem::path target = std::filesystem::read_symlink(name, error);
        if (error) return name;
        name = target.is_absolute() ? target : name.parent_path() / target;
    }
    throw std::runtime_error("is a symlink loop (its links never reach a file)");
}

void write_file_atomically(const std::filesystem::path& path,
                           const std::function<void(std::ostream&)>& write) {
    // A rename over `path` itself would put a regular file in place of a link, and leave the
    // file it led to as it was.
    std::filesystem::path destination;
    try {
        destination = write_destination(path);
    } catch (const std::runtime_error& error) {
        throw std::runtime_error(fmt::format("cannot write {}: {}", path.string(), error.what()));
    }
    // The pid keeps two kvbench processes writing the same report from sharing a temporary.
    std::filesystem::path temp = destination;
    temp += fmt::format(".tmp-{}", ::getpid());

    // Rendered in memory first: a writer that throws leaves nothing on disk.
    std::ostringstream rendered;
    try {
        write(rendered);
    } catch (const std::exception& error) {
        fail(path, temp, error.what());
    }
    const std::string bytes = std::move(rendered).str();

    FileDescriptor file(::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666));
    if (file.get() < 0) fail(path, temp, std::strerror(errno));
    std::size_t written = 0;
    while (written < bytes.size()) {
        const ssize_t n = ::write(file.get(), bytes.data() + written, bytes.size() - written);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) fail(path, temp, n < 0 ? std::strerror(errno) : "write made no progress");
        written += static_cast<std::size_t>(n);
    }
    // The data reaches the disk before the rename makes it the file: after a crash or power
    // loss, `path` holds either the old report or the new one, never an empty file.
    if (::fsync(file.get()) != 0) fail(path, temp, std::strerror(errno));
    if (file.close() != 0) fail(path, temp, std::strerror(errno));

    std::error_code error;
    std::filesystem::rename(temp, destination, error);
    if (error) fail(path, temp, error.message());
    // And the rename itself reaches the disk: fsync the directory (best effort: some file
    // systems refuse to open a directory for it, and the file is complete either way).
    std::filesystem::path directory = destination.parent_path();
    if (directory.empty()) directory = ".";
    FileDescriptor dir(::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dir.get() >= 0) ::fsync(dir.get());
}

void append_to_file(const std::filesystem::path& path, const std::string& bytes) {
    // O_APPEND and one write per call: a reader following the file sees whole lines, and
    // a stop between two calls leaves every earlier line complete.
    FileDescriptor file(::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666));
    auto failed = [&](const char* reason) {
        return std::runtime_error(fmt::format("cannot append to {}: {}", path.string(), reason));
    };
    if (file.get() < 0) throw failed(std::strerror(errno));
    std::size_t written = 0;
    while (written < bytes.size()) {
        const ssize_t n = ::write(file.get(), bytes.data() + written, bytes.size() - written);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw failed(n < 0 ? std::strerror(errno) : "write made no progress");
        written += static_cast<std::size_t>(n);
    }
    if (::fsync(file.get()) != 0) throw failed(std::strerror(errno));
    if (file.close() != 0) throw failed(std::strerror(errno));
}

}  // namespace kvbench
