// Projections on the kernel measured fastest for the row count: sgemv for one row, the
// small-m kernel for a few, OpenBLAS sgemm for many.
//
// GB/s of W streamed, cold 4096 x 4096 and 6144 x 4096 W (64 and 96 MiB, cycled through
// 384 MiB of copies) starting 16 bytes into a page as std::vector's do, 2 threads, median of
// 40. The shared machine's memory runs in two states; in the faster (sgemv 60-65 GB/s):
//
//   rows          1     2     3     4     5     6     7     8
//   sgemm        22-23 17-18 14-15  12    12    12    12    11-12
//   small_m_gemm 63    53    65     50    49    47    51    41-42
//
// and in the slower (sgemv 45-47 GB/s): sgemm 20-22 at 1 row, 11 at 8; small_m_gemm 48, 42-44,
// 40, 41 at 1 to 4 rows, 35-36 at 8. Page-aligned W: small_m_gemm 55-57 at 8 rows (fast state).
//
// sgemm streams W at a quarter of the bandwidth at 4 to 8 rows; sgemv and the small-m kernel
// tie at one row, so sgemv keeps it. Above 8 rows the small-m kernel takes the rows in groups
// of at most 8 and reads W once per group, which beats sgemm up to 3 groups. linear() against
// sgemm, cold 4096 x 4096, GB/s of W: 9 rows 19.9 / 9.5, 12: 20.4 / 7.0, 16: 21.9 / 13.3,
// 17: 14.5 / 11.4, 24: 15.5 / 7.7, and at 32 rows (4 groups) a tie, 9.8 / 9.7.
#include "kvbench/engine/linear.hpp"

#include "kvbench/engine/blas.hpp"
#include "kvbench/engine/small_m_gemm.hpp"

namespace kvbench {

namespace {

// Most groups of rows worth a pass of the small-m kernel each over W.
constexpr std::size_t max_small_m_groups = 3;

}  // namespace

std::uint64_t linear(const float* x, std::size_t n_rows, std::size_t in_dim, const float* w,
                     std::size_t out_dim, float beta, float* y) {
    const std::size_t n_groups = (n_rows + small_m_max_rows - 1) / small_m_max_rows;
    if (n_rows == 1) {
        gemv(out_dim, in_dim, w, in_dim, x, beta, y);
    } else if (n_groups <= max_small_m_groups) {
        // Groups as equal as can be: 9 rows are 5 + 4, not 8 + 1.
        const std::size_t group_rows = (n_rows + n_groups - 1) / n_groups;
        for (std::size_t first = 0; first < n_rows; first += group_rows) {
            const std::size_t rows = n_rows - first < group_rows ? n_rows - first : group_rows;
            small_m_gemm(x + first * in_dim, rows, in_dim, w, out_dim, beta, y + first * out_dim);
        }
    } else {
        gemm(Transpose::no, Transpose::yes, n_rows, out_dim, in_dim, 1.0f, x, in_dim, w, in_dim,
             beta, y, out_dim);
    }
    return 2ull * n_rows * out_dim * in_dim;
}

}  // namespace kvbench
