// Environment: what makes a result reproducible (machine, BLAS, build), collected once per run.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace kvbench {

struct Environment {
    std::string tool_version;      // KVBENCH_VERSION
    std::string git_commit;        // git describe at build time, "-dirty" for uncommitted changes
    std::string build_type;        // Release, Debug, ...
    std::string compiler;          // "GNU 12.2.0"
    std::string kernel_isa;        // kvbench's kernels: "avx512", "avx2+fma" or "portable"
    std::string kernel_tiles;      // matrix units they use on this CPU: "amx-int8", or empty (kernel_isa.hpp)
    bool optimized_build = true;   // false for Debug or sanitizer builds: their timings mean nothing
    std::string cpu_model;         // /proc/cpuinfo's name of the CPU (cpu_model.hpp)
    std::size_t n_cores = 0;       // cores this process may use
    std::size_t llc_bytes = 0;     // one last-level cache instance, the largest, 0 when unknown
    std::size_t llc_total_bytes = 0;  // every LLC instance the process may run on, each once; 0 when unknown
    std::size_t n_llc_instances = 0;  // how many instances llc_total_bytes adds up
    std::string cache_sizes;       // "L1d 48 KiB, L2 1 MiB, L3 32 MiB"; "... (cpuid)" when sysfs had none
    std::string blas_library;      // openblas_get_config()
    std::string blas_threading;    // "openmp"
    std::string openblas_coretype; // $OPENBLAS_CORETYPE, empty when unset
    std::string openblas_l2_size;  // $OPENBLAS_L2_SIZE, empty when unset
    std::string blas_core;         // the core type whose kernels OpenBLAS runs ("Haswell")
    std::string blas_held_back;    // blas_held_back_note(): set when those kernels are below the CPU's ISA
    std::string transparent_hugepage;  // the kernel's THP mode: "always", "madvise", "never"; empty when unknown
    std::string timestamp;         // UTC, ISO 8601, when the run started
    std::string command_line;      // the command as typed, shell-quoted; set by the command line, not collected
    std::string shard;             // "K/N" of a sweep run with --shard (docs/sharding.md), else empty; set, not collected
};

Environment collect_environment();

// Now, in UTC, ISO 8601 to the second: "2026-11-30T13:21:42Z", as Environment::timestamp.
std::string utc_timestamp_now();

// The variable's value, or "" when it is not set.
std::string getenv_or_empty(const char* name);

// Whether a build's timings describe the kernels: compiled with optimisation and without
// sanitizers (compiled_optimized), and not a Debug build.
bool is_optimized_build(bool compiled_optimized, const std::string& build_type);

// OpenBLAS's variables as `lookup` gives them (std::getenv's contract: null when unset), ""
// when unset; collect_environment looks them up in the process environment.
struct OpenblasVariables {
    std::string coretype;  // $OPENBLAS_CORETYPE
    std::string l2_size;   // $OPENBLAS_L2_SIZE
};
OpenblasVariables read_openblas_variables(const char* (*lookup)(const char* name));

// The selected mode of a /sys/kernel/mm/transparent_hugepage/enabled line such as
// "always [madvise] never": the bracketed word, or "" when there is none. kvbench advises its
// large buffers into huge pages, which the kernel honours under "always" and "madvise" only.
std::string selected_hugepage_mode(const std::string& enabled_line);

// The last-level caches a set of CPUs can reach, as sysfs describes them.
struct LastLevelCaches {
    int level = 0;                 // 3 on most x86 machines; 0 when nothing was found
    std::size_t largest_bytes = 0;  // the largest single instance
    std::size_t total_bytes = 0;    // all instances, a cache shared by several CPUs counted once
    std::size_t n_instances = 0;
};

// Reads <cpu_root>/cpu<i>/cache/index*/{level,type,size,id,shared_cpu_list} for every i in cpus
// (cpu_root is /sys/devices/system/cpu on Linux) and keeps the highest level of data or
// unified cache. Two CPUs name the same instance by the same id, or, where the kernel gives
// no id, by the same shared_cpu_list. A CPU without cache information is skipped.
LastLevelCaches read_last_level_caches(const std::filesystem::path& cpu_root, const std::vector<std::size_t>& cpus);

// Cache sizes as the C library reads them from CPUID (sysconf's _SC_LEVEL*_CACHE_SIZE), each 0
// when unknown. Where sysfs lists no cache, as in some virtual machines, they are listed in
// cache_sizes as provenance only: a hypervisor's CPUID may give the whole package's L3 (a Zen 5
// guest: 508 MiB, where a Zen 5 core complex has 32), so llc_bytes stays unknown and nothing
// is sized by them.
struct CpuidCaches {
    std::size_t l1d_bytes = 0;
    std::size_t l2_bytes = 0;
    std::size_t l3_bytes = 0;
};
CpuidCaches read_cpuid_caches();
// "L1d 48 KiB, L2 1 MiB, L3 32 MiB (cpuid)", the levels that have a size; "unknown" when none.
std::string describe_cpuid_caches(const CpuidCaches& caches);

// The CPUs this process may run on (sched_getaffinity); cpu 0 alone where that is unknown.
std::vector<std::size_t> affinity_cpus();

}  // namespace kvbench
