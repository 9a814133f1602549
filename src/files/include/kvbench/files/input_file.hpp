// Reading a file the user named as input (a report, a database, a config, a profile), whole.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace kvbench {

// Why an input file cannot be read, without its path: each caller names the file and option
// its own way ("--calibrate FILE: is a directory").
class InputFileError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// More than any report, database or config kvbench writes or reads (a sweep's report is a few
// KiB a point): past it a file is refused before it is read, not read into memory.
inline constexpr std::uintmax_t max_input_file_bytes = std::uintmax_t{1} << 30;

// Why `path` is no file kvbench reads, worded to follow its name ("no such file", "is a directory,
// not a file", "is a symlink loop (...)"), or nothing for a regular file (after symlinks). Never
// blocks: it only asks the file system.
std::optional<std::string> input_file_problem(const std::filesystem::path& path);

// Whether anything is at `path`, even a link that leads nowhere or to itself: what a reader
// that falls back on another meaning of a word (--hardware NAME) asks before it reads a file.
bool input_path_exists(const std::filesystem::path& path);

// Whether `path` is a regular file (after symlinks); false for a directory, a FIFO, a device
// or a path that does not resolve. Never blocks: it only asks the file system.
bool is_regular_input(const std::filesystem::path& path);

inline constexpr std::string_view utf8_byte_order_mark = "\xEF\xBB\xBF";

// The whole of `path`, without a leading UTF-8 byte-order mark. Throws InputFileError where it is missing, not a regular file (a FIFO
// would block the read, /dev/zero never end it), larger than max_input_file_bytes, or cannot
// be read.
std::string read_input_file(const std::filesystem::path& path);

}  // namespace kvbench
