// small_m_gemm_lanes (the rows of x in vector lanes, AVX-512 builds) against the naive twin, and
// linear()'s choice of it.
#include "kernels/small_m_lanes.hpp"

#include "kvbench/engine/blas.hpp"
#include "kvbench/engine/linear.hpp"
#include "kvbench/engine/reference.hpp"
#include "kvbench/engine/weight_matrix.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using namespace kvbench;
using kvbench::test::expected_product;
using kvbench::test::random_vector;

TEST_CASE("small_m_gemm_lanes matches the naive twin for every vector count, ragged shape and beta") {
    if (!small_m_lanes_compiled()) {
        MESSAGE("small_m_gemm_lanes is built for AVX-512 only; this build has none to test");
        return;
    }
    // 1, 15, 16 and 17 rows around one vector of rows, 32 and 33 around two, 48 and 64 fill three
    // and four. in_dim 1 and 7 are shorter than a step of columns, 263 leaves a ragged step
    // after a whole block of 256 columns, 4099 spans sixteen blocks and a ragged seventeenth.
    // out_dim 1 and 3 are below every tile, 37 leaves rows after the last whole tile.
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (std::size_t n_rows : {1u, 9u, 15u, 16u, 17u, 32u, 33u, 48u, 49u, 64u}) {
        for (std::size_t in_dim : {1u, 7u, 263u, 4099u}) {
            for (std::size_t out_dim : {1u, 3u, 37u}) {
                const auto x = random_vector(n_rows * in_dim, 91);
                const auto w = random_vector(out_dim * in_dim, 92);
                const auto y0 = random_vector(n_rows * out_dim, 93);
                for (float beta : {0.0f, 1.0f}) {
                    // beta = 0 must not read y: NaN there would leak into the result.
                    std::vector<float> y = y0;
                    if (beta == 0.0f) std::fill(y.begin(), y.end(), nan);
                    small_m_gemm_lanes(x.data(), n_rows, in_dim, w.data(), out_dim, beta, y.data());
                    INFO("rows=" << n_rows << " in=" << in_dim << " out=" << out_dim << " beta=" << beta);
                    CHECK(relative_error(y, expected_product(x, n_rows, in_dim, w, out_dim, beta, y0)) < 1e-5);
                }
            }
        }
    }
}

TEST_CASE("small_m_gemm_typed_lanes matches the naive twin on bf16, f16 and int8 weights") {
    if (!small_m_lanes_compiled()) {
        MESSAGE("small_m_gemm_typed_lanes is built for AVX-512 only; this build has none to test");
        return;
    }
    // 263 columns: a whole block of 256 converted, then 7, ragged against a vector; 4099 sixteen
    // blocks and a ragged seventeenth. 37 weight rows leave rows after the last whole tile.
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (const WeightDtype dtype : {WeightDtype::bf16, WeightDtype::f16, WeightDtype::int8}) {
        for (std::size_t in_dim : {7u, 263u, 4099u}) {
            const std::size_t out_dim = 37;
            const WeightMatrix f32(WeightDtype::f32, out_dim, in_dim, random_vector(out_dim * in_dim, 98));
            const WeightMatrix w(dtype, out_dim, in_dim, f32.to_f32());
            const WeightView view = w.view();
            for (std::size_t n_rows : {9u, 16u, 17u, 40u, 64u}) {
                const auto x = random_vector(n_rows * in_dim, 99);
                const auto y0 = random_vector(n_rows * out_dim, 100);
                for (float beta : {0.0f, 1.0f}) {
                    std::vector<float> fast = y0, naive = y0;
                    if (beta == 0.0f) std::fill(fast.begin(), fast.end(), nan);
                    small_m_gemm_typed_lanes(x.data(), n_rows, in_dim, view.elements, view.scales, dtype, out_dim, beta,
                                             fast.data());
                    linear_naive(x.data(), n_rows, in_dim, view, out_dim, beta, naive.data());
                    INFO(std::string(weight_dtype_info(dtype).name) << " rows=" << n_rows << " in=" << in_dim
                                                                   << " beta=" << beta);
                    CHECK(relative_error(fast, naive) < 1e-5);
                }
            }
        }
    }
}

TEST_CASE("small_m_gemm_lanes gives the same bits on any number of threads and wherever x and W lie") {
    if (!small_m_lanes_compiled()) {
        MESSAGE("small_m_gemm_lanes is built for AVX-512 only; this build has none to test");
        return;
    }
    // 301 weight rows: enough to go parallel, and rows after the last whole tile for every tile.
    const std::size_t in_dim = 803, out_dim = 301;
    const auto w = random_vector(out_dim * in_dim, 95);
    const std::size_t threads_before = compute_threads();
    for (std::size_t n_rows : {12u, 16u, 24u, 40u, 64u}) {
        const auto x = random_vector(n_rows * in_dim, 94);
        std::vector<float> one_thread(n_rows * out_dim);
        set_compute_threads(1);
        small_m_gemm_lanes(x.data(), n_rows, in_dim, w.data(), out_dim, 0.0f, one_thread.data());
        for (std::size_t n_threads : {2u, 3u, 5u}) {
            std::vector<float> y(n_rows * out_dim);
            set_compute_threads(n_threads);
            small_m_gemm_lanes(x.data(), n_rows, in_dim, w.data(), out_dim, 0.0f, y.data());
            INFO("rows=" << n_rows << " threads=" << n_threads);
            CHECK(std::memcmp(y.data(), one_thread.data(), y.size() * sizeof(float)) == 0);
        }
        set_compute_threads(threads_before);
        for (std::size_t offset : {1u, 3u, 1000u}) {
            std::vector<float> x_moved(offset + x.size()), w_moved(offset + w.size());
            std::copy(x.begin(), x.end(), x_moved.begin() + static_cast<std::ptrdiff_t>(offset));
            std::copy(w.begin(), w.end(), w_moved.begin() + static_cast<std::ptrdiff_t>(offset));
            std::vector<float> moved(n_rows * out_dim);
            small_m_gemm_lanes(x_moved.data() + offset, n_rows, in_dim, w_moved.data() + offset, out_dim, 0.0f,
                               moved.data());
            INFO("rows=" << n_rows << " offset=" << offset);
            CHECK(std::memcmp(moved.data(), one_thread.data(), moved.size() * sizeof(float)) == 0);
        }
    }
    set_compute_threads(threads_before);
}

TEST_CASE("linear takes 9 to 64 rows of x to the lanes kernels, and counts their buffer") {
    const std::size_t in_dim = 300, out_dim = 50;
    const auto w = random_vector(out_dim * in_dim, 97);
    const WeightMatrix bf16(WeightDtype::bf16, out_dim, in_dim, w);
    for (const WeightDtype dtype : {WeightDtype::f32, WeightDtype::bf16}) {
        const WeightView view = dtype == WeightDtype::f32 ? WeightView{w.data(), nullptr, WeightDtype::f32} : bf16.view();
        const std::size_t min_rows = small_m_lanes_min_rows(dtype);
        for (std::size_t n_rows = 1; n_rows <= small_m_lanes_max_rows + 1; ++n_rows) {
            const auto x = random_vector(n_rows * in_dim, 96);
            std::vector<float> y(n_rows * out_dim), naive(n_rows * out_dim), lanes(n_rows * out_dim);
            linear(x.data(), n_rows, in_dim, view, out_dim, 0.0f, y.data());
            linear_naive(x.data(), n_rows, in_dim, view, out_dim, 0.0f, naive.data());
            INFO(std::string(weight_dtype_info(dtype).name) << " rows=" << n_rows);
            CHECK(relative_error(y, naive) < 1e-5);
            const bool takes = small_m_lanes_takes(n_rows, dtype);
            CHECK(takes == (min_rows != 0 && n_rows >= min_rows && n_rows <= small_m_lanes_max_rows));
            if (takes) {
                // The same bits as the kernel called alone: linear() ran it.
                if (dtype == WeightDtype::f32) {
                    small_m_gemm_lanes(x.data(), n_rows, in_dim, w.data(), out_dim, 0.0f, lanes.data());
                } else {
                    small_m_gemm_typed_lanes(x.data(), n_rows, in_dim, view.elements, view.scales, dtype, out_dim, 0.0f,
                                             lanes.data());
                }
                CHECK(std::memcmp(y.data(), lanes.data(), y.size() * sizeof(float)) == 0);
                CHECK(linear_lanes_bytes(n_rows, in_dim, dtype) >= (n_rows + 15) / 16 * 16 * in_dim * sizeof(float));
            } else if (n_rows < min_rows || min_rows == 0) {
                CHECK(linear_lanes_bytes(n_rows, in_dim, dtype) == 0);
            }
        }
        // More rows than the kernels take: a call over any subset of them may still take them, so
        // the bound is 64 rows' buffer.
        CHECK(linear_lanes_bytes(1000, in_dim, dtype) == linear_lanes_bytes(small_m_lanes_max_rows, in_dim, dtype));
    }
}
