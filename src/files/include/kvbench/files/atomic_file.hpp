// Writes a file all at once (into a temporary beside it, fsynced, then renamed over it), or appends whole lines.
#pragma once

#include <filesystem>
#include <functional>
#include <ostream>
#include <string>

namespace kvbench {

// The file a write to `path` replaces: `path` after its symlinks, as a shell's `>` writes, so
// `-o latest.csv` linked to a dated report updates that report and keeps the link. A link that
// leads nowhere names the file to create. Throws std::runtime_error("is a symlink loop (...)")
// where the links never reach a name that is not a link.
std::filesystem::path write_destination(const std::filesystem::path& path);

// Calls `write` on an in-memory stream, writes the result to its write_destination() +
// ".tmp-<pid>", fsyncs it and renames it over that destination, so `path` is either complete or untouched, even
// after a crash. On any failure, including an exception from `write`, removes the
// temporary and throws std::runtime_error("cannot write <path>: <reason>").
void write_file_atomically(const std::filesystem::path& path,
                           const std::function<void(std::ostream&)>& write);

// Appends `bytes` (whole JSON lines) to `path`, creating it, and fsyncs it: after a stop of
// any kind, the file holds every earlier call's bytes complete. Throws std::runtime_error
// ("cannot append to <path>: <reason>").
void append_to_file(const std::filesystem::path& path, const std::string& bytes);

}  // namespace kvbench
