// Row-major matrix products on OpenBLAS, and the thread count all compute uses.
// Only blas.cpp includes cblas.h.
#pragma once

#include <cstddef>
#include <string>

namespace kvbench {

enum class Transpose { no, yes };

// C (m, n) = alpha · op(A) (m, k) · op(B) (k, n) + beta · C, all row-major.
// lda/ldb/ldc are row strides in floats of the matrices as stored.
// Requires: every dimension fits in a BLAS int; strides at least the stored row width.
void gemm(Transpose trans_a, Transpose trans_b, std::size_t m, std::size_t n, std::size_t k,
          float alpha, const float* a, std::size_t lda, const float* b, std::size_t ldb,
          float beta, float* c, std::size_t ldc);

// Sets the worker count of both kvbench's OpenMP regions and OpenBLAS (one shared
// libgomp pool, see cmake/OpenBLASTarget.cmake). Requires: n_threads >= 1.
void set_compute_threads(std::size_t n_threads);
std::size_t compute_threads();
// Cores this process may run on.
std::size_t available_cores();

// OpenBLAS's own description, e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64",
// and its threading model ("openmp", "pthread" or "serial").
std::string blas_library();
std::string blas_threading();
// The core type whose kernels OpenBLAS runs, e.g. "Haswell" (openblas_get_corename()).
std::string blas_core();

}  // namespace kvbench
