// Projections on the kernel measured fastest for the row count: the small-m kernel for 1 row to
// 3 groups of 8 rows, OpenBLAS sgemm for more. The small-m kernel reads W once per group, where
// sgemm streams W far below the memory bandwidth
// (bench/journal/2026-11-30-linear-sgemv-small-m-or-sgemm.md), and one row's W as four far-apart
// streams, faster than OpenBLAS's sgemv (bench/journal/2026-12-02-one-row-of-x-as-four-streams.md).
#include "kvbench/engine/linear.hpp"

#include "kernels/small_m_gemm.hpp"
#include "kernels/tuning.hpp"

#include "kvbench/engine/blas.hpp"

namespace kvbench {

namespace {

// Most groups of rows worth a pass of the small-m kernel each over W.
constexpr std::size_t max_small_m_groups = tuning.projection.max_small_m_groups;

}  // namespace

std::uint64_t linear(const float* x, std::size_t n_rows, std::size_t in_dim, const float* w,
                     std::size_t out_dim, float beta, float* y) {
    const std::size_t n_groups = (n_rows + small_m_max_rows - 1) / small_m_max_rows;
    if (n_groups <= max_small_m_groups) {
        // Groups as equal as can be: 9 rows are 5 + 4, not 8 + 1.
        const std::size_t group_rows = (n_rows + n_groups - 1) / n_groups;
        for (std::size_t first = 0; first < n_rows; first += group_rows) {
            const std::size_t rows = n_rows - first < group_rows ? n_rows - first : group_rows;
            small_m_gemm(x + first * in_dim, rows, in_dim, w, out_dim, beta, y + first * out_dim);
        }
        return 2ull * n_rows * out_dim * in_dim;
    }
    return linear_sgemm(x, n_rows, in_dim, w, out_dim, beta, y);
}

std::uint64_t linear_sgemm(const float* x, std::size_t n_rows, std::size_t in_dim, const float* w,
                           std::size_t out_dim, float beta, float* y) {
    gemm(Transpose::no, Transpose::yes, n_rows, out_dim, in_dim, 1.0f, x, in_dim, w, in_dim, beta, y, out_dim);
    return 2ull * n_rows * out_dim * in_dim;
}

}  // namespace kvbench
