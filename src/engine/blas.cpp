// The one place that talks to OpenBLAS.
#include "kvbench/engine/blas.hpp"

#include <cblas.h>
#include <omp.h>
#include <sched.h>

#include <limits>
#include <stdexcept>

namespace kvbench {

namespace {

blasint to_blas(std::size_t v) {
    if (v > static_cast<std::size_t>(std::numeric_limits<blasint>::max())) {
        throw std::length_error("matrix dimension exceeds the BLAS integer range");
    }
    return static_cast<blasint>(v);
}

CBLAS_TRANSPOSE to_cblas(Transpose t) { return t == Transpose::yes ? CblasTrans : CblasNoTrans; }

}  // namespace

void gemm(Transpose trans_a, Transpose trans_b, std::size_t m, std::size_t n, std::size_t k,
          float alpha, const float* a, std::size_t lda, const float* b, std::size_t ldb,
          float beta, float* c, std::size_t ldc) {
    cblas_sgemm(CblasRowMajor, to_cblas(trans_a), to_cblas(trans_b), to_blas(m), to_blas(n),
                to_blas(k), alpha, a, to_blas(lda), b, to_blas(ldb), beta, c, to_blas(ldc));
}

void set_compute_threads(std::size_t n_threads) {
    const int n = static_cast<int>(n_threads);
    omp_set_num_threads(n);
    openblas_set_num_threads(n);
}

std::size_t compute_threads() { return static_cast<std::size_t>(omp_get_max_threads()); }

std::size_t available_cores() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        const int count = CPU_COUNT(&set);
        if (count > 0) return static_cast<std::size_t>(count);
    }
    return static_cast<std::size_t>(omp_get_num_procs());
}

std::string blas_library() {
    std::string config = openblas_get_config();
    while (!config.empty() && config.back() == ' ') config.pop_back();
    return config;
}

std::string blas_core() { return openblas_get_corename(); }

std::string blas_threading() {
    switch (openblas_get_parallel()) {
        case 0: return "serial";
        case 1: return "pthread";
        case 2: return "openmp";
        default: return "unknown";
    }
}

}  // namespace kvbench
