// How fast this machine reads a file from a storage tier, for recompute-or-reload: the file's
// bytes over the time to read them, past the page cache (docs/planning.md, "Recompute or reload").
#pragma once

#include <cstdint>
#include <string>

namespace kvbench {

struct FileReadProbe {
    std::uint64_t bytes = 0;  // read, timed
    double seconds = 0;
    // How the page cache was kept out: "O_DIRECT", or "posix_fadvise(DONTNEED)" where the file
    // system refuses O_DIRECT (the kernel may then still keep some pages; the rate is an upper
    // bound).
    std::string method;

    double bytes_per_s() const { return static_cast<double>(bytes) / seconds; }
};

// Reads up to max_bytes of `path` once and times it. A directory gets a new file of max_bytes
// (rounded up to 4 KiB) written, synced, read and removed; a regular file is read from its
// start. Throws std::system_error (errno and the path) when it cannot create, write or read,
// std::invalid_argument when `path` is neither a directory nor a regular file or is empty,
// std::length_error, before writing, when a directory's file of max_bytes would not fit in its
// free space.
// Requires: max_bytes >= 1.
FileReadProbe probe_read_bandwidth(const std::string& path, std::uint64_t max_bytes);

}  // namespace kvbench
