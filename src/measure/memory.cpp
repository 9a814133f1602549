// Reads MemAvailable from /proc/meminfo.
#include "kvbench/measure/memory.hpp"

#include <fstream>
#include <sstream>
#include <string>

namespace kvbench {

std::optional<std::uint64_t> available_memory_bytes() {
    std::ifstream meminfo("/proc/meminfo");
    std::string line;
    while (std::getline(meminfo, line)) {
        std::istringstream fields(line);
        std::string key;
        std::uint64_t kib = 0;
        if (fields >> key >> kib && key == "MemAvailable:") return kib * 1024;
    }
    return std::nullopt;
}

}  // namespace kvbench
