#include "kvbench/engine/kv_cache.hpp"

#include "kvbench/engine/cost_model.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <limits>
#include <stdexcept>
#include <vector>

using namespace kvbench;
using kvbench::test::make_config;

TEST_CASE("allocated cache bytes equal kv_bytes at its capacity") {
    for (std::size_t kv_heads : {1u, 2u, 8u}) {
        const auto config = make_config(3, 37, 64, 8, kv_heads, 2);
        const KvCache cache(config, config.seq_len);
        CHECK(cache.bytes() == kv_cache_bytes(config));
    }
}

TEST_CASE("each layer, batch row and kv head owns a disjoint contiguous block") {
    const auto config = make_config(2, 5, 16, 4, 2, 3);  // dh = 4
    KvCache cache(config, 5);
    const std::size_t block = 5 * 4;
    CHECK(cache.keys(0, 0, 1) - cache.keys(0, 0, 0) == static_cast<std::ptrdiff_t>(block));
    CHECK(cache.keys(0, 1, 0) - cache.keys(0, 0, 0) == static_cast<std::ptrdiff_t>(2 * block));
    CHECK(cache.keys(1, 0, 0) - cache.keys(0, 0, 0) == static_cast<std::ptrdiff_t>(4 * block));
    CHECK(cache.values(2, 1, 1) - cache.values(0, 0, 0) == static_cast<std::ptrdiff_t>(11 * block));
    // Writing the last block's last element stays inside the allocation (checked by ASan builds too).
    cache.values(2, 1, 1)[block - 1] = 1.0f;
    CHECK(cache.values(2, 1, 1)[block - 1] == 1.0f);
}

TEST_CASE("extending past capacity throws and leaves the length alone") {
    const auto config = make_config(1, 4, 16, 4, 4, 1);
    KvCache cache(config, 4);
    cache.extend_to(4);
    CHECK(cache.length() == 4);
    CHECK_THROWS_AS(cache.extend_to(5), std::out_of_range);
    CHECK_THROWS_AS(cache.require_writable(4), std::out_of_range);
    CHECK(cache.length() == 4);
}

TEST_CASE("roll back forgets positions and never grows the cache") {
    const auto config = make_config(1, 8, 16, 4, 4, 1);
    KvCache cache(config, 8);
    cache.extend_to(6);
    cache.roll_back(3);
    CHECK(cache.length() == 3);
    CHECK_NOTHROW(cache.require_writable(3));
    CHECK_THROWS_AS(cache.require_writable(5), std::out_of_range);
    CHECK_THROWS_AS(cache.roll_back(4), std::out_of_range);
}

TEST_CASE("a cache says whether it ever stored an 8-bit float pattern the kernels' conversion fixes up") {
    // e4m3 writes S.1111.111 only for a NaN (it saturates the rest to ±448); e5m2 writes
    // S.11111.xx for a NaN, an infinity and what overflows to one. The kernels read a cache that
    // says it holds none without scanning its blocks, so a missed write would read a NaN as 480.
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    struct Case {
        KvDtype dtype;
        float planted;
        bool in_values;
        bool holds;
    };
    for (const Case c : {Case{KvDtype::e4m3, nan, false, true}, Case{KvDtype::e4m3, nan, true, true},
                         Case{KvDtype::e4m3, inf, false, false}, Case{KvDtype::e4m3, 1e9f, true, false},
                         Case{KvDtype::e5m2, nan, true, true}, Case{KvDtype::e5m2, inf, false, true},
                         Case{KvDtype::e5m2, 1e9f, true, true}, Case{KvDtype::e5m2, 57000.0f, false, false},
                         Case{KvDtype::f16, nan, false, false}, Case{KvDtype::q8_0, nan, true, false}}) {
        CAPTURE(kv_dtype_info(c.dtype).name);
        CAPTURE(c.planted);
        CAPTURE(c.in_values);
        ModelConfig config = make_config(2, 8, 64, 4, 2, 2);
        config.kv_dtype = c.dtype;
        KvCache cache(config, config.seq_len);
        std::vector<float> k(config.head_dim(), 0.5f), v(config.head_dim(), -0.25f);
        for (std::size_t pos = 0; pos < config.seq_len; ++pos) cache.store(1, 1, 1, pos, k.data(), v.data());
        CHECK_FALSE(cache.holds_fp8_fix_patterns());
        (c.in_values ? v : k)[config.head_dim() - 1] = c.planted;
        cache.store(1, 1, 1, 3, k.data(), v.data());
        CHECK(cache.holds_fp8_fix_patterns() == c.holds);
        cache.store(1, 1, 1, 3, k.data(), v.data());  // stays set
        CHECK(cache.holds_fp8_fix_patterns() == c.holds);

        // The same through a conversion of a whole f32 cache, which writes every vector again.
        ModelConfig f32_config = config;
        f32_config.kv_dtype = KvDtype::f32;
        KvCache source(f32_config, config.seq_len);
        KvCache converted(config, config.seq_len);
        converted.assign_converted(source);
        CHECK_FALSE(converted.holds_fp8_fix_patterns());
        source.store(0, 1, 0, 5, k.data(), v.data());
        converted.assign_converted(source);
        CHECK(converted.holds_fp8_fix_patterns() == c.holds);
    }
    // Keys and values of different types: each side by its own.
    ModelConfig config = make_config(1, 4, 32, 2, 2, 1);
    config.set_kv_dtypes(KvDtype::f32, KvDtype::e5m2);
    KvCache cache(config, config.seq_len);
    std::vector<float> k(config.head_dim(), std::numeric_limits<float>::infinity()), v(config.head_dim(), 1.0f);
    cache.store(0, 0, 1, 2, k.data(), v.data());
    CHECK_FALSE(cache.holds_fp8_fix_patterns());
    cache.store(0, 0, 1, 2, v.data(), k.data());
    CHECK(cache.holds_fp8_fix_patterns());
}
