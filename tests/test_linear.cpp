#include "kernels/small_m_gemm.hpp"

#include "kvbench/engine/blas.hpp"
#include "kvbench/engine/kernel_isa.hpp"
#include "kvbench/engine/linear.hpp"
#include "kvbench/engine/reference.hpp"
#include "kvbench/engine/rng.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using namespace kvbench;
using kvbench::test::expected_product;
using kvbench::test::random_vector;

namespace {

// A compiled isa with one of the L1 blockings and, on AVX2, one of the passes' prefetches. Each
// runs on any CPU, so each is held to the reference on every machine, not only on the CPUs that
// would choose it.
struct SmallMPath {
    SmallMIsa isa;
    SmallML1 l1;
    PassPrefetch pass_prefetch;
};

std::vector<SmallMPath> every_small_m_path() {
    std::vector<SmallMPath> paths;
    for (const SmallMIsa isa : small_m_isas()) {
        for (const SmallML1 l1 : {SmallML1::kib32, SmallML1::kib48}) {
            paths.push_back({isa, l1, PassPrefetch::spread});
            // Only the AVX2 tiles read the choice.
            if (isa == SmallMIsa::avx2) paths.push_back({isa, l1, PassPrefetch::first_pass});
        }
    }
    return paths;
}

std::string name_of(const SmallMPath& path) {
    return std::string(isa_name(path.isa)) + (path.l1 == SmallML1::kib32 ? " for a 32 KiB L1" : " for a 48 KiB L1") +
           (path.pass_prefetch == PassPrefetch::spread ? "" : ", first pass prefetching");
}

}  // namespace

TEST_CASE("small_m_gemm matches the reference for every row count, ragged shape and beta") {
    // in_dim 1, 7 and 33 are shorter than or ragged against every vector width; the chunk of
    // x is 32 or 128 KiB (small_m_gemm.cpp): 4096 spans several 32 KiB chunks from 2 rows on,
    // 33005 several 128 KiB ones even at one row, with a ragged last chunk. out_dim 1, 3 and
    // 17 leave rows after the last whole tile.
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (const SmallMPath& path : every_small_m_path()) {
        for (std::size_t n_rows = 1; n_rows <= small_m_max_rows; ++n_rows) {
            for (std::size_t in_dim : {1u, 7u, 33u, 4096u, 33005u}) {
                for (std::size_t out_dim : {1u, 3u, 17u, 1024u}) {
                    if (in_dim > 4096 && out_dim > 17) continue;  // the chunks, not the time
                    const auto x = random_vector(n_rows * in_dim, 11);
                    const auto w = random_vector(out_dim * in_dim, 12);
                    const auto y0 = random_vector(n_rows * out_dim, 13);
                    for (float beta : {0.0f, 1.0f}) {
                        // beta = 0 must not read y: NaN there would leak into the result.
                        std::vector<float> y = y0;
                        if (beta == 0.0f) std::fill(y.begin(), y.end(), nan);
                        small_m_gemm(x.data(), n_rows, in_dim, w.data(), out_dim, beta, y.data(),
                                     path.isa, path.l1, path.pass_prefetch);
                        INFO(name_of(path) << " rows=" << n_rows << " in=" << in_dim
                                    << " out=" << out_dim << " beta=" << beta);
                        const auto expected =
                            expected_product(x, n_rows, in_dim, w, out_dim, beta, y0);
                        CHECK(relative_error(y, expected) < 1e-5);
                    }
                }
            }
        }
    }
}

TEST_CASE("small_m_gemm gives the same bits wherever x and W are allocated") {
    // Same values at other offsets within a cache line and a page: the sums must not depend
    // on addresses, or the same seed would not reproduce a run bit for bit. With a 48 KiB L1,
    // 3 rows of x read far-apart weight rows on AVX2, 8 rows adjacent tiles in passes.
    const std::size_t in_dim = 2048 + 5, out_dim = 37;
    const auto w = random_vector(out_dim * in_dim, 52);
    for (const std::size_t n_rows : {3u, 8u}) {
        const auto x = random_vector(n_rows * in_dim, 51);
        std::vector<float> expected(n_rows * out_dim);
        linear_naive(x.data(), n_rows, in_dim, w.data(), out_dim, 0.0f, expected.data());
        for (const SmallMPath& path : every_small_m_path()) {
            std::vector<float> first(n_rows * out_dim);
            small_m_gemm(x.data(), n_rows, in_dim, w.data(), out_dim, 0.0f, first.data(), path.isa, path.l1, path.pass_prefetch);
            CHECK(relative_error(first, expected) < 1e-5);
            for (std::size_t offset : {1u, 3u, 4u, 15u, 1000u}) {
                std::vector<float> x_moved(offset + x.size()), w_moved(offset + w.size());
                std::copy(x.begin(), x.end(), x_moved.begin() + static_cast<std::ptrdiff_t>(offset));
                std::copy(w.begin(), w.end(), w_moved.begin() + static_cast<std::ptrdiff_t>(offset));
                std::vector<float> moved(n_rows * out_dim);
                small_m_gemm(x_moved.data() + offset, n_rows, in_dim, w_moved.data() + offset, out_dim,
                             0.0f, moved.data(), path.isa, path.l1, path.pass_prefetch);
                INFO(name_of(path) << " rows=" << n_rows << " offset=" << offset);
                CHECK(std::memcmp(moved.data(), first.data(), first.size() * sizeof(float)) == 0);
            }
        }
    }
}

TEST_CASE("small_m_gemm gives a row of x the same bits however many rows share the call") {
    // Within one chunk of columns each output is summed over the same lanes in the same order
    // whatever the tile, so splitting the rows of x into passes (the AVX2 kernel at 7 and 8
    // rows) must not change a bit. in_dim is one chunk for every row count (no chunk is
    // narrower than a page, 1024 columns). From 3 rows on every ISA's table runs one vector
    // width, so 3 copies of a row are the comparison.
    const std::size_t in_dim = 800 + 3, out_dim = 37;
    const auto w = random_vector(out_dim * in_dim, 62);
    for (const SmallMPath& path : every_small_m_path()) {
        for (std::size_t n_rows = 3; n_rows <= small_m_max_rows; ++n_rows) {
            const auto x = random_vector(n_rows * in_dim, 61);
            std::vector<float> y(n_rows * out_dim);
            small_m_gemm(x.data(), n_rows, in_dim, w.data(), out_dim, 0.0f, y.data(), path.isa, path.l1, path.pass_prefetch);
            for (std::size_t r = 0; r < n_rows; ++r) {
                std::vector<float> x3(3 * in_dim), y3(3 * out_dim);
                for (std::size_t c = 0; c < 3; ++c) {
                    std::copy_n(x.begin() + static_cast<std::ptrdiff_t>(r * in_dim), in_dim,
                                x3.begin() + static_cast<std::ptrdiff_t>(c * in_dim));
                }
                small_m_gemm(x3.data(), 3, in_dim, w.data(), out_dim, 0.0f, y3.data(), path.isa, path.l1, path.pass_prefetch);
                INFO(name_of(path) << " rows=" << n_rows << " row=" << r);
                CHECK(std::memcmp(y.data() + r * out_dim, y3.data(), out_dim * sizeof(float)) == 0);
            }
        }
    }
}

TEST_CASE("small_m_gemm gives the same bits on any number of threads") {
    // Where the threads' slabs end decides which tile a row falls in and where in it (and, where
    // a tile's rows lie far apart, how far): every output must be summed in the same order
    // wherever it falls. 97 x 803 weights are enough to go parallel, and 97 rows leave a row
    // after the last whole tile. With a 48 KiB L1, AVX2 reads far-apart rows at 1 to 3 rows of x
    // (to 8 in AVX-512VL's 32 registers).
    const std::size_t in_dim = 800 + 3, out_dim = 97;
    const auto w = random_vector(out_dim * in_dim, 72);
    const std::size_t threads_before = compute_threads();
    for (const SmallMPath& path : every_small_m_path()) {
        for (std::size_t n_rows : {1u, 2u, 3u, 4u, 8u}) {
            const auto x = random_vector(n_rows * in_dim, 71);
            std::vector<float> one_thread(n_rows * out_dim);
            set_compute_threads(1);
            small_m_gemm(x.data(), n_rows, in_dim, w.data(), out_dim, 0.0f, one_thread.data(), path.isa, path.l1, path.pass_prefetch);
            for (std::size_t n_threads : {2u, 3u, 5u}) {
                std::vector<float> y(n_rows * out_dim);
                set_compute_threads(n_threads);
                small_m_gemm(x.data(), n_rows, in_dim, w.data(), out_dim, 0.0f, y.data(), path.isa, path.l1, path.pass_prefetch);
                INFO(name_of(path) << " rows=" << n_rows << " threads=" << n_threads);
                CHECK(std::memcmp(y.data(), one_thread.data(), y.size() * sizeof(float)) == 0);
            }
        }
    }
    set_compute_threads(threads_before);
}

TEST_CASE("small_m_gemm's two pass prefetches give the same bits") {
    // They only decide when the next tile's lines are asked for. 7 and 8 rows run in passes on
    // AVX2 in 16 registers; D=4096 spans several chunks, 37 rows several tiles and a lone row.
    const std::size_t in_dim = 4096, out_dim = 37;
    const auto w = random_vector(out_dim * in_dim, 82);
    for (const SmallMIsa isa : small_m_isas()) {
        for (const SmallML1 l1 : {SmallML1::kib32, SmallML1::kib48}) {
            for (const std::size_t n_rows : {7u, 8u}) {
                const auto x = random_vector(n_rows * in_dim, 81);
                std::vector<float> spread(n_rows * out_dim), first_pass(n_rows * out_dim);
                small_m_gemm(x.data(), n_rows, in_dim, w.data(), out_dim, 0.0f, spread.data(), isa, l1,
                             PassPrefetch::spread);
                small_m_gemm(x.data(), n_rows, in_dim, w.data(), out_dim, 0.0f, first_pass.data(), isa, l1,
                             PassPrefetch::first_pass);
                INFO(isa_name(isa) << (l1 == SmallML1::kib32 ? " 32 KiB" : " 48 KiB") << " rows=" << n_rows);
                CHECK(std::memcmp(spread.data(), first_pass.data(), spread.size() * sizeof(float)) == 0);
            }
        }
    }
}

TEST_CASE("small_m_gemm lists scalar first and its default is the widest compiled kernel") {
    const auto isas = small_m_isas();
    REQUIRE(!isas.empty());
    CHECK(isas.front() == SmallMIsa::scalar);
    const std::size_t n_rows = 3, in_dim = 100, out_dim = 50;
    const auto x = random_vector(n_rows * in_dim, 21);
    const auto w = random_vector(out_dim * in_dim, 22);
    std::vector<float> by_default(n_rows * out_dim), widest(n_rows * out_dim);
    small_m_gemm(x.data(), n_rows, in_dim, w.data(), out_dim, 0.0f, by_default.data());
    small_m_gemm(x.data(), n_rows, in_dim, w.data(), out_dim, 0.0f, widest.data(), isas.back());
    CHECK(by_default == widest);
}

TEST_CASE("linear matches the reference on both sides of the small-m dispatch") {
    for (std::size_t n_rows : {1u, 2u, 5u, 8u, 9u, 12u, 16u, 17u, 33u}) {
        for (std::size_t in_dim : {7u, 257u}) {
            for (std::size_t out_dim : {3u, 130u}) {
                const auto x = random_vector(n_rows * in_dim, 31);
                const auto w = random_vector(out_dim * in_dim, 32);
                const auto y0 = random_vector(n_rows * out_dim, 33);
                for (float beta : {0.0f, 1.0f}) {
                    std::vector<float> y = y0;
                    const auto flops =
                        linear(x.data(), n_rows, in_dim, w.data(), out_dim, beta, y.data());
                    INFO("rows=" << n_rows << " in=" << in_dim << " out=" << out_dim
                                 << " beta=" << beta);
                    const auto expected = expected_product(x, n_rows, in_dim, w, out_dim, beta, y0);
                    CHECK(relative_error(y, expected) < 1e-5);
                    CHECK(flops == 2ull * n_rows * out_dim * in_dim);
                }
            }
        }
    }
}

TEST_CASE("linear at a decode projection shape matches the reference") {
    // B = 8 rows through a 4096-wide model's Wo: the shape the small-m kernel is for.
    const std::size_t n_rows = 8, in_dim = 4096, out_dim = 512;
    const auto x = random_vector(n_rows * in_dim, 41);
    const auto w = random_vector(out_dim * in_dim, 42);
    const auto y0 = random_vector(n_rows * out_dim, 43);
    std::vector<float> y = y0;
    linear(x.data(), n_rows, in_dim, w.data(), out_dim, 1.0f, y.data());
    CHECK(relative_error(y, expected_product(x, n_rows, in_dim, w, out_dim, 1.0f, y0)) < 1e-5);
}

TEST_CASE("kernel_isa names the widest compiled path, one this CPU can run") {
    const std::string isa = kernel_isa();
    const SmallMIsa widest = small_m_isas().back();
#if defined(__x86_64__)  // __builtin_cpu_supports is x86's; elsewhere only the portable path is built
    if (isa == "avx512") {
        CHECK(widest == SmallMIsa::avx512);
        CHECK(__builtin_cpu_supports("avx512f"));
    } else if (isa == "avx2+fma") {
        CHECK(widest == SmallMIsa::avx2);
        CHECK(__builtin_cpu_supports("avx2"));
        CHECK(__builtin_cpu_supports("fma"));
    } else
#endif
    {
        CHECK(isa == "portable");
        CHECK(widest == SmallMIsa::scalar);
    }
}
