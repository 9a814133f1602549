// Timing one read of a file past the page cache: O_DIRECT where the file system takes it, else
// buffered after posix_fadvise(DONTNEED).
#include "kvbench/measure/file_bandwidth.hpp"

#include "kvbench/engine/page_aligned.hpp"
#include "kvbench/engine/rng.hpp"
#include "kvbench/files/file_descriptor.hpp"
#include "kvbench/files/input_file.hpp"
#include "kvbench/measure/clock.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <system_error>

namespace kvbench {

namespace {

// O_DIRECT wants the buffer, the offsets and the lengths aligned to the device's logical block;
// 4 KiB covers every common one. Reads of 8 MiB keep the system-call count out of the time.
constexpr std::size_t direct_alignment = 4096;
constexpr std::size_t chunk_bytes = std::size_t{8} << 20;

[[noreturn]] void throw_errno(const std::string& what, const std::string& path) {
    throw std::system_error(errno, std::generic_category(), what + " " + path);
}

// The probe file a directory gets, removed however the probe ends.
class ScratchFile {
public:
    explicit ScratchFile(std::string path) : path_(std::move(path)) {}
    ScratchFile(const ScratchFile&) = delete;
    ScratchFile& operator=(const ScratchFile&) = delete;
    ~ScratchFile() { ::unlink(path_.c_str()); }
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

struct AlignedBuffer {
    explicit AlignedBuffer(std::size_t n_bytes) : bytes(n_bytes), data(static_cast<char*>(allocate_page_aligned(n_bytes))) {}
    AlignedBuffer(const AlignedBuffer&) = delete;
    AlignedBuffer& operator=(const AlignedBuffer&) = delete;
    ~AlignedBuffer() { free_page_aligned(data, bytes); }
    std::size_t bytes;
    char* data;
};

// Random bytes, so that a compressing or deduplicating file system stores them whole.
void write_probe_file(const std::string& path, std::uint64_t n_bytes, AlignedBuffer& buffer) {
    const FileDescriptor fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    if (fd.get() < 0) throw_errno("cannot create", path);
    Rng rng(0x5eed);
    auto* words = reinterpret_cast<std::uint64_t*>(buffer.data);
    for (std::size_t i = 0; i < buffer.bytes / sizeof(std::uint64_t); ++i) words[i] = rng.next_u64();
    for (std::uint64_t written = 0; written < n_bytes;) {
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(buffer.bytes, n_bytes - written));
        const ssize_t done = ::write(fd.get(), buffer.data, n);
        if (done < 0) {
            if (errno == EINTR) continue;
            throw_errno("cannot write", path);
        }
        written += static_cast<std::uint64_t>(done);
        words[0] ^= written;  // no two chunks alike
    }
    // Dirty pages cannot be dropped: they reach the disk first.
    if (::fsync(fd.get()) != 0) throw_errno("cannot sync", path);
}

// Reads up to max_bytes of fd into buffer, in chunks; returns the bytes read, or nothing when
// the first read refuses the request (EINVAL: O_DIRECT not supported for this file).
std::optional<std::uint64_t> read_all(int fd, std::uint64_t max_bytes, AlignedBuffer& buffer, const std::string& path) {
    std::uint64_t total = 0;
    while (total < max_bytes) {
        const std::uint64_t left = max_bytes - total;
        // O_DIRECT lengths stay whole blocks; the file's end may still return a short read.
        const std::size_t n = static_cast<std::size_t>(
            std::min<std::uint64_t>(buffer.bytes, (left + direct_alignment - 1) / direct_alignment * direct_alignment));
        const ssize_t done = ::read(fd, buffer.data, n);
        if (done < 0) {
            if (errno == EINTR) continue;
            if (errno == EINVAL && total == 0) return std::nullopt;
            throw_errno("cannot read", path);
        }
        if (done == 0) break;
        total += static_cast<std::uint64_t>(done);
    }
    return std::min(total, max_bytes);
}

FileReadProbe time_read(const std::string& path, std::uint64_t max_bytes, AlignedBuffer& buffer) {
    FileReadProbe probe;
    {
        const FileDescriptor direct(::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC));
        if (direct.get() >= 0) {
            const std::int64_t start_ns = steady_now_ns();
            if (const std::optional<std::uint64_t> n = read_all(direct.get(), max_bytes, buffer, path)) {
                probe.seconds = static_cast<double>(steady_now_ns() - start_ns) * 1e-9;
                probe.bytes = *n;
                probe.method = "O_DIRECT";
                return probe;
            }
        } else if (errno != EINVAL) {
            throw_errno("cannot open", path);
        }
    }
    const FileDescriptor buffered(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (buffered.get() < 0) throw_errno("cannot open", path);
    ::posix_fadvise(buffered.get(), 0, 0, POSIX_FADV_DONTNEED);
    const std::int64_t start_ns = steady_now_ns();
    probe.bytes = read_all(buffered.get(), max_bytes, buffer, path).value_or(0);
    probe.seconds = static_cast<double>(steady_now_ns() - start_ns) * 1e-9;
    probe.method = "posix_fadvise(DONTNEED)";
    return probe;
}

}  // namespace

FileReadProbe probe_read_bandwidth(const std::string& path, std::uint64_t max_bytes) {
    namespace fs = std::filesystem;
    std::error_code error;
    const fs::file_status status = fs::status(path, error);
    AlignedBuffer buffer(chunk_bytes);
    FileReadProbe probe;
    if (fs::is_directory(status)) {
        // The probe file is written whole before it is read: it must fit where it is written.
        const fs::space_info space = fs::space(path, error);
        if (max_bytes > std::numeric_limits<std::uint64_t>::max() - direct_alignment ||
            (!error && max_bytes + direct_alignment > space.available)) {
            throw std::length_error(fmt::format("a probe file of {} bytes does not fit in {}: {} bytes are free there",
                                                max_bytes, path, error ? 0 : space.available));
        }
        const std::uint64_t n_bytes = (max_bytes + direct_alignment - 1) / direct_alignment * direct_alignment;
        const ScratchFile scratch((fs::path(path) / ("kvbench-tier-probe-" + std::to_string(::getpid()) + ".bin")).string());
        write_probe_file(scratch.path(), n_bytes, buffer);
        probe = time_read(scratch.path(), n_bytes, buffer);
    } else if (fs::is_regular_file(status)) {
        probe = time_read(path, max_bytes, buffer);
    } else {
        // Neither of the two it probes: say what it is instead (missing, a FIFO, a symlink loop).
        throw std::invalid_argument(path + ": " +
                                    input_file_problem(path).value_or("neither a directory nor a regular file"));
    }
    if (probe.bytes == 0) throw std::invalid_argument(path + ": the file is empty");
    if (!(probe.seconds > 0)) probe.seconds = 1e-9;  // a clock tick below the read: the rate is a bound
    return probe;
}

}  // namespace kvbench
