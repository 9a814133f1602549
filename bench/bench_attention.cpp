// BM_AttendDecode: attend_decode() alone (the cached step's attention) over context N x grouping G,
// with the last-level cache evicted before every iteration (cold) or not (warm); BM_AttendDecodeKv
// the same over each stored cache type, and BM_AttendDecodePaged over a paged cache.
#include "bench_support.hpp"

#include "kvbench/engine/attention.hpp"
#include "kvbench/engine/cost_model.hpp"

#include <fmt/format.h>

#include <chrono>
#include <string>
#include <exception>

namespace kvbench::bench {
namespace {

// Cold iterations each pay a flush of 4 × LLC outside the timed region, so a fixed
// count, not a minimum time, bounds their wall time.
constexpr benchmark::IterationCount cold_iterations = 50;
constexpr double warm_min_time_s = 0.1;

// attend_decode over a cache of config's kv_dtype, cold (the LLC flushed before each iteration)
// or warm. Timed manually so the flush stays outside the timed region without
// Pause/ResumeTiming's overhead.
void time_attend_decode(benchmark::State& state, const ModelConfig& config, bool cold) {
    const std::size_t n_threads = use_all_cores();
    const std::size_t n_ctx = config.seq_len;
    const std::size_t model_dim = config.model_dim;

    KvCache cache(config, n_ctx);
    fill_cache(config, cache, n_ctx);
    DecodeAttentionScratch scratch(config, n_ctx, n_threads);
    const std::vector<float> q = random_floats(config.n_batch * model_dim, 1);  // (n_batch, model_dim)
    std::vector<float> out(config.n_batch * model_dim);                         // (n_batch, model_dim)
    CacheFlusher* flusher = cold ? &shared_flusher() : nullptr;

    for (auto _ : state) {
        if (flusher != nullptr) flusher->flush();
        const auto start = std::chrono::steady_clock::now();
        benchmark::DoNotOptimize(
            attend_decode(config, q.data(), model_dim, cache, 0, n_ctx, out.data(), scratch));
        benchmark::ClobberMemory();
        const auto stop = std::chrono::steady_clock::now();
        state.SetIterationTime(std::chrono::duration<double>(stop - start).count());
    }
    benchmark::DoNotOptimize(out.data());

    // docs/counting.md#flops for the kernel alone: q·K^T and p·V are 2 FLOPs per (head, position, dim) each,
    // 4·B·H·dh·N; the compulsory traffic is K and V once, B·N·G·dh·(c_K + c_V) bytes with the
    // cached vectors of docs/counting.md#bytes (q and out are B·D floats each, negligible).
    const std::uint64_t b = config.n_batch, h = config.n_heads, g = config.n_kv_heads;
    const std::uint64_t head_dim = config.head_dim(), n = n_ctx;
    set_rate_counters(state, 4 * b * h * head_dim * n, b * n * g * kv_head_position_bytes(config));
    std::string label = grouping_label(config.n_heads, config.n_kv_heads);
    if (config.kv_dtype != KvDtype::f32) label += fmt::format(" {}", kv_dtype_info(config.kv_dtype).name);
    state.SetLabel(label);
}

// Args: B, N, D, H, G, cold (1 = flush the LLC before each iteration, 0 = warm).
void BM_AttendDecode(benchmark::State& state) {
    const std::optional<ModelConfig> config = config_or_skip(state);
    if (config) time_attend_decode(state, *config, state.range(5) != 0);
}

// Args: B, N, D, H, G, kv (the KvDtype's value: 0 f32, 1 f16, 2 bf16, 4 int8, 6 e4m3, 7 e5m2,
// 8 q8_0, 9 q4_0), cold: the cache
// in each stored type, for the reduced-precision kernels (docs/model.md#kv-cache-element-types).
void BM_AttendDecodeKv(benchmark::State& state) {
    std::optional<ModelConfig> config = config_or_skip(state);
    if (!config) return;
    config->kv_dtype = static_cast<KvDtype>(state.range(5));
    time_attend_decode(state, *config, state.range(6) != 0);
}

// Args: B, N, D, H, G, kv (as BM_AttendDecodeKv's), block (positions per cache block, 0 for the
// contiguous cache), cold: a paged cache against the contiguous one in one listing. Warm, the
// kernel's own cost of a block table; cold, that and the reads of blocks at random places
// (docs/model.md, "Paged caches").
void BM_AttendDecodePaged(benchmark::State& state) {
    std::optional<ModelConfig> config = config_or_skip(state);
    if (!config) return;
    config->kv_dtype = static_cast<KvDtype>(state.range(5));
    config->kv_block = static_cast<std::size_t>(state.range(6));
    time_attend_decode(state, *config, state.range(7) != 0);
}

// The acceptance shape (B=1, D=4096, H=32, N=8192, G = 32/8/1) and a shorter context.
std::vector<std::vector<std::int64_t>> attention_shapes(std::int64_t cold) {
    return {{1}, {1024, 8192}, {4096}, {32}, {32, 8, 1}, {cold}};
}

BENCHMARK(BM_AttendDecode)
    ->ArgNames({"B", "N", "D", "H", "G", "cold"})
    ->ArgsProduct(attention_shapes(1))
    ->Iterations(cold_iterations)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_AttendDecode)
    ->ArgNames({"B", "N", "D", "H", "G", "cold"})
    ->ArgsProduct(attention_shapes(0))
    ->MinTime(warm_min_time_s)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

// Batched shapes of the step targets, where the grouped kernel is compute-bound: B=8 with the
// 16 query heads of one KV head (D=1024, dh=64), B=4 with all 32 (D=4096, dh=128), and B=8 GQA-8.
BENCHMARK(BM_AttendDecode)
    ->ArgNames({"B", "N", "D", "H", "G", "cold"})
    ->Args({8, 4096, 1024, 16, 1, 1})
    ->Args({8, 4096, 1024, 16, 16, 1})
    ->Args({4, 8192, 4096, 32, 1, 1})
    ->Args({8, 2048, 4096, 32, 8, 1})
    ->Iterations(cold_iterations)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

// The same shapes warm: the kernel's own speed, without the wait for memory. Then MHA with its
// cache in L2 (2 MiB, over two cores' L2) and in L3 (16 MiB): the one-row tiles' own speed,
// which a cache streamed from DRAM hides (bench/journal/2026-12-02-zen-4-tried-and-left-out.md);
// N=1024 is left to the CI gate's filter.
BENCHMARK(BM_AttendDecode)
    ->ArgNames({"B", "N", "D", "H", "G", "cold"})
    ->Args({8, 4096, 1024, 16, 1, 0})
    ->Args({8, 4096, 1024, 16, 16, 0})
    ->Args({4, 8192, 4096, 32, 1, 0})
    ->Args({8, 2048, 4096, 32, 8, 0})
    ->Args({1, 256, 1024, 8, 8, 0})
    ->Args({1, 256, 1024, 16, 16, 0})
    ->Args({1, 2048, 1024, 8, 8, 0})
    ->MinTime(warm_min_time_s)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

// issue 11's cache-dominated shape (B=8, D=1024, H=G=16, N=4096: 256 MiB of f32 cache) and MQA
// at the same shape, in each stored type, cold.
BENCHMARK(BM_AttendDecodeKv)
    ->ArgNames({"B", "N", "D", "H", "G", "kv", "cold"})
    ->ArgsProduct({{8}, {4096}, {1024}, {16}, {16, 1}, {0, 1, 2, 4}, {1}})
    ->Iterations(cold_iterations)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

// MHA in each stored type with its cache in L3 or L2 (B=1 N=1024 D=1024: 8 MiB in f32, 2 MiB in
// int8 over two cores' L2), warm: the fused tiles' own speed, conversions included, which the
// stream from DRAM hides (bench/journal/2026-12-02-fused-tiles-from-cache.md).
BENCHMARK(BM_AttendDecodeKv)
    ->ArgNames({"B", "N", "D", "H", "G", "kv", "cold"})
    ->ArgsProduct({{1}, {1024}, {1024}, {16}, {16}, {0, 1, 2, 4, 6, 7, 8, 9}, {0}})
    ->MinTime(warm_min_time_s)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

// Groups of 4 query rows (GQA-4 at H = 16, dh = 64) in each stored type with the cache in the
// two cores' L2 (B=1 N=1024: 2 MiB in f32), warm: the 4-row tiles' own speed
// (bench/journal/2026-12-04-quad-tile-for-groups-of-4.md).
BENCHMARK(BM_AttendDecodeKv)
    ->ArgNames({"B", "N", "D", "H", "G", "kv", "cold"})
    ->ArgsProduct({{1}, {1024}, {1024}, {16}, {4}, {0, 1, 2, 4}, {0}})
    ->MinTime(warm_min_time_s)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

// Issue 39's cache-dominated point in the 8-bit floats and the block formats, cold: each
// against f32's (kv 0, above) scaled by its bytes.
BENCHMARK(BM_AttendDecodeKv)
    ->ArgNames({"B", "N", "D", "H", "G", "kv", "cold"})
    ->ArgsProduct({{8}, {4096}, {1024}, {16}, {16}, {6, 7, 8, 9}, {1}})
    ->Iterations(cold_iterations)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

// Llama-3.2-1B's attention (D=2048, H=32, G=8: groups of 4 rows of dh = 64) at B=1 over 4096
// positions in f32 and f16, cold: the part of issue 36's step that grows with the context.
BENCHMARK(BM_AttendDecodeKv)
    ->ArgNames({"B", "N", "D", "H", "G", "kv", "cold"})
    ->ArgsProduct({{1}, {4096}, {2048}, {32}, {8}, {0, 1}, {1}})
    ->Iterations(cold_iterations)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

// Issue 39's paged point: MHA at B=8 N=4096 D=1024 (256 MiB of f32 cache) cold; at B=1 N=1024
// (8 MiB, in L3) warm, and at B=1 N=512 D=256 (1 MiB, in the two cores' L2) warm; in f32, f16
// and int8, contiguous and at blocks of 16, 32 and 128.
BENCHMARK(BM_AttendDecodePaged)
    ->ArgNames({"B", "N", "D", "H", "G", "kv", "block", "cold"})
    ->ArgsProduct({{8}, {4096}, {1024}, {16}, {16}, {0, 1, 4}, {0, 16, 32, 128}, {1}})
    ->Iterations(cold_iterations)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_AttendDecodePaged)
    ->ArgNames({"B", "N", "D", "H", "G", "kv", "block", "cold"})
    ->ArgsProduct({{1}, {1024}, {1024}, {16}, {16}, {0, 1, 4}, {0, 16, 32, 128}, {0}})
    ->ArgsProduct({{1}, {512}, {256}, {4}, {4}, {0, 1, 4}, {0, 16, 32, 128}, {0}})
    ->MinTime(warm_min_time_s)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace kvbench::bench

