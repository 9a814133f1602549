// Projections on the kernel measured fastest for the row count: the small-m kernel for 1 row to
// 3 groups of 8 rows (int8 weights from tuning.hpp's amx_int8_from_rows rows on AMX's tiles where
// the CPU has them); on AVX-512 the rows-in-lanes kernel for f32 weights from 9 to 64 rows and
// reduced ones from 25 (bench/journal/2026-12-08-rows-of-x-in-lanes.md); OpenBLAS sgemm for
// more. The small-m kernel reads W once per group, where
// sgemm streams W far below the memory bandwidth
// (bench/journal/2026-11-30-linear-sgemv-small-m-or-sgemm.md), and one row's W as four far-apart
// streams, faster than OpenBLAS's sgemv (bench/journal/2026-12-02-one-row-of-x-as-four-streams.md).
#include "kvbench/engine/linear.hpp"

#include "kernels/small_m_amx.hpp"
#include "kernels/small_m_gemm.hpp"
#include "kernels/small_m_lanes.hpp"
#include "kernels/small_m_typed.hpp"
#include "kernels/tuning.hpp"

#include "kvbench/engine/blas.hpp"

#include <algorithm>
#include <vector>

namespace kvbench {

namespace {

// Most groups of rows worth a pass of the small-m kernel each over W.
constexpr std::size_t max_small_m_groups = tuning.projection.max_small_m_groups;
constexpr std::size_t converted_block_bytes = tuning.projection.converted_block_bytes;
constexpr std::size_t converted_block_max_bytes = tuning.projection.converted_block_max_bytes;

// Rows of W converted per sgemm call over n_rows rows of x: an L2-sized block for a few dozen
// rows; for more, half as many as x has rows (the packing of x, repeated for every block, then
// costs a few percent of the products), within converted_block_max_bytes and W.
std::size_t converted_block_rows(std::size_t n_rows, std::size_t in_dim, std::size_t out_dim) {
    const std::size_t row_bytes = in_dim * sizeof(float);
    const std::size_t l2_rows = converted_block_bytes / row_bytes;
    const std::size_t max_rows = std::max<std::size_t>(1, converted_block_max_bytes / row_bytes);
    return std::clamp<std::size_t>(std::max(l2_rows, n_rows / 2), 1, std::min(out_dim, max_rows));
}

// int8 weights from amx_int8_from_rows rows of x on AMX's tiles, where the CPU has them and the
// OS grants them (docs/model.md, "Weight element types"); false where the tiles did not run.
bool ran_on_amx_tiles(const float* x, std::size_t n_rows, std::size_t in_dim, WeightView w, std::size_t out_dim,
                      float beta, float* y) {
    constexpr std::size_t from_rows = tuning.small_m_typed.amx_int8_from_rows;
    if (w.dtype != WeightDtype::int8 || from_rows == 0 || n_rows < from_rows || n_rows > amx_int8_max_rows ||
        !amx_int8_usable()) {
        return false;
    }
    return small_m_gemm_int8_amx(x, n_rows, in_dim, static_cast<const std::int8_t*>(w.elements), w.scales, out_dim,
                                 beta, y);
}

}  // namespace

std::uint64_t linear(const float* x, std::size_t n_rows, std::size_t in_dim, WeightView w,
                     std::size_t out_dim, float beta, float* y) {
    if (small_m_lanes_takes(n_rows, w.dtype) && !ran_on_amx_tiles(x, n_rows, in_dim, w, out_dim, beta, y)) {
        if (w.dtype == WeightDtype::f32) {
            small_m_gemm_lanes(x, n_rows, in_dim, static_cast<const float*>(w.elements), out_dim, beta, y);
        } else {
            small_m_gemm_typed_lanes(x, n_rows, in_dim, w.elements, w.scales, w.dtype, out_dim, beta, y);
        }
        return 2ull * n_rows * out_dim * in_dim;
    }
    const std::size_t n_groups = (n_rows + small_m_max_rows - 1) / small_m_max_rows;
    if (n_groups <= max_small_m_groups) {
        // Groups as equal as can be: 9 rows are 5 + 4, not 8 + 1.
        const std::size_t group_rows = (n_rows + n_groups - 1) / n_groups;
        for (std::size_t first = 0; first < n_rows; first += group_rows) {
            const std::size_t rows = n_rows - first < group_rows ? n_rows - first : group_rows;
            if (w.dtype == WeightDtype::f32) {
                small_m_gemm(x + first * in_dim, rows, in_dim, static_cast<const float*>(w.elements), out_dim, beta,
                             y + first * out_dim);
            } else if (!ran_on_amx_tiles(x + first * in_dim, rows, in_dim, w, out_dim, beta, y + first * out_dim)) {
                small_m_gemm_typed(x + first * in_dim, rows, in_dim, {w.elements, w.scales, w.dtype}, out_dim, beta,
                                   y + first * out_dim);
            }
        }
        return 2ull * n_rows * out_dim * in_dim;
    }
    return linear_sgemm(x, n_rows, in_dim, w, out_dim, beta, y);
}

std::uint64_t linear_sgemm(const float* x, std::size_t n_rows, std::size_t in_dim, WeightView w,
                           std::size_t out_dim, float beta, float* y) {
    if (w.dtype == WeightDtype::f32) {
        gemm(Transpose::no, Transpose::yes, n_rows, out_dim, in_dim, 1.0f, x, in_dim,
             static_cast<const float*>(w.elements), in_dim, beta, y, out_dim);
        return 2ull * n_rows * out_dim * in_dim;
    }
    // sgemm reads f32 only: each block of W's rows is converted, then multiplied into its
    // columns of y. The buffer grows once, to the widest block a run asks for, and is reused.
    static thread_local std::vector<float> block;
    const std::size_t block_rows = converted_block_rows(n_rows, in_dim, out_dim);
    if (block.size() < block_rows * in_dim) block.resize(block_rows * in_dim);
    for (std::size_t first = 0; first < out_dim; first += block_rows) {
        const std::size_t rows = std::min(block_rows, out_dim - first);
        for (std::size_t r = 0; r < rows; ++r) w.load_row(first + r, in_dim, block.data() + r * in_dim);
        gemm(Transpose::no, Transpose::yes, n_rows, rows, in_dim, 1.0f, x, in_dim, block.data(), in_dim, beta,
             y + first, out_dim);
    }
    return 2ull * n_rows * out_dim * in_dim;
}

std::size_t linear_conversion_bytes(std::size_t n_rows, std::size_t max_in_dim) {
    if (max_in_dim == 0) return 0;
    // A bound on converted_block_rows() × a row's bytes for any row up to max_in_dim long.
    const std::size_t longest_row_bytes = max_in_dim * sizeof(float);
    return std::max(converted_block_bytes, std::min(n_rows / 2 * longest_row_bytes,
                                                    std::max(converted_block_max_bytes, longest_row_bytes)));
}

std::size_t linear_lanes_bytes(std::size_t n_rows, std::size_t max_in_dim, WeightDtype dtype) {
    return small_m_lanes_bytes(n_rows, max_in_dim, dtype);
}

std::size_t linear_int8_tile_bytes(std::size_t max_in_dim) {
    constexpr std::size_t from_rows = tuning.small_m_typed.amx_int8_from_rows;
    return from_rows != 0 && amx_int8_usable() ? amx_int8_parts_bytes(max_in_dim) : 0;
}

}  // namespace kvbench
