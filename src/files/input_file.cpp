// Input files are checked on the file system before they are opened: opening a FIFO waits for
// a writer, and a device such as /dev/zero has no end.
#include "kvbench/files/input_file.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <system_error>

namespace kvbench {

std::optional<std::string> input_file_problem(const std::filesystem::path& path) {
    std::error_code error;
    const std::filesystem::file_status status = std::filesystem::status(path, error);
    if (status.type() == std::filesystem::file_type::not_found) return "no such file";
    // std::filesystem's own text for it ("Too many levels of symbolic links") names no cause a user fixes.
    if (error == std::errc::too_many_symbolic_link_levels) {
        return "is a symlink loop (its links never reach a file)";
    }
    if (error) return fmt::format("cannot open the file ({})", error.message());
    if (status.type() == std::filesystem::file_type::directory) return "is a directory, not a file";
    if (status.type() != std::filesystem::file_type::regular) {
        return "is not a regular file (a FIFO, device or socket), which kvbench does not read";
    }
    return std::nullopt;
}

bool input_path_exists(const std::filesystem::path& path) {
    std::error_code error;
    return std::filesystem::symlink_status(path, error).type() != std::filesystem::file_type::not_found && !error;
}

bool is_regular_input(const std::filesystem::path& path) { return !input_file_problem(path); }

std::string read_input_file(const std::filesystem::path& path) {
    if (const std::optional<std::string> problem = input_file_problem(path)) throw InputFileError(*problem);
    std::error_code error;
    const std::uintmax_t size = std::filesystem::file_size(path, error);
    if (error) throw InputFileError(fmt::format("cannot open the file ({})", error.message()));
    if (size > max_input_file_bytes) {
        throw InputFileError(fmt::format("is {} bytes, more than the {} GiB kvbench reads as one input", size,
                                         max_input_file_bytes >> 30));
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputFileError("cannot open the file");
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) throw InputFileError("cannot read the file");
    std::string whole = std::move(text).str();
    // Editors on Windows open UTF-8 files with a byte-order mark: skipped, so the first column,
    // key or brace is read as written (it was "\ufeffpath", and a JSON report read as CSV).
    if (whole.starts_with(utf8_byte_order_mark)) whole.erase(0, utf8_byte_order_mark.size());
    return whole;
}

}  // namespace kvbench
