#include "kvbench/engine/kv_cache.hpp"

#include "kvbench/engine/cost_model.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <stdexcept>

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
