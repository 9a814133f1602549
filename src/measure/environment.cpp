// Collects the machine, BLAS and build facts that make a result reproducible.
#include "kvbench/measure/environment.hpp"

#include "kvbench_git_commit.hpp"

#include "kvbench/engine/blas.hpp"
#include "kvbench/engine/kernel_isa.hpp"
#include "kvbench/measure/blas_isa.hpp"
#include "kvbench/measure/cpu_model.hpp"
#include "trim.hpp"

#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <utility>
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


std::string read_first_line(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return trim(line);
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

// Data and unified caches of one CPU; instruction caches hold no benchmark data.
struct CacheInstance {
    CacheLevel level;
    std::string identity;  // "id 3" or "cpus 0-7": equal for the CPUs that share this instance
};

std::vector<CacheInstance> read_data_caches(const std::filesystem::path& cpu_dir) {
    namespace fs = std::filesystem;
    std::vector<CacheInstance> caches;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(cpu_dir / "cache", ec)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind("index", 0) != 0) continue;
        const std::string type = read_first_line(entry.path() / "type");
        if (type != "Data" && type != "Unified") continue;
        const std::string level_text = read_first_line(entry.path() / "level");
        const auto size_bytes = parse_cache_size_bytes(read_first_line(entry.path() / "size"));
        if (level_text.empty() || !size_bytes) continue;
        CacheInstance cache;
        cache.level.level = level_text.front() - '0';
        cache.level.label = fmt::format("L{}{}", level_text, type == "Data" ? "d" : "");
        cache.level.size_bytes = *size_bytes;
        const std::string id = read_first_line(entry.path() / "id");
        cache.identity = !id.empty() ? "id " + id : "cpus " + read_first_line(entry.path() / "shared_cpu_list");
        caches.push_back(cache);
    }
    std::sort(caches.begin(), caches.end(),
              [](const CacheInstance& a, const CacheInstance& b) { return a.level.level < b.level.level; });
    return caches;
}

}  // namespace

std::string utc_timestamp_now() {
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm utc{};
    gmtime_r(&now, &utc);
    char text[32];
    const std::size_t length = std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
    return std::string(text, length);
}

std::string selected_hugepage_mode(const std::string& enabled_line) {
    const std::size_t open = enabled_line.find('[');
    if (open == std::string::npos) return "";
    const std::size_t close = enabled_line.find(']', open);
    if (close == std::string::npos) return "";
    return enabled_line.substr(open + 1, close - open - 1);
}

LastLevelCaches read_last_level_caches(const std::filesystem::path& cpu_root, const std::vector<std::size_t>& cpus) {
    // (level, identity) -> size of every data or unified cache instance the CPUs reach.
    std::map<std::pair<int, std::string>, std::size_t> instances;
    for (const std::size_t cpu : cpus) {
        for (const CacheInstance& cache : read_data_caches(cpu_root / fmt::format("cpu{}", cpu))) {
            instances[{cache.level.level, cache.identity}] = cache.level.size_bytes;
        }
    }
    LastLevelCaches llc;
    for (const auto& [key, size_bytes] : instances) llc.level = std::max(llc.level, key.first);
    for (const auto& [key, size_bytes] : instances) {
        if (key.first != llc.level) continue;
        llc.largest_bytes = std::max(llc.largest_bytes, size_bytes);
        llc.total_bytes += size_bytes;
        ++llc.n_instances;
    }
    return llc;
}

CpuidCaches read_cpuid_caches() {
    const auto size_of = [](int name) -> std::size_t {
        const long size_bytes = sysconf(name);
        return size_bytes > 0 ? static_cast<std::size_t>(size_bytes) : 0;
    };
    // glibc reads these from CPUID on x86; elsewhere it may answer 0 or -1 (unknown).
    CpuidCaches caches;
    caches.l1d_bytes = size_of(_SC_LEVEL1_DCACHE_SIZE);
    caches.l2_bytes = size_of(_SC_LEVEL2_CACHE_SIZE);
    caches.l3_bytes = size_of(_SC_LEVEL3_CACHE_SIZE);
    return caches;
}

std::string describe_cpuid_caches(const CpuidCaches& caches) {
    std::string text;
    const std::pair<std::string_view, std::size_t> levels[] = {
        {"L1d", caches.l1d_bytes}, {"L2", caches.l2_bytes}, {"L3", caches.l3_bytes}};
    for (const auto& [label, size_bytes] : levels) {
        if (size_bytes == 0) continue;
        if (!text.empty()) text += ", ";
        text += fmt::format("{} {}", label, format_bytes_binary(size_bytes));
    }
    return text.empty() ? std::string("unknown") : text + " (cpuid)";
}

std::vector<std::size_t> affinity_cpus() {
    std::vector<std::size_t> cpus;
    cpu_set_t mask;
    CPU_ZERO(&mask);
    if (sched_getaffinity(0, sizeof(mask), &mask) == 0) {
        for (std::size_t cpu = 0; cpu < static_cast<std::size_t>(CPU_SETSIZE); ++cpu) {
            if (CPU_ISSET(cpu, &mask)) cpus.push_back(cpu);
        }
    }
    if (cpus.empty()) cpus.push_back(0);
    return cpus;
}

std::string getenv_or_empty(const char* name) {
    const char* value = std::getenv(name);
    return value == nullptr ? std::string() : std::string(value);
}

bool is_optimized_build(bool compiled_optimized, const std::string& build_type) {
    return compiled_optimized && build_type != "Debug";
}

OpenblasVariables read_openblas_variables(const char* (*lookup)(const char* name)) {
    const auto value = [lookup](const char* name) {
        const char* found = lookup(name);
        return found == nullptr ? std::string() : std::string(found);
    };
    return {value("OPENBLAS_CORETYPE"), value("OPENBLAS_L2_SIZE")};
}

Environment collect_environment() {
    Environment env;
    env.tool_version = or_unknown(KVBENCH_VERSION);
    env.git_commit = or_unknown(KVBENCH_GIT_COMMIT);
    env.build_type = or_unknown(KVBENCH_BUILD_TYPE);
    env.compiler = or_unknown(KVBENCH_COMPILER);
    env.kernel_isa = kernel_isa();
    env.kernel_tiles = kernel_tiles();
    env.optimized_build = is_optimized_build(compiled_optimized(), env.build_type);
    env.cpu_model = read_cpu_model();
    env.n_cores = available_cores();

    const std::filesystem::path cpu_root = "/sys/devices/system/cpu";
    const std::vector<std::size_t> cpus = affinity_cpus();
    for (const auto& cache : read_data_caches(cpu_root / fmt::format("cpu{}", cpus.front()))) {
        if (!env.cache_sizes.empty()) env.cache_sizes += ", ";
        env.cache_sizes += fmt::format("{} {}", cache.level.label, format_bytes_binary(cache.level.size_bytes));
    }
    // Some virtual machines' kernels list no cache in sysfs; CPUID's sizes are then listed,
    // and the LLC stays unknown (environment.hpp says why).
    if (env.cache_sizes.empty()) env.cache_sizes = describe_cpuid_caches(read_cpuid_caches());
    const LastLevelCaches llc = read_last_level_caches(cpu_root, cpus);
    env.llc_bytes = llc.largest_bytes;
    env.llc_total_bytes = llc.total_bytes;
    env.n_llc_instances = llc.n_instances;

    env.blas_library = blas_library();
    env.blas_threading = blas_threading();
    const OpenblasVariables openblas =
        read_openblas_variables([](const char* name) -> const char* { return std::getenv(name); });
    env.openblas_coretype = openblas.coretype;
    env.openblas_l2_size = openblas.l2_size;
    env.blas_core = blas_core();
    env.blas_held_back = blas_held_back_note(env.blas_core, cpu_vector_isa(), env.openblas_coretype);
    env.transparent_hugepage = selected_hugepage_mode(read_first_line("/sys/kernel/mm/transparent_hugepage/enabled"));
    env.timestamp = utc_timestamp_now();
    return env;
}

}  // namespace kvbench
