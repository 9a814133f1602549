// Projections through OpenBLAS: sgemv for one row, sgemm for several.
#include "kvbench/linear.hpp"

#include "kvbench/blas.hpp"

namespace kvbench {

std::uint64_t linear(const float* x, std::size_t n_rows, std::size_t in_dim, const float* w,
                     std::size_t out_dim, float beta, float* y) {
    if (n_rows == 1) {
        gemv(out_dim, in_dim, w, in_dim, x, beta, y);
    } else {
        gemm(Transpose::no, Transpose::yes, n_rows, out_dim, in_dim, 1.0f, x, in_dim, w, in_dim,
             beta, y, out_dim);
    }
    return 2ull * n_rows * out_dim * in_dim;
}

}  // namespace kvbench
