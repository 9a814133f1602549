// absorb_query and unabsorb_output: one sgemm per head over the strided rows, and their naive twins.
#include "kvbench/engine/latent_projections.hpp"

#include "kvbench/engine/blas.hpp"

namespace kvbench {

std::uint64_t absorb_query(const LatentDims& dims, const float* q, std::size_t n_rows, const float* wuk, float scale,
                           float* q_latent) {
    const std::size_t qk_dim = dims.qk_dim();
    const std::size_t latent_dim = dims.latent_dim();
    for (std::size_t h = 0; h < dims.n_heads; ++h) {
        // (n_rows, d_n) · (d_n, r): head h's W_uk^T rows are a contiguous (d_n, r) block.
        gemm(Transpose::no, Transpose::no, n_rows, dims.rank, dims.nope_dim, scale, q + h * qk_dim,
             dims.q_width(), wuk + h * dims.nope_dim * dims.rank, dims.rank, 0.0f, q_latent + h * latent_dim,
             dims.n_heads * latent_dim);
        for (std::size_t b = 0; b < n_rows; ++b) {
            const float* rope = q + b * dims.q_width() + h * qk_dim + dims.nope_dim;
            float* dst = q_latent + b * dims.n_heads * latent_dim + h * latent_dim + dims.rank;
            for (std::size_t i = 0; i < dims.rope_dim; ++i) dst[i] = scale * rope[i];
        }
    }
    return 2ull * n_rows * dims.n_heads * dims.nope_dim * dims.rank;
}

std::uint64_t unabsorb_output(const LatentDims& dims, const float* latent_out, std::size_t latent_stride,
                              std::size_t n_rows, const float* wuv, float* out) {
    for (std::size_t h = 0; h < dims.n_heads; ++h) {
        // (n_rows, r) · (d_v, r)^T: head h's W_uv^T rows are a contiguous (d_v, r) block.
        gemm(Transpose::no, Transpose::yes, n_rows, dims.v_head_dim, dims.rank, 1.0f, latent_out + h * latent_stride,
             dims.n_heads * latent_stride, wuv + h * dims.v_head_dim * dims.rank, dims.rank, 0.0f,
             out + h * dims.v_head_dim, dims.out_width());
    }
    return 2ull * n_rows * dims.n_heads * dims.rank * dims.v_head_dim;
}

std::uint64_t absorb_query_naive(const LatentDims& dims, const float* q, std::size_t n_rows, const float* wuk,
                                 float scale, float* q_latent) {
    std::uint64_t multiply_adds = 0;
    for (std::size_t b = 0; b < n_rows; ++b) {
        for (std::size_t h = 0; h < dims.n_heads; ++h) {
            const float* q_head = q + b * dims.q_width() + h * dims.qk_dim();
            float* dst = q_latent + (b * dims.n_heads + h) * dims.latent_dim();
            for (std::size_t j = 0; j < dims.rank; ++j) {
                double acc = 0.0;
                for (std::size_t i = 0; i < dims.nope_dim; ++i) {
                    acc += static_cast<double>(q_head[i]) * static_cast<double>(wuk[(h * dims.nope_dim + i) * dims.rank + j]);
                    ++multiply_adds;
                }
                dst[j] = static_cast<float>(static_cast<double>(scale) * acc);
            }
            for (std::size_t i = 0; i < dims.rope_dim; ++i) dst[dims.rank + i] = scale * q_head[dims.nope_dim + i];
        }
    }
    return 2 * multiply_adds;
}

std::uint64_t unabsorb_output_naive(const LatentDims& dims, const float* latent_out, std::size_t latent_stride,
                                    std::size_t n_rows, const float* wuv, float* out) {
    std::uint64_t multiply_adds = 0;
    for (std::size_t b = 0; b < n_rows; ++b) {
        for (std::size_t h = 0; h < dims.n_heads; ++h) {
            const float* latent = latent_out + (b * dims.n_heads + h) * latent_stride;
            for (std::size_t j = 0; j < dims.v_head_dim; ++j) {
                double acc = 0.0;
                for (std::size_t i = 0; i < dims.rank; ++i) {
                    acc += static_cast<double>(latent[i]) * static_cast<double>(wuv[(h * dims.v_head_dim + j) * dims.rank + i]);
                    ++multiply_adds;
                }
                out[b * dims.out_width() + h * dims.v_head_dim + j] = static_cast<float>(acc);
            }
        }
    }
    return 2 * multiply_adds;
}

}  // namespace kvbench
