// Paged caches (docs/model.md, "Paged caches"): the seeded allocator, the paged step against the
// contiguous one bit for bit and against the uncached forward, and the block tables' bytes
// (docs/counting.md, "Paged caches").
#include "attend_group.hpp"
#include "kvbench/engine/cost_model.hpp"
#include "kvbench/engine/decoder.hpp"
#include "kvbench/engine/kernel_check.hpp"
#include "kvbench/engine/kv_block_allocator.hpp"
#include "kvbench/engine/kv_cache.hpp"
#include "kvbench/engine/reference.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

using namespace kvbench;
using kvbench::test::make_config;
using kvbench::test::spec_tolerance;
using kvbench::test::test_threads;

namespace {

ModelConfig paged(ModelConfig config, std::size_t block) {
    config.kv_block = block;
    validate(config);
    return config;
}

// One cached step at context config.seq_len over a cache filled from `seed`: its output.
std::vector<float> cached_step(const ModelConfig& config, const ModelWeights& weights, std::uint64_t seed) {
    KvCache cache(config, config.seq_len, seed);
    fill_cache_seeded(config, cache, config.seq_len - 1, seed);
    const std::vector<float> step_in = make_step_inputs(config, seed);
    std::vector<float> step_out(step_in.size());
    DecodeScratch scratch(config, config.seq_len, test_threads);
    decode_step(config, weights, cache, step_in.data(), step_out.data(), scratch);
    return step_out;
}

}  // namespace

TEST_CASE("the allocator hands out every block once, out of order, the same for a seed") {
    for (const std::size_t n_blocks : {1u, 2u, 7u, 1000u}) {
        std::vector<std::uint32_t> blocks = shuffled_free_blocks(n_blocks, 5);
        CHECK(blocks == shuffled_free_blocks(n_blocks, 5));
        std::vector<std::uint32_t> sorted = blocks;
        std::sort(sorted.begin(), sorted.end());
        std::vector<std::uint32_t> every(n_blocks);
        std::iota(every.begin(), every.end(), std::uint32_t{0});
        CHECK(sorted == every);
        if (n_blocks >= 7) {
            CHECK(blocks != every);
            CHECK(blocks != shuffled_free_blocks(n_blocks, 6));
            // Fragmented, not merely rotated: few neighbours stay neighbours.
            std::size_t adjacent = 0;
            for (std::size_t i = 1; i < n_blocks; ++i) adjacent += blocks[i] == blocks[i - 1] + 1;
            CHECK(adjacent * 4 < n_blocks);
        }
    }
}

TEST_CASE("a paged cache's rings use every block of its pool once, and store and load through the table") {
    const ModelConfig config = paged(make_config(2, 37, 32, 4, 2, 2), 8);  // dh = 8, 5 blocks a ring
    KvCache cache(config, config.seq_len, 3);
    std::vector<std::uint32_t> used;
    for (std::size_t layer = 0; layer < 2; ++layer) {
        for (std::size_t b = 0; b < 2; ++b) {
            for (std::size_t g = 0; g < 2; ++g) used.insert(used.end(), cache.block_table(layer, b, g), cache.block_table(layer, b, g) + 5);
        }
    }
    std::sort(used.begin(), used.end());
    std::vector<std::uint32_t> every(used.size());
    std::iota(every.begin(), every.end(), std::uint32_t{0});
    CHECK(used == every);
    const std::vector<float> key{1, 2, 3, 4, 5, 6, 7, 8};
    const std::vector<float> value{-1, -2, -3, -4, -5, -6, -7, -8};
    cache.store(1, 1, 0, 33, key.data(), value.data());
    std::vector<float> back(8);
    cache.load_key(1, 1, 0, 33, back.data());
    CHECK(back == key);
    cache.load_value(1, 1, 0, 33, back.data());
    CHECK(back == value);
    CHECK_THROWS_AS((void)cache.keys(0, 0, 0), std::logic_error);
}

TEST_CASE("a paged step equals the contiguous step bit for bit, for every KV type and block size") {
    // One-row tiles (MHA, dh = 64), a GQA group of 4 (dh = 32), 12 rows (the transposed tiles,
    // dh = 16), a head_dim of 24 (packed values, masked loads), and one sequence of one KV head
    // at N = 200, whose context two threads split at position 100, inside a block.
    const std::vector<ModelConfig> shapes{make_config(2, 100, 128, 2, 2, 1), make_config(2, 100, 256, 8, 2, 1),
                                          make_config(1, 100, 192, 12, 1, 1), make_config(2, 100, 48, 2, 2, 1),
                                          make_config(1, 200, 64, 1, 1, 1)};
    // f16 keys over int8 values: int8's scales read as one array by a block read in place.
    const std::vector<KvDtypePair> types{KvDtype::f32,  KvDtype::f16,  KvDtype::bf16,
                                         KvDtype::int8, KvDtype::e4m3, KvDtype::e5m2,
                                         KvDtype::q8_0, KvDtype::q4_0, {KvDtype::q8_0, KvDtype::q4_0},
                                         {KvDtype::f16, KvDtype::int8}};
    for (ModelConfig shape : shapes) {
        const ModelWeights weights = make_weights(shape, 9);
        for (const KvDtypePair& type : types) {
            shape.set_kv_dtypes(type.key, type.value);
            // Every type takes every head_dim (a block format's last block is partial): a shape
            // refused here would drop its comparison without a word.
            REQUIRE_NOTHROW(validate(shape));
            const std::vector<float> contiguous = cached_step(shape, weights, 9);
            // Where this build hands the contiguous group to the lanes kernel (which reads no block
            // table), the paged step runs the tiled one: the same sums in another order.
            const std::size_t group_rows = shape.n_heads / shape.n_kv_heads;
            const std::size_t head_dim = shape.head_dim();
            const bool same_kernel = group_kernel_for(group_rows, head_dim, false) == group_kernel_for(group_rows, head_dim, true);
            // 24 and 100 divide neither N nor the kernel's blocks; 128 holds a whole ring. A kernel
            // block over two cache blocks is read in place where its rows are f32 (16, 24 and 100
            // on AVX-512), one over more of them gathered (8). A reduced type's block is read in
            // place run by run where its runs are whole vectors of keys (16 and 32 with 8 or 16
            // lanes, but not past the split at 100), gathered elsewhere, and always for int8 and
            // q4_0 keys.
            for (const std::size_t block : {8u, 16u, 24u, 32u, 100u, 128u}) {
                INFO(describe(paged(shape, block)));
                const std::vector<float> paged_output = cached_step(paged(shape, block), weights, 9);
                if (same_kernel) {
                    CHECK(paged_output == contiguous);
                } else {
                    REQUIRE(paged_output.size() == contiguous.size());
                    float scale = 0;
                    float worst = 0;
                    for (std::size_t i = 0; i < contiguous.size(); ++i) {
                        scale = std::max(scale, std::abs(contiguous[i]));
                        worst = std::max(worst, std::abs(paged_output[i] - contiguous[i]));
                    }
                    CHECK(worst <= spec_tolerance * scale);
                }
            }
        }
    }
}

TEST_CASE("a paged step equals the uncached forward, windows and ragged rows included, and its kernel its twin") {
    ModelConfig windowed = make_config(2, 50, 64, 4, 2, 2);
    windowed.layer_windows = {20, 0};
    ModelConfig ragged = make_config(3, 45, 64, 4, 4, 1);
    ragged.seq_lens = {45, 7, 30};
    for (const ModelConfig& shape : {windowed, ragged}) {
        for (const std::size_t block : {16u, 24u}) {
            const ModelConfig config = paged(shape, block);
            INFO(describe(config));
            const ModelWeights weights = make_weights(config, 4);
            const std::vector<float> inputs = make_inputs(config, 4);
            std::vector<float> full_out(inputs.size());
            ForwardScratch forward_scratch(config, test_threads);
            KvCache cache(config, config.seq_len, 4);
            forward_full(config, weights, inputs.data(), full_out.data(), forward_scratch, &cache);
            cache.roll_back(config.seq_len - 1);
            const std::vector<float> step_in = make_step_inputs(config, 4);
            std::vector<float> step_out(step_in.size());
            DecodeScratch scratch(config, config.seq_len, test_threads);
            decode_step(config, weights, cache, step_in.data(), step_out.data(), scratch);
            CHECK(relative_error(step_out, gather_newest(config, full_out)) < spec_tolerance);

            cache.roll_back(config.seq_len - 1);
            KernelCheckInputs check_inputs;
            check_inputs.step_in = step_in.data();
            check_inputs.cache = &cache;
            check_inputs.n_threads = test_threads;
            const std::vector<KernelCheck> checks = check_kernels(config, weights, check_inputs, fast_kernels);
            const auto paged_check = std::find_if(checks.begin(), checks.end(), [](const KernelCheck& c) {
                return c.kernel.starts_with("attend_decode (paged");
            });
            REQUIRE(paged_check != checks.end());
            CHECK(paged_check->rel_error < spec_tolerance);
        }
    }
}

TEST_CASE("a paged cache's bytes: whole blocks and the tables in kv_bytes, the tables' reads in bytes") {
    // B = 2, G = 2, L = 1, N = 100, blocks of 32: 4 blocks a ring, the last with 28 empty slots.
    const ModelConfig contiguous = make_config(2, 100, 64, 4, 2, 1);  // dh = 16
    const ModelConfig config = paged(contiguous, 32);
    const std::uint64_t per_position = kv_head_position_bytes(config);  // K and V of one head
    const std::uint64_t tables = 2 * 2 * 4 * kv_block_table_entry_bytes;
    CHECK(kv_blocks_per_head(config) == 2 * 4);
    CHECK(kv_block_table_bytes(config) == tables);
    CHECK(kv_cache_bytes(config) == 2 * 2 * 128 * per_position + tables);
    CHECK(kv_cache_bytes(contiguous) == 2 * 2 * 100 * per_position);
    // The step reads the positions, not the empty slots, and each table once.
    CHECK(step_bytes(config, DecodePath::cached) == step_bytes(contiguous, DecodePath::cached) + tables);
    CHECK(step_bytes(config, DecodePath::uncached) == step_bytes(contiguous, DecodePath::uncached));
    CHECK(step_flops(config, DecodePath::cached) == step_flops(contiguous, DecodePath::cached));
    // What the cache allocates is what kv_bytes counts, for windows, ragged rows and int8's scales too.
    ModelConfig windowed = make_config(3, 70, 64, 4, 2, 2);
    windowed.layer_windows = {20, 0};
    windowed.seq_lens = {70, 9, 33};
    windowed.kv_dtype = KvDtype::int8;
    for (const std::size_t block : {1u, 16u, 24u, 128u}) {
        const ModelConfig windowed_paged = paged(windowed, block);
        CHECK(KvCache(windowed_paged, windowed_paged.seq_len).bytes() == kv_cache_bytes(windowed_paged));
        CHECK(KvCache::bytes_for(windowed_paged, windowed_paged.seq_len) == kv_cache_bytes(windowed_paged));
    }
}

TEST_CASE("a latent cache is refused a block size, naming --kv-block and the rule") {
    ModelConfig config = make_config(1, 8, 64, 4, 4, 1);
    config.mla = {16, 8, 8, 8, 0};
    config.kv_block = 16;
    CHECK_THROWS_WITH_AS(validate(config), doctest::Contains("--kv-block 16: a latent cache is not paged"), ConfigError);
    config.mla = {};
    config.kv_block = max_kv_block + 1;
    CHECK_THROWS_WITH_AS(validate(config), doctest::Contains("--kv-block"), ConfigError);
}
