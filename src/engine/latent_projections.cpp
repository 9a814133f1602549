// absorb_query, unabsorb_output and expand_keys: one product per head over gathered rows, and
// their naive twins.
#include "kvbench/engine/latent_projections.hpp"

#include "kvbench/engine/blas.hpp"
#include "kvbench/engine/linear.hpp"

#include <algorithm>

namespace kvbench {

std::uint64_t absorb_query(const LatentDims& dims, const float* q, std::size_t n_rows, WeightView wuk, float scale,
                           float* q_latent, float* rows) {
    const std::size_t qk_dim = dims.qk_dim();
    const std::size_t latent_dim = dims.latent_dim();
    float* q_nope = rows;                              // (n_rows, d_n) floats: head h's q_nope
    float* absorbed = rows + n_rows * dims.nope_dim;   // (n_rows, r) floats: q_nope · W_uk_h^T
    std::uint64_t flops = 0;
    for (std::size_t h = 0; h < dims.n_heads; ++h) {
        for (std::size_t b = 0; b < n_rows; ++b) {
            std::copy_n(q + b * dims.q_width() + h * qk_dim, dims.nope_dim, q_nope + b * dims.nope_dim);
        }
        flops += linear(q_nope, n_rows, dims.nope_dim, wuk.rows_from(h * dims.rank, dims.nope_dim), dims.rank, 0.0f,
                        absorbed);
        for (std::size_t b = 0; b < n_rows; ++b) {
            float* dst = q_latent + b * dims.n_heads * latent_dim + h * latent_dim;
            const float* src = absorbed + b * dims.rank;
            for (std::size_t j = 0; j < dims.rank; ++j) dst[j] = scale * src[j];
            const float* rope = q + b * dims.q_width() + h * qk_dim + dims.nope_dim;
            for (std::size_t i = 0; i < dims.rope_dim; ++i) dst[dims.rank + i] = scale * rope[i];
        }
    }
    return flops;
}

std::uint64_t unabsorb_output(const LatentDims& dims, const float* latent_out, std::size_t latent_stride,
                              std::size_t n_rows, WeightView wuv, float* out, float* rows) {
    float* latent = rows;                          // (n_rows, r) floats: head h's latent output
    float* head_out = rows + n_rows * dims.rank;   // (n_rows, d_v) floats
    std::uint64_t flops = 0;
    for (std::size_t h = 0; h < dims.n_heads; ++h) {
        for (std::size_t b = 0; b < n_rows; ++b) {
            std::copy_n(latent_out + (b * dims.n_heads + h) * latent_stride, dims.rank, latent + b * dims.rank);
        }
        flops += linear(latent, n_rows, dims.rank, wuv.rows_from(h * dims.v_head_dim, dims.rank), dims.v_head_dim,
                        0.0f, head_out);
        for (std::size_t b = 0; b < n_rows; ++b) {
            std::copy_n(head_out + b * dims.v_head_dim, dims.v_head_dim,
                        out + b * dims.out_width() + h * dims.v_head_dim);
        }
    }
    return flops;
}

std::uint64_t expand_keys(const LatentDims& dims, const float* latent, std::size_t n_rows, WeightView wuk,
                          float* k_nope, float* converted) {
    for (std::size_t h = 0; h < dims.n_heads; ++h) {
        const WeightView head = wuk.rows_from(h * dims.rank, dims.nope_dim);
        const float* u = static_cast<const float*>(head.elements);
        if (wuk.dtype != WeightDtype::f32) {
            for (std::size_t j = 0; j < dims.rank; ++j) head.load_row(j, dims.nope_dim, converted + j * dims.nope_dim);
            u = converted;
        }
        // (n_rows, r) · (r, d_n): W_uk_h as stored is the right-hand factor itself.
        gemm(Transpose::no, Transpose::no, n_rows, dims.nope_dim, dims.rank, 1.0f, latent, dims.rank, u, dims.nope_dim,
             0.0f, k_nope + h * dims.nope_dim, dims.n_heads * dims.nope_dim);
    }
    return 2ull * n_rows * dims.n_heads * dims.rank * dims.nope_dim;
}

std::uint64_t absorb_query_naive(const LatentDims& dims, const float* q, std::size_t n_rows, WeightView wuk,
                                 float scale, float* q_latent) {
    std::uint64_t multiply_adds = 0;
    for (std::size_t b = 0; b < n_rows; ++b) {
        for (std::size_t h = 0; h < dims.n_heads; ++h) {
            const float* q_head = q + b * dims.q_width() + h * dims.qk_dim();
            float* dst = q_latent + (b * dims.n_heads + h) * dims.latent_dim();
            for (std::size_t j = 0; j < dims.rank; ++j) {
                double acc = 0.0;
                for (std::size_t i = 0; i < dims.nope_dim; ++i) {
                    acc += static_cast<double>(q_head[i]) * static_cast<double>(wuk.at(h * dims.rank + j, i, dims.nope_dim));
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
                                    std::size_t n_rows, WeightView wuv, float* out) {
    std::uint64_t multiply_adds = 0;
    for (std::size_t b = 0; b < n_rows; ++b) {
        for (std::size_t h = 0; h < dims.n_heads; ++h) {
            const float* latent = latent_out + (b * dims.n_heads + h) * latent_stride;
            for (std::size_t j = 0; j < dims.v_head_dim; ++j) {
                double acc = 0.0;
                for (std::size_t i = 0; i < dims.rank; ++i) {
                    acc += static_cast<double>(latent[i]) * static_cast<double>(wuv.at(h * dims.v_head_dim + j, i, dims.rank));
                    ++multiply_adds;
                }
                out[b * dims.out_width() + h * dims.v_head_dim + j] = static_cast<float>(acc);
            }
        }
    }
    return 2 * multiply_adds;
}

std::uint64_t expand_keys_naive(const LatentDims& dims, const float* latent, std::size_t n_rows, WeightView wuk,
                                float* k_nope) {
    std::uint64_t multiply_adds = 0;
    for (std::size_t t = 0; t < n_rows; ++t) {
        for (std::size_t h = 0; h < dims.n_heads; ++h) {
            for (std::size_t i = 0; i < dims.nope_dim; ++i) {
                double acc = 0.0;
                for (std::size_t j = 0; j < dims.rank; ++j) {
                    acc += static_cast<double>(latent[t * dims.rank + j]) *
                           static_cast<double>(wuk.at(h * dims.rank + j, i, dims.nope_dim));
                    ++multiply_adds;
                }
                k_nope[t * dims.n_heads * dims.nope_dim + h * dims.nope_dim + i] = static_cast<float>(acc);
            }
        }
    }
    return 2 * multiply_adds;
}

}  // namespace kvbench
