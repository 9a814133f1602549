// Collects the machine, BLAS and build facts that make a result reproducible.
#include "kvbench/measure/environment.hpp"

#include "kvbench_git_commit.hpp"

#include "kvbench/engine/blas.hpp"
#include "kvbench/engine/kernel_isa.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string_view>
#include <vector>

// Fallbacks for builds that do not link the kvbench_provenance target.
#ifndef KVBENCH_VERSION
#define KVBENCH_VERSION "unknown"
#endif
#ifndef KVBENCH_BUILD_TYPE
#define KVBENCH_BUILD_TYPE "unknown"
#endif
#ifndef KVBENCH_COMPILER
#define KVBENCH_COMPILER "unknown"
#endif

namespace kvbench {

namespace {

// Sanitizers and unoptimized code change the cost of every load, so their
// timings do not describe the kernels.
constexpr bool compiled_optimized() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || !defined(__OPTIMIZE__)
    return false;
#else
    return true;
#endif
}

std::string or_unknown(std::string_view text) {
    return text.empty() ? std::string("unknown") : std::string(text);
}

std::string trim(std::string_view text) {
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) return {};
    const auto last = text.find_last_not_of(" \t\r\n");
    return std::string(text.substr(first, last - first + 1));
}

std::string getenv_or_empty(const char* name) {
    const char* value = std::getenv(name);
    return value == nullptr ? std::string() : std::string(value);
}

std::string read_first_line(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return trim(line);
}

// x86 kernels name the CPU "model name"; some arm64 kernels only give "Hardware"
// or "Processor", so those are tried in order.
std::string read_cpu_model() {
    std::ifstream in("/proc/cpuinfo");
    const std::vector<std::string_view> keys = {"model name", "Hardware", "Processor"};
    std::vector<std::string> found(keys.size());
    std::string line;
    while (std::getline(in, line)) {
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        const std::string key = trim(std::string_view(line).substr(0, colon));
        for (std::size_t i = 0; i < keys.size(); ++i) {
            if (key == keys[i] && found[i].empty()) {
                found[i] = trim(std::string_view(line).substr(colon + 1));
            }
        }
    }
    for (const auto& model : found) {
        if (!model.empty()) return model;
    }
    return "unknown";
}

// sysfs writes sizes as "48K", "1024K" or "32M".
std::optional<std::size_t> parse_cache_size_bytes(const std::string& text) {
    std::size_t value = 0;
    std::size_t i = 0;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
        value = value * 10 + static_cast<std::size_t>(text[i] - '0');
    }
    if (i == 0) return std::nullopt;
    const std::string_view suffix = std::string_view(text).substr(i);
    if (suffix.empty()) return value;
    if (suffix == "K") return value << 10;
    if (suffix == "M") return value << 20;
    if (suffix == "G") return value << 30;
    return std::nullopt;
}

std::string format_bytes_binary(std::size_t size_bytes) {
    if (size_bytes >= (1u << 20) && size_bytes % (1u << 20) == 0) {
        return fmt::format("{} MiB", size_bytes >> 20);
    }
    if (size_bytes >= (1u << 10) && size_bytes % (1u << 10) == 0) {
        return fmt::format("{} KiB", size_bytes >> 10);
    }
    return fmt::format("{} B", size_bytes);
}

struct CacheLevel {
    int level = 0;
    std::string label;  // "L1d", "L2"
    std::size_t size_bytes = 0;
};

// Data and unified caches of cpu0; instruction caches hold no benchmark data.
std::vector<CacheLevel> read_data_caches() {
    namespace fs = std::filesystem;
    std::vector<CacheLevel> caches;
    const fs::path root = "/sys/devices/system/cpu/cpu0/cache";
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(root, ec)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind("index", 0) != 0) continue;
        const std::string type = read_first_line(entry.path() / "type");
        if (type != "Data" && type != "Unified") continue;
        const std::string level_text = read_first_line(entry.path() / "level");
        const auto size_bytes = parse_cache_size_bytes(read_first_line(entry.path() / "size"));
        if (level_text.empty() || !size_bytes) continue;
        CacheLevel cache;
        cache.level = level_text.front() - '0';
        cache.label = fmt::format("L{}{}", level_text, type == "Data" ? "d" : "");
        cache.size_bytes = *size_bytes;
        caches.push_back(cache);
    }
    std::sort(caches.begin(), caches.end(),
              [](const CacheLevel& a, const CacheLevel& b) { return a.level < b.level; });
    return caches;
}

std::string utc_timestamp_now() {
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm utc{};
    gmtime_r(&now, &utc);
    char text[32];
    const std::size_t length = std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
    return std::string(text, length);
}

}  // namespace

Environment collect_environment() {
    Environment env;
    env.tool_version = or_unknown(KVBENCH_VERSION);
    env.git_commit = or_unknown(KVBENCH_GIT_COMMIT);
    env.build_type = or_unknown(KVBENCH_BUILD_TYPE);
    env.compiler = or_unknown(KVBENCH_COMPILER);
    env.kernel_isa = kernel_isa();
    env.optimized_build = compiled_optimized() && env.build_type != "Debug";
    env.cpu_model = read_cpu_model();
    env.n_cores = available_cores();

    const std::vector<CacheLevel> caches = read_data_caches();
    for (const auto& cache : caches) {
        if (!env.cache_sizes.empty()) env.cache_sizes += ", ";
        env.cache_sizes += fmt::format("{} {}", cache.label, format_bytes_binary(cache.size_bytes));
    }
    if (!caches.empty()) env.llc_bytes = caches.back().size_bytes;
    if (env.cache_sizes.empty()) env.cache_sizes = "unknown";

    env.blas_library = blas_library();
    env.blas_threading = blas_threading();
    env.openblas_coretype = getenv_or_empty("OPENBLAS_CORETYPE");
    env.openblas_l2_size = getenv_or_empty("OPENBLAS_L2_SIZE");
    env.timestamp = utc_timestamp_now();
    return env;
}

}  // namespace kvbench
