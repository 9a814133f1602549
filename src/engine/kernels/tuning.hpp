// The kernels' tuned choices: one table per instruction-set class, and the one this build reads.
//
// Every block size, tile size, prefetch distance and threshold that was chosen by measurement
// lives here, side by side for the three classes a build can be (cmake/KvbenchArch.cmake): what
// a kernel may not change without a new measurement. Facts of an instruction set (its vector
// width, its register count) stay with the code that uses them (simd_<isa>.hpp, small_m_gemm.cpp's
// ISA structs); so do the rules that derive a tile from a register budget. Each field says why in
// one line and links the bench/journal/ entry that measured it. Values equal in every class
// are repeated, so that each column of the table reads whole.
#pragma once

#include <cstddef>

namespace kvbench {

// How the attention kernels fetch a later block of keys and values (prefetch_plan.hpp).
struct PrefetchPlan {
    std::size_t blocks_ahead;  // of the block being computed
    bool into_l2;              // prefetcht1; else prefetcht0, into L1
    // Where the block makes more prefetch calls than the later block has lines: the lines spread
    // evenly over all the calls (block_prefetcher.hpp); else one a call, from the first on.
    bool spread = false;
    // A paged cache: how many kernel blocks ahead a block requests a part of each of, whatever
    // the cache block's length; 0 for the rule of tuning's paged_pieces (block_prefetcher.hpp's
    // paged_parts). paged_block_plan sets it, by the stored type and the CPU.
    std::size_t paged_parts = 0;
};

struct KernelTuning {
    const char* name;  // the class, as kernel_isa() reports it and every result row records it

    // attend_group_tiled (attention_kernel.cpp): query rows as register-tile rows.
    struct Tiled {
        // Keys per block: a few score vectors per query row, which stay in L1 with the block.
        std::size_t key_block;
        // Keys per block of the fused tiles (a reduced type converted as it is loaded): twice
        // key_block, the per-block work spread over more keys
        // (bench/journal/2026-12-01-reduced-precision-attention-alone.md). 64 on AVX-512, measured
        // on Zen 5 (bench/journal/2026-12-06-fused-blocks-of-64-keys.md); on an Intel Xeon it ran
        // int8 10-14 % slower a day earlier, on an Emerald Rapids Xeon 4 % slower and q4_0 6 %
        // faster (bench/journal/2026-12-07-fused-blocks-of-32-on-emerald-rapids.md).
        std::size_t fused_key_block;
        // Rows of a transposed score tile: rows × key-block vectors of accumulators and the
        // operands fill the register file.
        std::size_t score_rows;
        // Groups up to this many rows score keys by dot products along head_dim (cheaper than
        // transposing the block for a few rows); larger ones transpose it.
        std::size_t dot_rows_max;
        // Output tiles: up to out_rows rows (a block's values read once for all) × out_vecs
        // vectors of head_dim, as the registers allow.
        std::size_t out_rows;
        std::size_t out_vecs;
        // Dims between two runs of prefetch calls in a transposed tile: calls interleaved dim by dim
        // made GCC spill the accumulators
        // (bench/journal/2026-12-03-transposed-tiles-in-registers.md).
        std::size_t dims_per_prefetch_run;
        // Whether a group's dot tiles over f32 take the next-block-into-L1 plan
        // (Prefetch::f32_group_dot_tiles); measured on the vector builds only.
        bool group_dot_tiles_plan;
        // Keys of a one-row output tile over a reduced type between two calls to the prefetcher,
        // which then requests as many more lines a call: a call every key cost the 8-bit floats
        // 3-6 % on the AVX-512 Xeon
        // (bench/journal/2026-12-05-one-row-output-prefetch-every-second-key.md).
        std::size_t one_row_output_keys_per_prefetch;
        // Whether the fused tiles read e4m3 keys and values as f32 bits placed by a shift and a
        // mask (2^120 small, subnormals as f32 subnormals) off Intel, where binary16's conversion
        // cost more: Zen 5's FMAs take subnormal operands at full speed, an Intel Xeon's stalled
        // 2.4× the step (bench/journal/2026-12-07-e4m3-as-float-bits-on-zen-5.md). AVX-512 only.
        bool e4m3_as_f32_bits_off_intel;
    } tiled;

    // attend_group_by_lanes (attention_grouped.cpp): query rows as vector lanes, for 16 registers.
    struct Lanes {
        // Groups of at least this many rows (and a whole number of its vectors) take it; 0: none do,
        // the class's own tiles being faster
        // (bench/journal/2026-12-01-avx2-paths-on-an-avx512-host.md).
        std::size_t min_rows;
        // Keys per block: its keys and values stay in L1 beside the transposed queries on a 32 KiB
        // L1, and it is a whole number of score tiles of 6 and 12 keys.
        std::size_t key_block;
        // Score tiles: keys × vectors of rows, 6 × 2 or 12 × 1 accumulators with their operands
        // in 16 registers, at least 10 FMAs in flight for two FMA pipes.
        std::size_t score_vecs_max;
        std::size_t score_keys_max_2;  // keys per tile with 2 vectors of rows
        std::size_t score_keys_max_1;  // with 1
        // Output tiles: rows × vectors of head_dim, 6 × 2 accumulators with their operands.
        std::size_t out_rows_max;
        std::size_t out_vecs_max;
    } lanes;

    // block_prefetch_plan (prefetch_plan.hpp): how each stored type fetches a later block.
    struct Prefetch {
        // Far enough ahead to cover DRAM's latency and into L2, where it neither evicts the block
        // being computed nor is evicted before use; the kernels with the most arithmetic per byte
        // keep the next block, into L1, as the L2-to-L1 latency would show
        // (bench/journal/2026-12-02-attention-blocks-into-l2.md). Spread over the block's calls where
        // that was faster (bench/journal/2026-12-02-next-block-lines-spread.md).
        PrefetchPlan f32;
        PrefetchPlan f16_bf16;  // and the types the engine plans but does not store
        // int8 and the byte formats (e4m3, e5m2, q8_0, q4_0): a block is a quarter of f32's
        // bytes or less, so one block ahead is too short a lead on the AVX-512 Xeon
        // (bench/journal/2026-12-05-byte-formats-two-blocks-ahead.md). On Zen 5 int8 at 1 to 6
        // blocks ahead, or into L2, ran alike
        // (bench/journal/2026-12-06-int8-step-on-zen-5-less-arithmetic-or-more-lead.md).
        PrefetchPlan int8;
        PrefetchPlan byte_formats;
        // A GQA group's dot tiles over f32, with an L1 of large_l1_bytes or more: the next block into
        // L1, whose keys in L2 reached the FMAs a load latency late
        // (bench/journal/2026-12-02-next-block-into-l1-for-gqa.md). Spreads as the f32 plan does.
        PrefetchPlan f32_group_dot_tiles;
        // A paged cache whose blocks are no longer than a kernel block: how many cache blocks of
        // keys (and as many of values) the prefetch requests side by side, a line of each in turn,
        // since this host serves pieces at random places faster several at once than one after
        // another (bench/journal/2026-12-04-paged-streams.md). Longer blocks: the next kernel block,
        // unless the next field says otherwise.
        std::size_t paged_pieces;
        // f32, f16 and bf16 caches on an Intel CPU: this many kernel blocks ahead, a part of each,
        // whatever the cache block's length (0: paged_pieces' rule). On the Xeon three took f32
        // blocks of 64 and 128 positions from 1.15-1.19x the contiguous step to 1.04-1.08x and
        // blocks of 16 from 1.13-1.16x to 1.11-1.12x, while int8 and q4_0 lost with it at every
        // length; on Zen 5 parts were no faster at blocks of 16 and 32 and 30 % slower at 128 than
        // the next kernel block alone (bench/journal/2026-12-06-wide-paged-blocks-three-ahead-on-the-xeon.md,
        // bench/journal/2026-12-06-zen-5-paged-parts-and-zmm-rows.md).
        std::size_t wide_paged_parts_on_intel;
        // ... and no more cache blocks than this in flight: in the AVX2 build, f16 blocks of 8 lost
        // with twelve or sixteen against four, where in the AVX-512 build twelve gained (the same
        // journal).
        std::size_t wide_paged_max_pieces;
        // f32, f16 and bf16 caches paged, off Intel: later blocks into L1 whatever the contiguous
        // cache's plan, since no hardware prefetcher brings a block found through the table on
        // to L1. On Zen 5 the paged attention took 0.89-0.91x the time at blocks of 16, 32 and 128
        // for f32 in the AVX-512 build, and in the AVX2 one 0.88-0.92x for f32 and 0.68x for f16
        // at blocks of 16; the byte formats, into L2 in the AVX2 build, did not gain
        // (bench/journal/2026-12-06-paged-wide-blocks-into-l1.md). Not measured on Intel, whose
        // paged plan is the parts above.
        bool wide_paged_into_l1_off_intel;
        // Lines of one piece requested before the next piece's turn: a turn of one line cost more
        // in bookkeeping than it saved (bench/journal/2026-12-04-paged-streams.md).
        std::size_t paged_turn_lines;
    } prefetch;

    // small_m_gemm (small_m_gemm.cpp): y = x · W^T for a few rows of x, W streamed once.
    struct SmallM {
        // Most rows of x a call takes: their accumulators for two weight rows fill most of the
        // register file.
        std::size_t max_rows;
        // Fewer weights than this are too little work to wake the second thread for.
        std::size_t min_parallel_weights;
        // x's chunk where the L1 holds 48 KiB: it stays in L1 beside the weight tile
        // (bench/journal/2026-11-30-small-m-projection-choices.md).
        std::size_t l1_chunk_bytes;
        // x's chunk with a 32 KiB L1, and for kernels that want whole weight rows: in L2, each weight
        // row one long run (bench/journal/2026-12-01-x-chunks-by-l1-size.md).
        std::size_t l2_chunk_bytes;
        // With chunks in L2, tiles prefetch the weights this far ahead, into L2, so that memory
        // overlaps the arithmetic (bench/journal/2026-12-02-prefetching-w-into-l2.md).
        std::size_t l2_prefetch_bytes_ahead;
        // From this many rows of x the tiles prefetch a later tile's weights: the FMAs then keep the
        // out-of-order window too short for the hardware prefetcher
        // (bench/journal/2026-11-30-small-m-projection-choices.md).
        std::size_t min_rows_to_prefetch;
        // Weight rows far apart that a spread tile reads at once, one from each of as many runs of
        // the slab, as the roofline's probe reads memory
        // (bench/journal/2026-12-02-one-row-of-x-as-four-streams.md).
        std::size_t spread_streams;
        // From this many rows of x the AVX2 tiles read far-apart whole lines where the L1 holds
        // 48 KiB (bench/journal/2026-12-03-far-apart-whole-lines.md) ...
        std::size_t min_rows_for_lines;
        // ... when the registers hold at least this many of those streams (fewer read slower
        // than adjacent tiles).
        std::size_t min_line_streams;
        // How far ahead in its own run each far-apart weight row is prefetched
        // (bench/journal/2026-12-03-far-apart-whole-lines.md: on Zen 5's two cores 1.5 to 3 KiB
        // alike). 1.5 KiB on AVX-512, where an Emerald Rapids Xeon read 3 to 8 rows in up to
        // 0.97× the time of 2 KiB (bench/journal/2026-12-07-line-prefetch-distance-on-emerald-rapids.md).
        std::size_t line_prefetch_bytes;
        // In 16 registers, from passes_from_rows rows of x on, the rows go in passes of pass_rows
        // over one tile of weights, which loads less per FMA
        // (bench/journal/2026-12-01-avx2-tile-at-4-7-8-rows.md).
        std::size_t pass_rows;
        std::size_t passes_from_rows;
        // On an Intel CPU the first pass prefetches the whole next tile: on an AVX-512 Xeon guest
        // the x86-64-v3 build read 8 rows of D=4096 0.83× as long so, where on Zen 5 each pass
        // prefetching its share had been a fifth faster
        // (bench/journal/2026-12-05-v3-passes-prefetch-by-vendor.md). Only the AVX2 class runs
        // passes; not measured on an AVX2-only Intel CPU.
        bool passes_prefetch_from_first_on_intel;
        // AVX-512 builds: zmm tiles up to this many rows of x, the ymm tiles (in 32 registers) above,
        // faster on a cold W from 3 rows on (bench/journal/2026-11-30-small-m-projection-choices.md;
        // again on Zen 5 against zmm tiles of 2, 3 or 8 weight rows,
        // bench/journal/2026-12-06-zen-5-paged-parts-and-zmm-rows.md, and against zmm far-apart
        // lines and passes, which read a cached W a quarter faster but a cold one at most 5 %,
        // bench/journal/2026-12-06-zmm-lines-and-passes-for-five-to-eight-rows.md).
        std::size_t zmm_max_rows;
        // Adjacent weight rows of a zmm tile: each x vector loaded feeds this many FMAs.
        std::size_t zmm_tile_rows;
    } small_m;

    // small_m_gemm_typed (small_m_typed.cpp): the same over bf16, f16 and int8 weights.
    struct SmallMTyped {
        // Weight rows far apart that a tile reads at once, one from each of as many runs of a
        // thread's slab, at most; the register file caps it lower from 2 rows of x on
        // (bench/journal/2026-12-04-typed-small-m-tuned.md). At one row, 6 or 8 streams
        // without the prefetch read slower on Zen 5
        // (bench/journal/2026-12-06-what-a-zen-5-core-keeps-in-flight.md).
        std::size_t max_streams;
        // int8 weights from 2 to int8_max_rows rows of x: streams at most (the register file caps
        // it lower), and cache lines of each stream per step. A line of int8 is four vectors to
        // widen and convert, so each x vector loaded serves more weight lines this way; at 8 rows
        // two lines per step read slower (bench/journal/2026-12-04-small-m-rows.md).
        std::size_t int8_max_streams;
        std::size_t int8_lines_per_step;
        std::size_t int8_max_rows;
        // x's chunk in L1, where it leaves each weight row runs of at least min_run_bytes; else
        // in L2, each weight row in longer runs (bench/journal/2026-12-04-typed-small-m-tuned.md).
        std::size_t x_l1_chunk_bytes;
        std::size_t x_l2_chunk_bytes;
        std::size_t min_run_bytes;
        // On an Intel CPU, x's chunk in L2 whatever the runs: on an AVX-512 Xeon guest bf16 and
        // f16 at 3 to 8 rows and int8 at 3 and 4 read 10-35 % faster so, where on Zen 5 x in L1
        // had been 10-20 % ahead (bench/journal/2026-12-05-typed-small-m-x-in-l2-on-intel.md).
        // Not measured on an AVX2-only Intel CPU, whose L2 may be 256 KiB.
        bool x_in_l2_on_intel;
        // How far ahead in its own run each stream asks for its weights, into L1
        // (bench/journal/2026-12-04-typed-small-m-tuned.md).
        std::size_t line_prefetch_bytes;
        // Below this many weights one thread streams W alone, as small_m's.
        std::size_t min_parallel_weights;
        // linear(): int8 weights from this many rows of x (0: never) on AMX's int8 tiles where
        // the CPU has them (small_m_amx.cpp): from 5 rows the vector tiles' f32 arithmetic, not the
        // read, sets their pace; at 1-4 rows the two read alike
        // (bench/journal/2026-12-05-amx-int8-weights.md).
        std::size_t amx_int8_from_rows = 0;
        // How far ahead of the chunk the tiles load each of W's rows is asked for, into L1: the
        // tile loads wait for their lines one after another, and 64-128 bytes ahead put them in
        // flight together (8 rows cold: 23-24 GB/s, against 17.7 with none and 16.4 at 512)
        // (bench/journal/2026-12-05-amx-int8-weights.md).
        std::size_t amx_prefetch_bytes = 128;
    } small_m_typed;

    // small_m_gemm_lanes (small_m_lanes.cpp): f32 weights times 9 to 64 rows of x in the lanes of
    // zmm registers, AVX-512 builds only. From min_rows rows linear() takes it, where groups of 8
    // rows of small_m_gemm ran each group's arithmetic in turn (16 rows 12.8 → 7.7 ms, 32 rows
    // 21-25 → 10.9 ms at D=4096 GQA-8, the step's projections; 9 rows 1.16 → 0.95 ms at D=1024;
    // bench/journal/2026-12-08-rows-of-x-in-lanes.md); 0: no build class here takes it.
    struct SmallMLanes {
        std::size_t min_rows;
        // bf16, f16 and int8 weights from this many rows: below it, up to three groups of 8 rows
        // of small_m_gemm_typed read half or a quarter of f32's bytes and ran 1.09-1.57× faster
        // than the lanes at 9 to 24 rows; above, sgemm over converted blocks ran 4-6× slower
        // (Llama-3.2-1B at B=32: 224 → 63 ms in bf16;
        // bench/journal/2026-12-08-reduced-weights-in-lanes.md).
        std::size_t typed_min_rows;
        // Per vector count (16, 32, 48, 64 rows of x): weight rows a tile and columns a step, so
        // that rows · vectors accumulators and columns · vectors x vectors fill the 32 registers;
        // 16 × 8 at 16 rows measured against 24 × 4, 12 × 16, 8 × 16 and 20 × 8, and 11 × 4 at 32
        // against 14 × 2, 8 × 8, 6 × 8 and 10 × 4 (the same journal).
        std::size_t rows_16, columns_16;
        std::size_t rows_32, columns_32;
        std::size_t rows_48, columns_48;
        std::size_t rows_64, columns_64;
    } small_m_lanes;

    // linear() (linear.cpp): the projections' kernel by row count.
    struct Projection {
        // Up to this many groups of small_m.max_rows rows, small_m_gemm reads W once per group;
        // above, OpenBLAS's sgemm is faster
        // (bench/journal/2026-11-30-linear-sgemv-small-m-or-sgemm.md).
        std::size_t max_small_m_groups;
        // Reduced-type weights under sgemm are converted to f32 a block of W's rows at a time:
        // at least this many bytes of f32, a block that stays in L2 while sgemm reads it
        // (bench/journal/2026-12-04-small-m-over-reduced-weights.md); for many rows of x, as many
        // of W's rows as half the rows of x, up to converted_block_max_bytes, since sgemm packs
        // the whole of x again for every block (bench/journal/2026-12-04-prefill-weight-blocks.md).
        std::size_t converted_block_bytes;
        std::size_t converted_block_max_bytes;
    } projection;

    // attend_decode (attention.cpp): splits of the context (flash-decoding's split-K).
    struct Decode {
        // No split shorter than this many positions: shorter ones cost more to merge than
        // they gain in parallelism.
        std::size_t min_split_positions;
    } decode;
};

// AVX-512 (x86-64-v4, Zen 4 and 5, Intel since Skylake-SP): 16 lanes, 32 registers.
inline constexpr KernelTuning avx512_tuning{
    .name = "avx512",
    .tiled = {.key_block = 32, .fused_key_block = 64, .score_rows = 12, .dot_rows_max = 8, .out_rows = 12,
              .out_vecs = 8, .dims_per_prefetch_run = 8, .group_dot_tiles_plan = true,
              .one_row_output_keys_per_prefetch = 2, .e4m3_as_f32_bits_off_intel = true},
    .lanes = {.min_rows = 0, .key_block = 24, .score_vecs_max = 2, .score_keys_max_2 = 6, .score_keys_max_1 = 12,
              .out_rows_max = 6, .out_vecs_max = 2},
    .prefetch = {.f32 = {1, true, false}, .f16_bf16 = {1, false, false}, .int8 = {2, false, false},
                 .byte_formats = {2, false, false}, .f32_group_dot_tiles = {1, false, false}, .paged_pieces = 4,
                 .wide_paged_parts_on_intel = 3,
                 .wide_paged_max_pieces = 12, .wide_paged_into_l1_off_intel = true, .paged_turn_lines = 8},
    .small_m = {.max_rows = 8, .min_parallel_weights = std::size_t{1} << 16, .l1_chunk_bytes = 32 * 1024,
                .l2_chunk_bytes = 128 * 1024, .l2_prefetch_bytes_ahead = 256 * 1024, .min_rows_to_prefetch = 3,
                .spread_streams = 4, .min_rows_for_lines = 3, .min_line_streams = 3, .line_prefetch_bytes = 1536,
                .pass_rows = 4, .passes_from_rows = 7, .passes_prefetch_from_first_on_intel = false,
                .zmm_max_rows = 2, .zmm_tile_rows = 8},
    .small_m_typed = {.max_streams = 4, .int8_max_streams = 8, .int8_lines_per_step = 2,
                      .int8_max_rows = 7, .x_l1_chunk_bytes = 32 * 1024, .x_l2_chunk_bytes = 128 * 1024,
                      .min_run_bytes = 2048, .x_in_l2_on_intel = true, .line_prefetch_bytes = 2048,
                      .min_parallel_weights = std::size_t{1} << 16, .amx_int8_from_rows = 5},
    .small_m_lanes = {.min_rows = 9, .typed_min_rows = 25, .rows_16 = 16, .columns_16 = 8, .rows_32 = 11, .columns_32 = 4, .rows_48 = 7,
                      .columns_48 = 2, .rows_64 = 5, .columns_64 = 2},
    .projection = {.max_small_m_groups = 3, .converted_block_bytes = 512 * 1024,
                   .converted_block_max_bytes = 32 * 1024 * 1024},
    .decode = {.min_split_positions = 64},
};

// AVX2 + FMA (x86-64-v3, Zen 2 and 3, Intel since Haswell): 8 lanes, 16 registers.
inline constexpr KernelTuning avx2_tuning{
    .name = "avx2+fma",
    .tiled = {.key_block = 16, .fused_key_block = 32, .score_rows = 5, .dot_rows_max = 8, .out_rows = 6,
              .out_vecs = 8, .dims_per_prefetch_run = 8, .group_dot_tiles_plan = true,
              .one_row_output_keys_per_prefetch = 1, .e4m3_as_f32_bits_off_intel = false},
    .lanes = {.min_rows = 8, .key_block = 24, .score_vecs_max = 2, .score_keys_max_2 = 6, .score_keys_max_1 = 12,
              .out_rows_max = 6, .out_vecs_max = 2},
    .prefetch = {.f32 = {2, true, true}, .f16_bf16 = {2, true, true}, .int8 = {1, false, false},
                 .byte_formats = {2, true, true}, .f32_group_dot_tiles = {1, false, true}, .paged_pieces = 4,
                 .wide_paged_parts_on_intel = 4,
                 .wide_paged_max_pieces = 4, .wide_paged_into_l1_off_intel = true, .paged_turn_lines = 8},
    .small_m = {.max_rows = 8, .min_parallel_weights = std::size_t{1} << 16, .l1_chunk_bytes = 32 * 1024,
                .l2_chunk_bytes = 128 * 1024, .l2_prefetch_bytes_ahead = 256 * 1024, .min_rows_to_prefetch = 3,
                .spread_streams = 4, .min_rows_for_lines = 3, .min_line_streams = 3, .line_prefetch_bytes = 2048,
                .pass_rows = 4, .passes_from_rows = 7, .passes_prefetch_from_first_on_intel = true,
                .zmm_max_rows = 0, .zmm_tile_rows = 0},
    .small_m_typed = {.max_streams = 4, .int8_max_streams = 4, .int8_lines_per_step = 1,
                      .int8_max_rows = 7, .x_l1_chunk_bytes = 32 * 1024, .x_l2_chunk_bytes = 128 * 1024,
                      .min_run_bytes = 2048, .x_in_l2_on_intel = false, .line_prefetch_bytes = 2048,
                      .min_parallel_weights = std::size_t{1} << 16},
    .small_m_lanes = {.min_rows = 0, .typed_min_rows = 0, .rows_16 = 0, .columns_16 = 0, .rows_32 = 0, .columns_32 = 0, .rows_48 = 0,
                      .columns_48 = 0, .rows_64 = 0, .columns_64 = 0},
    .projection = {.max_small_m_groups = 3, .converted_block_bytes = 512 * 1024,
                   .converted_block_max_bytes = 32 * 1024 * 1024},
    .decode = {.min_split_positions = 64},
};

// Portable (x86-64-v2, generic, aarch64): one-lane tiles and GCC vectors of 4 floats (SSE, NEON).
// Its attention choices follow AVX2's, unmeasured on such a CPU; the tiles are sized for 16
// registers of one lane.
inline constexpr KernelTuning portable_tuning{
    .name = "portable",
    .tiled = {.key_block = 8, .fused_key_block = 16, .score_rows = 4, .dot_rows_max = 8, .out_rows = 4,
              .out_vecs = 4, .dims_per_prefetch_run = 8, .group_dot_tiles_plan = false,
              .one_row_output_keys_per_prefetch = 1, .e4m3_as_f32_bits_off_intel = false},
    .lanes = {.min_rows = 8, .key_block = 24, .score_vecs_max = 2, .score_keys_max_2 = 6, .score_keys_max_1 = 12,
              .out_rows_max = 6, .out_vecs_max = 2},
    .prefetch = {.f32 = {2, true, true}, .f16_bf16 = {2, true, true}, .int8 = {1, false, false},
                 .byte_formats = {2, true, true}, .f32_group_dot_tiles = {1, false, true}, .paged_pieces = 4,
                 .wide_paged_parts_on_intel = 0,
                 .wide_paged_max_pieces = 0, .wide_paged_into_l1_off_intel = true, .paged_turn_lines = 8},
    .small_m = {.max_rows = 8, .min_parallel_weights = std::size_t{1} << 16, .l1_chunk_bytes = 32 * 1024,
                .l2_chunk_bytes = 128 * 1024, .l2_prefetch_bytes_ahead = 256 * 1024, .min_rows_to_prefetch = 3,
                .spread_streams = 4, .min_rows_for_lines = 3, .min_line_streams = 3, .line_prefetch_bytes = 2048,
                .pass_rows = 4, .passes_from_rows = 7, .passes_prefetch_from_first_on_intel = false,
                .zmm_max_rows = 0, .zmm_tile_rows = 0},
    .small_m_typed = {.max_streams = 4, .int8_max_streams = 4, .int8_lines_per_step = 1,
                      .int8_max_rows = 7, .x_l1_chunk_bytes = 32 * 1024, .x_l2_chunk_bytes = 128 * 1024,
                      .min_run_bytes = 2048, .x_in_l2_on_intel = false, .line_prefetch_bytes = 2048,
                      .min_parallel_weights = std::size_t{1} << 16},
    .small_m_lanes = {.min_rows = 0, .typed_min_rows = 0, .rows_16 = 0, .columns_16 = 0, .rows_32 = 0, .columns_32 = 0, .rows_48 = 0,
                      .columns_48 = 0, .rows_64 = 0, .columns_64 = 0},
    .projection = {.max_small_m_groups = 3, .converted_block_bytes = 512 * 1024,
                   .converted_block_max_bytes = 32 * 1024 * 1024},
    .decode = {.min_split_positions = 64},
};

// This build's class: the one test of the compiler's macros that picks a table. The kernels'
// code paths test the same macros (simd.hpp's back-end, small_m_gemm.cpp's ISA structs).
inline constexpr KernelTuning tuning =
#if defined(__AVX512F__)
    avx512_tuning;
#elif defined(__AVX2__) && defined(__FMA__)
    avx2_tuning;
#else
    portable_tuning;
#endif

}  // namespace kvbench
