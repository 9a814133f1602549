// Environment: what makes a result reproducible (machine, BLAS, build), collected once per run.
#pragma once

#include <cstddef>
#include <string>

namespace kvbench {

struct Environment {
    std::string tool_version;      // KVBENCH_VERSION
    std::string git_commit;        // git describe at build time, "-dirty" for uncommitted changes
    std::string build_type;        // Release, Debug, ...
    std::string compiler;          // "GNU 12.2.0"
    std::string kernel_isa;        // kvbench's kernels: "avx512", "avx2+fma" or "portable"
    bool optimized_build = true;   // false for Debug or sanitizer builds: their timings mean nothing
    std::string cpu_model;         // /proc/cpuinfo "model name"
    std::size_t n_cores = 0;       // cores this process may use
    std::size_t llc_bytes = 0;     // last-level cache size, 0 when unknown
    std::string cache_sizes;       // "L1d 48 KiB, L2 1 MiB, L3 32 MiB"
    std::string blas_library;      // openblas_get_config()
    std::string blas_threading;    // "openmp"
    std::string openblas_coretype; // $OPENBLAS_CORETYPE, empty when unset
    std::string openblas_l2_size;  // $OPENBLAS_L2_SIZE, empty when unset
    std::string timestamp;         // UTC, ISO 8601, when the run started
};

Environment collect_environment();

}  // namespace kvbench
