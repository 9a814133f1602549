#include "kvbench/engine/cost_model.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>

using namespace kvbench;
using kvbench::test::make_config;

TEST_CASE("cached and uncached flops match hand-computed values") {
    // B=2 N=10 D=8 H=2 G=1 L=3: dh=4, P = 2·64 + 2·8·4 = 192.
    const auto config = make_config(2, 10, 8, 2, 1, 3);
    CHECK(weights_per_layer(config) == 192);
    // L·B·(2P + 4·H·dh·N) = 3·2·(384 + 4·2·4·10) = 3·2·704
    CHECK(step_flops(config, DecodePath::cached) == 4224);
    // L·B·(2·N·P + 2·H·dh·N·(N+1)) = 3·2·(3840 + 2·8·10·11) = 3·2·5600
    CHECK(step_flops(config, DecodePath::uncached) == 33600);
}

TEST_CASE("bytes match hand-computed values") {
    const auto config = make_config(2, 10, 8, 2, 1, 3);
    // L·(P·4 + 2·B·N·G·dh·4 + 2·B·D·4) = 3·(768 + 640 + 128)
    CHECK(step_bytes(config, DecodePath::cached) == 4608);
    // L·(P·4 + 2·B·N·G·dh·4 + 2·B·N·D·4) = 3·(768 + 640 + 1280)
    CHECK(step_bytes(config, DecodePath::uncached) == 8064);
    // 2·L·B·N·G·dh·4
    CHECK(kv_cache_bytes(config) == 1920);
}

TEST_CASE("an explicit head dimension: flops and bytes match hand-computed values") {
    // B=2 N=10 D=8 H=2 G=1 L=3 dh=6, so H·dh = 12 != D:
    // P = 2·D·H·dh + 2·D·G·dh = 2·8·12 + 2·8·6 = 288.
    const auto config = make_config(2, 10, 8, 2, 1, 3, 6);
    CHECK(weights_per_layer(config) == 288);
    // L·B·(2P + 4·H·dh·N) = 3·2·(576 + 480)
    CHECK(step_flops(config, DecodePath::cached) == 6336);
    // L·B·(2·N·P + 2·H·dh·N·(N+1)) = 3·2·(5760 + 2640)
    CHECK(step_flops(config, DecodePath::uncached) == 50400);
    // L·(P·4 + 2·B·N·G·dh·4 + 2·B·D·4) = 3·(1152 + 960 + 128): activations stay D wide
    CHECK(step_bytes(config, DecodePath::cached) == 6720);
    // L·(P·4 + 2·B·N·G·dh·4 + 2·B·N·D·4) = 3·(1152 + 960 + 1280)
    CHECK(step_bytes(config, DecodePath::uncached) == 10176);
    // 2·L·B·N·G·dh·4
    CHECK(kv_cache_bytes(config) == 2880);
}

TEST_CASE("gemma-7b's layer shape: 16 heads of 256 at D=3072") {
    // P = 2·3072·4096 + 2·3072·4096 = 50331648.
    const auto config = make_config(1, 256, 3072, 16, 16, 1, 256);
    CHECK(weights_per_layer(config) == 50331648);
    // 2P + 4·4096·256
    CHECK(step_flops(config, DecodePath::cached) == 104857600);
    // 2·256·P + 2·4096·256·257
    CHECK(step_flops(config, DecodePath::uncached) == 26308771840ull);
    // 2·256·16·256·4
    CHECK(kv_cache_bytes(config) == 8388608);
}

TEST_CASE("a head dimension below D/H shrinks q, Wo and the cache") {
    // D=96 H=4 G=2 dh=16 (D/H = 24): P = 2·96·64 + 2·96·32 = 18432.
    const auto config = make_config(1, 5, 96, 4, 2, 1, 16);
    CHECK(weights_per_layer(config) == 18432);
    CHECK(step_flops(config, DecodePath::cached) == 2 * 18432 + 4 * 64 * 5);
    CHECK(kv_cache_bytes(config) == 2 * 5 * 32 * 4);
}

TEST_CASE("an explicit head dimension equal to D/H counts as none") {
    const auto implicit = make_config(2, 100, 1024, 16, 4, 2);
    const auto explicit_dh = make_config(2, 100, 1024, 16, 4, 2, 64);
    for (const DecodePath path : {DecodePath::cached, DecodePath::uncached}) {
        CHECK(step_cost(implicit, path) == step_cost(explicit_dh, path));
    }
}

TEST_CASE("mqa kv bytes are mha kv bytes divided by the head count") {
    const auto mha = make_config(4, 4096, 4096, 32, 32, 2);
    auto mqa = mha;
    mqa.n_kv_heads = 1;
    auto gqa = mha;
    gqa.n_kv_heads = 8;
    CHECK(kv_cache_bytes(mqa) * 32 == kv_cache_bytes(mha));
    CHECK(kv_cache_bytes(gqa) * 4 == kv_cache_bytes(mha));
}

TEST_CASE("large configurations count without overflow") {
    // B=64 N=131072 D=8192 H=64 G=8 (dh 128) L=80: P = 2·8192² + 2·8192·1024 = 150994944.
    const auto config = make_config(64, 131072, 8192, 64, 8, 80);
    // 2·80·64·131072·1024·4 bytes = 5 TiB, well past 32 bits.
    CHECK(kv_cache_bytes(config) == 2ull * 80 * 64 * 131072 * 1024 * 4);
    // L·B·(2·N·P + 2·H·dh·N·(N+1)) = 1.6e18, within 2^64 by a factor of 11.
    CHECK(step_flops(config, DecodePath::uncached) == 1643824859106508800ull);
    // L·B·(2·P + 4·H·dh·N)
    CHECK(step_flops(config, DecodePath::cached) == 23536420782080ull);
    // L·(4·P + 2·B·N·G·dh·4 + 2·B·D·4), and the uncached path's 2·B·N·D·4 activations
    CHECK(step_bytes(config, DecodePath::cached) == 5546212065280ull);
    CHECK(step_bytes(config, DecodePath::uncached) == 49526341632000ull);
}

TEST_CASE("step_cost bundles the three counts") {
    // B=1 N=100 D=64 H=4 G=2 (dh 16) L=1: P = 2·64·64 + 2·64·32 = 12288 weights.
    const auto config = make_config(1, 100, 64, 4, 2, 1);
    const StepCost cached = step_cost(config, DecodePath::cached);
    CHECK(cached.flops == 2 * 12288 + 4 * 64 * 100);                       // 2·P + 4·H·dh·N
    CHECK(cached.bytes == 12288 * 4 + 2 * 100 * 32 * 4 + 2 * 64 * 4);     // weights, K and V, x in and out
    CHECK(cached.kv_bytes == 2 * 100 * 32 * 4);                           // 2·N·G·dh·4
    const StepCost uncached = step_cost(config, DecodePath::uncached);
    CHECK(uncached.flops == 2 * 100 * 12288 + 2 * 64 * 100 * 101);        // 2·N·P + 2·H·dh·N·(N+1)
    CHECK(uncached.bytes == 12288 * 4 + 2 * 100 * 32 * 4 + 2 * 100 * 64 * 4);
    CHECK(uncached.kv_bytes == cached.kv_bytes);
    CHECK(std::string(path_name(DecodePath::cached)) == "cached");
    CHECK(std::string(path_name(DecodePath::uncached)) == "uncached");
}
