// Shared prefixes (docs/model.md, "Shared prefixes"): one copy of the batch's first P positions,
// read once per step for every sequence, on both paths, contiguous and paged, against the naive
// twins and the step that shares nothing, and counted once (docs/counting.md).
#include "kvbench/engine/cost_model.hpp"
#include "kvbench/engine/decoder.hpp"
#include "kvbench/engine/kernel_check.hpp"
#include "kvbench/engine/reference.hpp"

#include "attention_flops.hpp"
#include "kernel_check_support.hpp"
#include "shared_prefix_attention.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

using namespace kvbench;
using kvbench::test::make_config;
using kvbench::test::ragged_batch;
using kvbench::test::spec_tolerance;
using kvbench::test::test_threads;

namespace {

ModelConfig with_prefix(ModelConfig config, std::size_t shared_prefix, std::size_t kv_block = 0) {
    config.shared_prefix = shared_prefix;
    config.kv_block = kv_block;
    validate(config);
    return config;
}

// A config as given, and paged in blocks of 8 and of 24: blocks that the prefix fills exactly or
// leaves partly filled, and blocks longer than a row's own positions.
std::vector<ModelConfig> contiguous_and_paged(const ModelConfig& config) {
    std::vector<ModelConfig> configs{config};
    for (const std::size_t block : {8u, 24u}) configs.push_back(with_prefix(config, config.shared_prefix, block));
    return configs;
}

// The runner's order: a prefill of the prompt `inputs` (make_inputs of the shared config, so the
// first P positions are the same in every sequence) rolled back Q positions, then the cached step.
struct StepResult {
    std::vector<float> step_out;  // (Q, B, D) floats
    std::vector<float> newest;    // the forward's rows of the same positions
    FlopCount cached_flops;
};
StepResult run_step(const ModelConfig& config, const std::vector<float>& inputs, const std::vector<float>& step_in,
                    std::uint64_t seed, const StepKernels& kernels = fast_kernels) {
    const ModelWeights weights = make_weights(config, seed);
    std::vector<float> full_out(inputs.size());
    ForwardScratch forward_scratch(config, test_threads);
    KvCache cache(config, config.seq_len);
    forward_full(config, weights, inputs.data(), full_out.data(), forward_scratch, &cache, nullptr, {&kernels, {}, {}});
    cache.roll_back(config.seq_len - config.n_query_tokens);
    StepResult result;
    result.step_out.resize(step_in.size());
    DecodeScratch decode_scratch(config, config.seq_len, test_threads);
    result.cached_flops =
        decode_step(config, weights, cache, step_in.data(), result.step_out.data(), decode_scratch, {&kernels, {}, {}});
    result.newest = gather_newest(config, full_out);
    return result;
}

}  // namespace

TEST_CASE("a shared prefix's inputs are the same in every sequence, and only its positions") {
    const ModelConfig config = with_prefix(make_config(3, 10, 8, 2, 1, 1), 4);
    const std::vector<float> inputs = make_inputs(config, 7);
    for (std::size_t b = 1; b < 3; ++b) {
        for (std::size_t t = 0; t < 10; ++t) {
            const auto row = inputs.begin() + static_cast<std::ptrdiff_t>((b * 10 + t) * 8);
            const bool same = std::equal(row, row + 8, inputs.begin() + static_cast<std::ptrdiff_t>(t * 8));
            CHECK(same == (t < 4));
        }
    }
    // A window of positions draws what the whole prompt holds there, prefix and not.
    const std::vector<float> window = make_input_positions(config, 7, 2, 5);
    CHECK(window == gather_positions(inputs, 3, 10, 8, 2, 5));
    // A ragged batch's sequences share the same first P positions, and hold at each of their own
    // what the uniform batch holds there.
    const ModelConfig uneven = with_prefix(ragged_batch(make_config(1, 1, 8, 2, 1, 1), {10, 6, 8}), 4);
    const std::vector<float> packed = make_inputs(uneven, 7);
    for (std::size_t b = 0; b < 3; ++b) {
        for (std::size_t t = 0; t < uneven.seq_len_of(b); ++t) {
            const auto row = packed.begin() + static_cast<std::ptrdiff_t>((uneven.first_token(b) + t) * 8);
            CHECK(std::equal(row, row + 8, inputs.begin() + static_cast<std::ptrdiff_t>((b * 10 + t) * 8)));
        }
    }
}

TEST_CASE("a shared prefix's cached step equals its uncached forward, on both kernels, contiguous and paged") {
    ModelConfig full = make_config(3, 24, 32, 4, 2, 2);
    full.block = BlockKind::full;
    full.ffn_dim = 48;
    ModelConfig two_tokens = make_config(2, 30, 32, 4, 1, 1);
    two_tokens.n_query_tokens = 2;
    // A window layer before a global one: its ring keeps each row's own last positions, within
    // its own part (W = 6) or reaching back into the prefix (W = 10 over 8 own positions).
    ModelConfig windowed = full;
    windowed.layer_windows = {6, 0};
    ModelConfig reaching = make_config(3, 20, 32, 4, 2, 2);
    reaching.layer_windows = {10, 0};
    ModelConfig windowed_tokens = two_tokens;
    windowed_tokens.n_layers = 2;
    windowed_tokens.layer_windows = {5, 0};
    // Ragged: rows behind the longest by their lags, the shortest holding one position of its own
    // after the prefix, or two for Q = 2; RoPE turns each row at its own positions.
    for (const ModelConfig& shape :
         {with_prefix(make_config(3, 20, 32, 4, 4, 1), 8), with_prefix(make_config(4, 70, 32, 8, 2, 2), 35),
          with_prefix(make_config(5, 9, 32, 4, 1, 1), 8), with_prefix(full, 12), with_prefix(two_tokens, 28),
          with_prefix(ragged_batch(make_config(1, 1, 32, 8, 2, 2), {40, 13, 27, 40}), 12),
          with_prefix(ragged_batch(full, {24, 9, 17}), 8), with_prefix(ragged_batch(two_tokens, {30, 12}), 10),
          with_prefix(windowed, 12), with_prefix(reaching, 12), with_prefix(windowed_tokens, 20),
          with_prefix(ragged_batch(windowed, {24, 15, 20}), 8)}) {
        for (const ModelConfig& config : contiguous_and_paged(shape)) {
            INFO(describe(config));
            for (const StepKernels* kernels : {&fast_kernels, &naive_kernels}) {
                const StepResult result =
                    run_step(config, make_inputs(config, 11), make_step_inputs(config, 11), 11, *kernels);
                CHECK(relative_error(result.step_out, result.newest) < spec_tolerance);
                // Every query still attends to every position: the FLOPs of the batch sharing nothing.
                CHECK(result.cached_flops.useful == step_flops(config, DecodePath::cached));
            }
        }
    }
}

TEST_CASE("the shared step equals the step that shares nothing over the same prompt") {
    // The same tokens, cached once or B times: the two steps differ only in the order of their
    // sums (docs/model.md, "Shared prefixes": within the kernels' tolerance).
    for (const ModelConfig& shared : {with_prefix(make_config(4, 40, 32, 4, 2, 1), 20),
                                      with_prefix(make_config(3, 33, 64, 8, 8, 2), 32),
                                      with_prefix(make_config(4, 40, 32, 4, 2, 1), 20, 8),
                                      with_prefix(ragged_batch(make_config(1, 1, 32, 4, 2, 1), {40, 21, 33, 28}), 20),
                                      with_prefix(ragged_batch(make_config(1, 1, 32, 4, 2, 1), {40, 21, 33, 28}), 20, 8)}) {
        INFO(describe(shared));
        ModelConfig unshared = shared;
        unshared.shared_prefix = 0;
        const std::vector<float> inputs = make_inputs(shared, 3);
        const std::vector<float> step_in = make_step_inputs(shared, 3);
        const StepResult with = run_step(shared, inputs, step_in, 3);
        const StepResult without = run_step(unshared, inputs, step_in, 3);
        CHECK(relative_error(with.step_out, without.step_out) < kernel_check_tolerance);
        CHECK(with.cached_flops.useful == without.cached_flops.useful);
    }
}

namespace {

// What attend_decode over a shared prefix executes, from attend_group's documented padding
// (docs/counting.md, "Executed FLOPs"): each KV head's prefix splits scored for the B·group rows of
// every sequence at once, then each sequence's own positions in splits of their own (cut for the
// longest row's, a ragged row's shorter); on a paged cache by the tiled kernel alone.
std::uint64_t documented_shared_prefix_executed(const ModelConfig& config, std::size_t n_ctx, const DecodeAttentionScratch& scratch) {
    const std::size_t n_prefix = std::min(config.shared_prefix, n_ctx), n_suffix = n_ctx - n_prefix;
    const std::size_t threads = scratch.n_threads;
    const std::size_t prefix_splits =
        decode_split_count(config.n_kv_heads, n_prefix, threads, scratch.shared_prefix->max_prefix_splits);
    const std::size_t suffix_splits =
        decode_split_count(config.n_batch * config.n_kv_heads, n_suffix, threads, scratch.max_splits);
    const std::uint64_t group = config.group_size(), dh = config.head_dim();
    std::uint64_t executed = 0;
    const bool paged = config.is_paged();
    for (std::uint64_t k = 0; k < prefix_splits; ++k) {
        const std::uint64_t length = test::split_length(n_prefix, prefix_splits, k);
        executed += config.n_kv_heads * test::documented_group_flops(config.n_batch * group, dh, length, paged);
    }
    for (std::size_t b = 0; b < config.n_batch; ++b) {
        const std::size_t own = n_suffix - config.seq_lag_of(b);
        for (std::uint64_t k = 0; k < suffix_splits; ++k) {
            const std::uint64_t length = test::split_length(own, suffix_splits, k);
            executed += config.n_kv_heads * test::documented_group_flops(group, dh, length, paged);
        }
    }
    return executed;
}

}  // namespace

TEST_CASE("attend_decode over a shared prefix equals its naive twin in every KV type, with the prefix split, paged too") {
    // G = 1 on 8 threads: one prefix task per KV head is too few, so the prefix is cut in splits,
    // and B·G = 3 suffix tasks are cut too. B·group_size = 12 rows (B = 3, group 4) and 8 rows
    // (B = 8, group 1) take each kernel's row shapes; a ragged batch's rows read their own
    // positions through splits cut for the longest.
    for (const ModelConfig& base : {make_config(3, 300, 64, 4, 1, 1), make_config(8, 200, 32, 2, 2, 1),
                                    ragged_batch(make_config(1, 1, 64, 4, 1, 1), {300, 160, 230})}) {
        for (const KvDtype dtype : {KvDtype::f32, KvDtype::f16, KvDtype::bf16, KvDtype::int8, KvDtype::q8_0,
                                    KvDtype::q4_0, KvDtype::e4m3, KvDtype::e5m2}) {
            // Paged: blocks of 16 split the prefix and the rows inside blocks; of 64, each split
            // reads one or two blocks, in place or gathered.
            for (const std::size_t block : {0u, 16u, 64u}) {
                ModelConfig config = with_prefix(base, base.shortest_seq_len() / 2, block);
                config.kv_dtype = dtype;
                INFO(describe(config));
                KvCache cache(config, config.seq_len, 5);
                fill_cache_seeded(config, cache, config.seq_len, 3);
                const std::vector<float> q = test::random_vector(config.n_batch * config.q_dim(), 4);
                DecodeAttentionScratch scratch(config, config.seq_len, 8);
                std::vector<float> fast(q.size()), naive(q.size());
                // Contexts at which every row holds the prefix: the longest, the shortest row one
                // past the prefix, and (uniform) a context inside the prefix.
                std::vector<std::size_t> contexts{config.seq_len, config.shared_prefix + 1 + config.seq_len -
                                                                      config.shortest_seq_len()};
                if (!config.is_ragged()) contexts.push_back(5);
                for (const std::size_t n_ctx : contexts) {
                    CAPTURE(n_ctx);
                    const FlopCount fast_flops =
                        attend_decode(config, q.data(), config.q_dim(), cache, 0, n_ctx, fast.data(), scratch);
                    const FlopCount naive_flops =
                        attend_decode_naive(config, q.data(), config.q_dim(), cache, 0, n_ctx, naive.data(), scratch);
                    CHECK(relative_error(fast, naive) < 1e-5);
                    std::uint64_t attended = 0;
                    for (std::size_t b = 0; b < config.n_batch; ++b) attended += n_ctx - config.seq_lag_of(b);
                    CHECK(fast_flops.useful == 4u * config.n_heads * config.head_dim() * attended);
                    CHECK(naive_flops.useful == fast_flops.useful);
                    CHECK(fast_flops.executed == documented_shared_prefix_executed(config, n_ctx, scratch));
                }
                if (config.is_ragged()) {
                    // One context less, and the shortest row would end inside the prefix.
                    CHECK_THROWS_AS(attend_decode(config, q.data(), config.q_dim(), cache, 0, contexts.back() - 2,
                                                  fast.data(), scratch),
                                    std::logic_error);
                }
            }
        }
    }
}

TEST_CASE("an 8-bit float NaN in the shared prefix makes its head's output NaN in every sequence, as in the naive twin") {
    // The prefix's problems take the cache's word on whether it holds a pattern the conversion
    // fixes up, as the rows' own do: a NaN stored there must reach every sequence's output.
    for (const KvDtype dtype : {KvDtype::e4m3, KvDtype::e5m2}) {
        for (const std::size_t block : {0u, 16u}) {
            for (const bool in_values : {false, true}) {
                ModelConfig config = with_prefix(make_config(3, 64, 256, 4, 4, 1), 32, block);  // MHA: fused tiles
                config.kv_dtype = dtype;
                CAPTURE(describe(config));
                CAPTURE(in_values);
                KvCache cache(config, config.seq_len, 2);
                fill_cache_seeded(config, cache, config.seq_len, 3);
                std::vector<float> k(config.head_dim()), v(config.head_dim());
                cache.load_key(0, 0, 2, 5, k.data());
                cache.load_value(0, 0, 2, 5, v.data());
                (in_values ? v : k)[7] = std::numeric_limits<float>::quiet_NaN();
                cache.store(0, 0, 2, 5, k.data(), v.data());  // position 5: the prefix, one copy for every row
                const std::vector<float> q = test::random_vector(config.n_batch * config.q_dim(), 4);
                DecodeAttentionScratch scratch(config, config.seq_len, 2);
                std::vector<float> fast(q.size()), naive(q.size());
                attend_decode(config, q.data(), config.q_dim(), cache, 0, config.seq_len, fast.data(), scratch);
                attend_decode_naive(config, q.data(), config.q_dim(), cache, 0, config.seq_len, naive.data(), scratch);
                const std::size_t dh = config.head_dim();
                for (std::size_t b = 0; b < config.n_batch; ++b) {
                    for (std::size_t h = 0; h < config.n_heads; ++h) {
                        CAPTURE(b);
                        CAPTURE(h);
                        const float* head = fast.data() + (b * config.n_heads + h) * dh;
                        const float* twin = naive.data() + (b * config.n_heads + h) * dh;
                        const auto n_nan = std::count_if(head, head + dh, [](float x) { return std::isnan(x); });
                        CHECK(n_nan == std::count_if(twin, twin + dh, [](float x) { return std::isnan(x); }));
                        CHECK((n_nan > 0) == (h == 2));
                    }
                }
            }
        }
    }
}

TEST_CASE("a shared prefix is cached and read once, its FLOPs those of the batch sharing nothing (docs/counting.md, by hand)") {
    // B = 4, N = 10, P = 6, D = 8, H = 2, G = 1, dh = 4, L = 1: 6 + 4·(10 - 6) = 22 positions
    // cached of (4 + 4)·4 = 32 bytes each, against 4·10 = 40 unshared. 192 weights.
    const ModelConfig config = with_prefix(make_config(4, 10, 8, 2, 1, 1), 6);
    ModelConfig unshared = config;
    unshared.shared_prefix = 0;
    CHECK(cached_positions(config) == 22);
    CHECK(kv_cache_bytes(config) == 704);
    CHECK(kv_cache_bytes(unshared) == 1280);
    CHECK(KvCache::bytes_for(config, config.seq_len) == 704);
    const KvCache cache(config, config.seq_len);
    CHECK(cache.bytes() == 704);
    CHECK(cache.capacity(0, 3) == 4);
    // 4·2·192 + 4·2·4·(4·10): every query attends to all 10 positions.
    CHECK(step_flops(config, DecodePath::cached) == 1536 + 1280);
    CHECK(step_flops(config, DecodePath::cached) == step_flops(unshared, DecodePath::cached));
    CHECK(step_flops(config, DecodePath::uncached) == step_flops(unshared, DecodePath::uncached));
    // 192·4 weight bytes + 704 of cache + 2·4·8·4 of activations; the uncached path as before.
    CHECK(step_bytes(config, DecodePath::cached) == 768 + 704 + 256);
    CHECK(step_bytes(config, DecodePath::uncached) == step_bytes(unshared, DecodePath::uncached));
}

TEST_CASE("a window layer's rings share nothing, its global layer's prefix is cached once (by hand)") {
    // B = 4, N = 10, P = 6, G = 1, dh = 4, L = 2, layer 0 a window of 3: its rings hold 4·3
    // positions, layer 1 6 + 4·4, 34 positions of 32 bytes in all.
    ModelConfig shape = make_config(4, 10, 8, 2, 1, 2);
    shape.layer_windows = {3, 0};
    const ModelConfig config = with_prefix(shape, 6);
    CHECK(cached_positions(config) == 12 + 22);
    CHECK(kv_cache_bytes(config) == 34 * 32);
    const KvCache cache(config, config.seq_len);
    CHECK(cache.bytes() == kv_cache_bytes(config));
    CHECK(cache.shared_prefix(0) == 0);
    CHECK(cache.shared_prefix(1) == 6);
    CHECK(cache.capacity(0, 2) == 3);
    CHECK(cache.capacity(1, 2) == 4);
    // Blocks of 4: layer 0 one per row's ring, layer 1 the prefix's 2 and one per row, 10 blocks
    // of 4 slots of 32 bytes and 10 table entries.
    const ModelConfig paged = with_prefix(shape, 6, 4);
    CHECK(kv_blocks_per_head(paged) == 4 + 2 + 4);
    CHECK(kv_cache_bytes(paged) == 10 * 4 * 32 + 10 * 4);
    KvCache paged_cache(paged, paged.seq_len, 3);
    CHECK(paged_cache.bytes() == kv_cache_bytes(paged));
    CHECK(paged_cache.prefix_block_table(0, 0) == nullptr);
    CHECK(paged_cache.prefix_block_table(1, 0) != nullptr);
    // A window layer stores position 2 in each row's own ring; the global layer once for all.
    const std::vector<float> key{1, 2, 3, 4}, value{5, 6, 7, 8}, other{9, 9, 9, 9};
    paged_cache.store(0, 0, 0, 2, key.data(), value.data());
    paged_cache.store(0, 1, 0, 2, other.data(), other.data());
    paged_cache.store(1, 0, 0, 2, key.data(), value.data());
    struct Read {
        std::size_t layer, row;
        const std::vector<float>& stored;
    };
    for (const Read& read : {Read{0, 0, key}, Read{0, 1, other}, Read{1, 3, key}}) {
        std::vector<float> back(4);
        paged_cache.load_key(read.layer, read.row, 0, 2, back.data());
        CHECK(back == read.stored);
    }
}

TEST_CASE("a ragged batch's shared prefix is cached once, each sequence's own positions after it (by hand)") {
    // B = 3 of N_b = 10, 7, 9, P = 6, D = 8, H = 2, G = 1, dh = 4, L = 1: 6 + (4 + 1 + 3) = 14
    // positions of 32 bytes, against the 26 of the batch sharing nothing.
    const ModelConfig config = with_prefix(ragged_batch(make_config(1, 1, 8, 2, 1, 1), {10, 7, 9}), 6);
    ModelConfig unshared = config;
    unshared.shared_prefix = 0;
    CHECK(cached_positions(config) == 14);
    CHECK(kv_cache_bytes(config) == 448);
    CHECK(kv_cache_bytes(unshared) == 832);
    const KvCache cache(config, config.seq_len);
    CHECK(cache.bytes() == 448);
    CHECK(KvCache::bytes_for(config, config.seq_len) == 448);
    CHECK(cache.capacity(0, 0) == 4);
    CHECK(cache.capacity(0, 1) == 1);
    CHECK(cache.capacity(0, 2) == 3);
    // 3·2·192 + 4·2·4·(10 + 7 + 9): every query attends to its own sequence's positions.
    CHECK(step_flops(config, DecodePath::cached) == 1152 + 832);
    CHECK(step_flops(config, DecodePath::cached) == step_flops(unshared, DecodePath::cached));
    // 192·4 weight bytes + 448 of cache + 2·3·8·4 of activations.
    CHECK(step_bytes(config, DecodePath::cached) == 768 + 448 + 192);
    // Blocks of 4: the prefix's 2 and one per row (4, 1 and 3 own positions), 5 of 4 slots of 32
    // bytes and 5 table entries, which the step reads besides the 14 positions.
    const ModelConfig paged = with_prefix(config, 6, 4);
    CHECK(kv_blocks_per_head(paged) == 2 + 3);
    CHECK(kv_cache_bytes(paged) == 5 * 4 * 32 + 5 * 4);
    CHECK(KvCache(paged, paged.seq_len).bytes() == kv_cache_bytes(paged));
    CHECK(step_bytes(paged, DecodePath::cached) == 768 + 448 + 192 + 20);
}

TEST_CASE("a paged shared prefix takes its blocks once, and every block of the pool is used once (by hand)") {
    // The same B = 4, N = 10, P = 6, G = 1, L = 1 in blocks of 4: the prefix's 2 blocks (the last
    // half empty) and each row's 1 (its 4 own positions): 6 blocks of 4 slots of 32 bytes, and 6
    // table entries of 4 bytes.
    const ModelConfig config = with_prefix(make_config(4, 10, 8, 2, 1, 1), 6, 4);
    CHECK(kv_blocks_per_head(config) == 2 + 4 * 1);
    CHECK(kv_cache_bytes(config) == 6 * 4 * 32 + 6 * 4);
    CHECK(KvCache::bytes_for(config, config.seq_len) == kv_cache_bytes(config));
    // The step reads the 22 positions once, as contiguous, and the 6 table entries.
    CHECK(step_bytes(config, DecodePath::cached) == 768 + 704 + 256 + 24);
    // Two layers, G = 2, blocks of 3: every block of the pool in exactly one table, and one
    // prefix table per layer and KV head that every row reads (stored through row 0, loaded
    // through rows 1 and 2).
    const ModelConfig two_layers = with_prefix(make_config(3, 17, 32, 4, 2, 2), 7, 3);
    KvCache cache(two_layers, two_layers.seq_len, 11);
    CHECK(cache.bytes() == kv_cache_bytes(two_layers));
    std::vector<std::uint32_t> used;
    for (std::size_t layer = 0; layer < 2; ++layer) {
        for (std::size_t g = 0; g < 2; ++g) {
            used.insert(used.end(), cache.prefix_block_table(layer, g), cache.prefix_block_table(layer, g) + 3);
            for (std::size_t b = 0; b < 3; ++b) {
                used.insert(used.end(), cache.block_table(layer, b, g), cache.block_table(layer, b, g) + 4);
            }
        }
    }
    std::sort(used.begin(), used.end());
    std::vector<std::uint32_t> every(used.size());
    std::iota(every.begin(), every.end(), std::uint32_t{0});
    CHECK(used == every);
    CHECK(used.size() * (3 * 8 * sizeof(float) * 2 + 4) == cache.bytes());  // 3 slots of K and V, dh = 8
    const std::vector<float> key{1, 2, 3, 4, 5, 6, 7, 8}, value{-1, -2, -3, -4, -5, -6, -7, -8};
    cache.store(1, 0, 1, 4, key.data(), value.data());  // the prefix: row 0 stands for every row
    std::vector<float> back(8);
    cache.load_key(1, 2, 1, 4, back.data());
    CHECK(back == key);
    cache.load_value(1, 1, 1, 4, back.data());
    CHECK(back == value);
    CHECK(cache.prefix_block_table(0, 0) != nullptr);
    CHECK(KvCache(with_prefix(make_config(3, 17, 32, 4, 2, 2), 7), 17).prefix_block_table(0, 0) == nullptr);
}

TEST_CASE("a shared prefix that breaks a rule is refused naming --shared-prefix") {
    ModelConfig config = make_config(2, 10, 8, 2, 1, 1);
    config.shared_prefix = 10;
    CHECK_THROWS_WITH_AS(validate(config),
                         "--shared-prefix 10 must be at most --seq 10 less the step's 1 new token(s), 9: the new "
                         "tokens are each sequence's own (try --shared-prefix 5)",
                         ConfigError);
    config.shared_prefix = 9;
    config.n_query_tokens = 2;
    CHECK_THROWS_AS(validate(config), ConfigError);
    config.n_query_tokens = 1;
    validate(config);
    // Every sequence of a ragged batch holds the prefix and its own new token after it.
    ModelConfig uneven = config;
    uneven.seq_lens = {10, 4};
    uneven.shared_prefix = 3;
    validate(uneven);
    uneven.shared_prefix = 4;
    CHECK_THROWS_WITH_AS(validate(uneven),
                         "--shared-prefix 4 must be at most the ragged batch's shortest context 4 less the step's 1 "
                         "new token(s), 3: the new tokens are each sequence's own (try --shared-prefix 2)",
                         ConfigError);
}

TEST_CASE("a shared prefix's kernels pass --check against their naive twins") {
    const ModelConfig config = with_prefix(make_config(3, 40, 32, 4, 2, 1), 30);
    test::check_kernels_against_twins(config);
}
