#include "kvbench/engine/blas.hpp"
#include "kvbench/engine/linear.hpp"
#include "kvbench/engine/reference.hpp"
#include "kvbench/engine/rng.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <limits>
#include <vector>

using namespace kvbench;
using kvbench::test::random_vector;

TEST_CASE("linear matches the reference for one row and for many") {
    for (std::size_t n_rows : {1u, 2u, 7u, 33u}) {
        for (std::size_t out_dim : {1u, 64u, 96u}) {
            const std::size_t in_dim = 80;
            const auto x = random_vector(n_rows * in_dim, 1);
            const auto w = random_vector(out_dim * in_dim, 2);
            std::vector<float> fast(n_rows * out_dim), slow(n_rows * out_dim);
            const auto flops = linear(x.data(), n_rows, in_dim, w.data(), out_dim, 0.0f, fast.data());
            linear_naive(x.data(), n_rows, in_dim, w.data(), out_dim, 0.0f, slow.data());
            INFO("rows=" << n_rows << " out=" << out_dim);
            CHECK(relative_error(fast, slow) < 1e-5);
            CHECK(flops == 2ull * n_rows * out_dim * in_dim);
        }
    }
}

TEST_CASE("linear with beta one adds the product to what y held") {
    for (std::size_t n_rows : {1u, 5u}) {
        const std::size_t in_dim = 48, out_dim = 32;
        const auto x = random_vector(n_rows * in_dim, 3);
        const auto w = random_vector(out_dim * in_dim, 4);
        const auto residual = random_vector(n_rows * out_dim, 5);
        std::vector<float> fast = residual, product(n_rows * out_dim);
        linear(x.data(), n_rows, in_dim, w.data(), out_dim, 1.0f, fast.data());
        linear_naive(x.data(), n_rows, in_dim, w.data(), out_dim, 0.0f, product.data());
        for (std::size_t i = 0; i < product.size(); ++i) product[i] += residual[i];
        CHECK(relative_error(fast, product) < 1e-5);
    }
}

TEST_CASE("gemm honours transposes and row strides") {
    // C (3, 2) = A^T (3, 4) · B (4, 2), A stored (4, 5) with only 3 columns used.
    const std::size_t m = 3, n = 2, k = 4, lda = 5;
    const auto a = random_vector(k * lda, 6);
    const auto b = random_vector(k * n, 7);
    std::vector<float> c(m * n);
    gemm(Transpose::yes, Transpose::no, m, n, k, 1.0f, a.data(), lda, b.data(), n, 0.0f, c.data(), n);
    for (std::size_t i = 0; i < m; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
            double expected = 0;
            for (std::size_t p = 0; p < k; ++p) expected += double(a[p * lda + i]) * double(b[p * n + j]);
            CHECK(c[i * n + j] == doctest::Approx(expected).epsilon(1e-5));
        }
    }
}

TEST_CASE("thread count set for compute is what openmp and openblas report") {
    const std::size_t before = compute_threads();
    set_compute_threads(1);
    CHECK(compute_threads() == 1);
    set_compute_threads(2);
    CHECK(compute_threads() == 2);
    set_compute_threads(before);
    CHECK(blas_threading() == "openmp");
    CHECK(blas_library().find("OpenBLAS") != std::string::npos);
}

TEST_CASE("relative error catches nan and scales by the largest expected value") {
    const std::vector<float> expected{1.0f, -4.0f, 2.0f};
    CHECK(relative_error(std::vector<float>{1.0f, -4.0f, 2.0f}, expected) == 0.0);
    CHECK(relative_error(std::vector<float>{1.0f, -4.0f, 2.4f}, expected) == doctest::Approx(0.1));
    const float nan = std::numeric_limits<float>::quiet_NaN();
    CHECK(relative_error(std::vector<float>{nan, -4.0f, 2.0f}, expected) > 1.0);
}
