// libFuzzer harness for the roofline file reader (load_roofline in src/measure/roofline.cpp).
// Any file must either load into a roofline whose peaks are usable (positive and finite) or
// be refused with std::runtime_error; a crash, a sanitizer report or another exception is a
// finding.
#include "kvbench/measure/roofline.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include <unistd.h>

namespace {

void require(bool promise) {
    if (!promise) std::abort();
}

// load_roofline reads a path: each input goes to this process's own file, rewritten each
// time, and removed when the fuzzer exits.
struct InputFile {
    std::filesystem::path path = std::filesystem::temp_directory_path() /
                                 ("kvbench-fuzz-roofline-" + std::to_string(::getpid()) + ".json");
    InputFile() = default;
    InputFile(const InputFile&) = delete;
    InputFile& operator=(const InputFile&) = delete;
    ~InputFile() {
        std::error_code ignored;
        std::filesystem::remove(path, ignored);
    }
};

const std::filesystem::path& input_path() {
    static const InputFile file;
    return file.path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    {
        std::ofstream out(input_path(), std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
        require(static_cast<bool>(out));
    }
    try {
        const kvbench::Roofline roofline = kvbench::load_roofline(input_path());
        require(roofline.peak_gflops > 0 && std::isfinite(roofline.peak_gflops));
        require(roofline.peak_gbps > 0 && std::isfinite(roofline.peak_gbps));
    } catch (const std::runtime_error&) {
    }
    return 0;
}
