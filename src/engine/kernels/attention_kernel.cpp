// attend_group_tiled(): the online-softmax kernel over blocks of keys, and its register tiles. Written
// once against the vector primitives of simd.hpp; the back-end (AVX-512, AVX2, scalar) is chosen there.
#include "attention_kernel.hpp"

#include "block_code_pairs.hpp"
#include "block_prefetcher.hpp"
#include "even_tiles.hpp"
#include "intel_cpu.hpp"
#include "keep_in_register.hpp"
#include "kv_decode.hpp"
#include "kv_load.hpp"
#include "paged_rows.hpp"
#include "simd.hpp"
#include "tuning.hpp"

#include "kvbench/engine/kv_convert.hpp"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>

namespace kvbench {

namespace {

using namespace simd;

// This build's blocks and tiles (tuning.hpp).
constexpr KernelTuning::Tiled tiles = tuning.tiled;
constexpr std::size_t key_block = tiles.key_block;
constexpr std::size_t block_vecs = key_block / lanes;  // vectors per score row of a block
static_assert(key_block % lanes == 0 && key_block <= max_key_block);
// Keys per block of the fused tiles (a reduced type converted in their loads).
constexpr std::size_t fused_key_block = tiles.fused_key_block;
static_assert(fused_key_block <= max_key_block);
static_assert(fused_key_block % lanes == 0);

struct Q4_0Query;  // q4_0_dot_score_tile's query

// Everything the tiles of one key block need.
struct BlockState {
    const GroupAttention& problem;
    AttendWorkspace& ws;
    BlockPrefetcher& prefetcher;
    std::size_t first_key;    // index of the block's first key in the split
    std::size_t n_keys;       // keys in this block, <= block_keys
    std::size_t block_keys;   // keys per block of this run: key_block, or fused_key_block
    const float* keys;        // (n_keys, key_stride): the block's keys, in place or decoded
    std::size_t key_stride;
    const float* values;      // (n_keys, value_stride): the block's values, in place, packed or decoded
    std::size_t value_stride;
    bool keys_padded = false;  // keys are rows of padded_dim floats, zero past head_dim (decoded)
    // A reduced type read by the fused tiles (converted as they load it): the block's stored
    // keys and values, each row_bytes of its type apart, and int8's scales from the block's
    // first key on.
    const std::byte* stored_keys = nullptr;
    const std::byte* stored_values = nullptr;
    std::size_t stored_key_row_bytes = 0;
    std::size_t stored_value_row_bytes = 0;
    const float* key_scales = nullptr;
    const float* value_scales = nullptr;
    // int8 keys on AVX2 with one query row: the scaled query rounded to 16 bits, and the factor
    // back to its scale (see int8_dot_score_tile); null elsewhere.
    const std::int16_t* query_i16 = nullptr;
    float query_i16_unscale = 0.0f;
    // q4_0 keys with one query row (AVX-512, AVX2): that rounded query as
    // q4_0_dot_score_tile reads it (its factor back is query_i16_unscale); null elsewhere.
    const Q4_0Query* q4_0_query = nullptr;
    // e4m3 keys read as f32 bits (kv_load.hpp's load_e4m3_bits), the query 2^120 larger; e4m3
    // values so, each probability 2^120 larger as the output tiles multiply it.
    bool e4m3_keys_as_bits = false;
    bool e4m3_values_as_bits = false;
    std::uint64_t flops = 0;  // executed by the tiles so far, padding included
    // A block of f32 rows over two cache blocks, read in place (docs/model.md, "Paged caches"):
    // keys from later_key on are the rows of later_keys, the first of them row later_key's, and
    // values from later_value on those of later_values. Past n_keys: one run, the rows alone.
    std::size_t later_key = SIZE_MAX;
    std::size_t later_value = SIZE_MAX;
    const float* later_keys = nullptr;
    const float* later_values = nullptr;
    // A piece of a fused block read in place from one cache block (FusedPieces): the block's key
    // that is this state's key 0, where its scores and probabilities lie in each row of probs.
    std::size_t probs_first = 0;
};

// Row r of the scores and probabilities of the keys this state reads, from its key 0 on.
float* block_probs(const BlockState& st, std::size_t row) {
    return st.ws.probs() + row * max_key_block + st.probs_first;
}

// Row t of the block's f32 keys (values) in place, in whichever run holds it.
const float* key_row(const BlockState& st, std::size_t t) {
    return t < st.later_key ? st.keys + t * st.key_stride : st.later_keys + (t - st.later_key) * st.key_stride;
}
const float* value_row(const BlockState& st, std::size_t t) {
    return t < st.later_value ? st.values + t * st.value_stride
                              : st.later_values + (t - st.later_value) * st.value_stride;
}

// Keys [0, n_keys) of the block, transposed to keys_t (head_dim, max_key_block) so that
// a score row is computed as whole vectors along the keys. Key vectors past n_keys are not
// written: their scores are masked.
void pack_key_block(BlockState& st) {
    const std::size_t dim = st.problem.head_dim;
    float* keys_t = st.ws.keys_t();
    Vec rows[lanes];
    for (std::size_t t0 = 0; t0 < st.n_keys; t0 += lanes) {
        for (std::size_t d0 = 0; d0 < dim; d0 += lanes) {
            const std::size_t n_dims = std::min(lanes, dim - d0);
            const Simd::Mask dims = Simd::first(n_dims);
            for (std::size_t i = 0; i < lanes; ++i) {
                rows[i] = t0 + i < st.n_keys ? Simd::load(key_row(st, t0 + i) + d0, dims) : Simd::zero();
            }
            st.prefetcher.issue<plan_may_spread(KvDtype::f32)>();
            Simd::transpose(rows);
            for (std::size_t j = 0; j < n_dims; ++j) Simd::store(keys_t + (d0 + j) * max_key_block + t0, rows[j]);
        }
    }
}

// Values [0, n_keys) of the block as (n_keys, padded_dim) rows, zero past head_dim, so the
// output tiles read whole vectors from one small contiguous buffer.
void pack_value_block(BlockState& st) {
    const std::size_t padded_dim = st.ws.padded_dim();
    float* packed = st.ws.values();
    for (std::size_t t = 0; t < st.n_keys; ++t) {
        for (std::size_t v = 0; v * lanes < padded_dim; ++v) {
            Simd::store(packed + t * padded_dim + v * lanes,
                        Simd::load(value_row(st, t) + v * lanes, lanes_below(st.problem.head_dim, v)));
        }
    }
    st.values = packed;
    st.value_stride = padded_dim;
    st.later_value = SIZE_MAX;
}

// Rows per dot tile, in the order score_block takes them: tiles of 4 rows while whole ones
// fit, then of 2, then of 1 (fewer with fewer lanes).
constexpr std::array<std::size_t, 3> dot_tile_rows = {
    std::min<std::size_t>(4, lanes), std::min<std::size_t>(2, lanes), 1};

// Rows [first_row, first_row + tile_rows) of the scaled queries, zero past head_dim (the
// tiles read whole vectors), row i's element d at offset(i, d) from the tile's first row
// (first_row · padded_dim): each kind of tile lays its queries out as it reads them.
template <class Offset>
void write_tile_queries(const GroupAttention& problem, AttendWorkspace& ws, std::size_t first_row,
                        std::size_t tile_rows, const Offset& offset) {
    const std::size_t padded_dim = ws.padded_dim();
    float* tile = ws.queries() + first_row * padded_dim;
    for (std::size_t i = 0; i < tile_rows; ++i) {
        const float* src = problem.q + (first_row + i) * problem.q_stride;
        for (std::size_t d = 0; d < padded_dim; ++d) {
            tile[offset(i, d)] = d < problem.head_dim ? src[d] * problem.scale : 0.0f;
        }
    }
}

// The scaled queries as the dot tiles read them: each tile's rows interleaved a vector at a
// time (row i's elements [d0, d0 + lanes) at d0 · tile_rows + i · lanes from the tile's first
// row), so a step's query vectors lie side by side behind one pointer. Laid out as rows, the
// 4-row AVX2 tile would need a pointer per row besides the prefetcher's state, more than the
// 16 general registers hold, and GCC spilled every step
// (bench/journal/2026-12-02-dot-tile-queries-side-by-side.md). One row's layout is its row, as
// the int8 tile expects.
void write_dot_tile_queries(const GroupAttention& problem, AttendWorkspace& ws) {
    std::size_t first_row = 0;
    for (const std::size_t tile_rows : dot_tile_rows) {
        for (; first_row + tile_rows <= problem.n_rows; first_row += tile_rows) {
            write_tile_queries(problem, ws, first_row, tile_rows, [&](std::size_t i, std::size_t d) {
                return d / lanes * tile_rows * lanes + i * lanes + d % lanes;
            });
        }
    }
}

// The scaled queries as the transposed tiles read them: each tile's rows (as score_block cuts
// them) element by element, row i's element d at d · tile_rows + i from the tile's first row,
// so a step's broadcasts lie side by side behind one pointer. Laid out as rows, the 11-row
// AVX-512 tile would need a pointer per row, which GCC kept in vector registers and on the stack
// (bench/journal/2026-12-03-transposed-tiles-in-registers.md). Not inlined: inlined, GCC 12
// drew from for_each_tile's arithmetic an impossible range of n_rows and flagged
// attend_group's fills (-Wstringop-overflow).
[[gnu::noinline]] void write_transposed_tile_queries(const GroupAttention& problem, AttendWorkspace& ws) {
    for_each_tile(problem.n_rows, tiles.score_rows, [&](std::size_t first_row, std::size_t tile_rows) {
        write_tile_queries(problem, ws, first_row, tile_rows,
                           [&](std::size_t i, std::size_t d) { return d * tile_rows + i; });
    });
}

// Scores of n_rows rows × (lanes / n_rows) keys from dot products along head_dim: one
// accumulator per (row, key), reduced to one vector of scores at the end. For a few rows
// this is cheaper than transposing the keys (a 16×16 transpose is 64 shuffles, 1 per cycle).
// whole: every key row is whole vectors up to head_dim (the KV cache at dh a multiple of the
// lanes, or a decoded block padded with zeros), so plain loads need no mask. dtype other than
// f32: the stored keys are read and converted in registers (fused), whole vectors only.
// Inlined, with the prefetcher a local copy: called as a function, with the prefetcher's state
// behind BlockState's reference, GCC stored all the accumulators to the stack after every
// step, a store per FMA (bench/journal/2026-12-02-dot-tiles-in-registers.md).
// two_runs: f32 keys of a paged block in place in two runs (BlockState::later_key).
// Returns the scores, row i's key j in lane i · n_cols + j; stored into probs unless
// store_scores is false (dot_score_rows then stores four tiles' at once).
template <std::size_t n_rows, bool whole, KvDtype dtype = KvDtype::f32, bool two_runs = false, bool store_scores = true>
[[gnu::always_inline]] inline Vec dot_score_tile(BlockState& st, std::size_t first_row, std::size_t first_key) {
    static_assert(lanes % n_rows == 0);
    constexpr std::size_t n_cols = lanes / n_rows;
    const std::size_t dim = st.problem.head_dim;
    const std::size_t padded_dim = st.ws.padded_dim();
    const float* queries = st.ws.queries() + first_row * padded_dim;
    // Keys past the block repeat its last key; their scores are masked later.
    [[maybe_unused]] const float* keys[n_cols];
    [[maybe_unused]] const std::byte* stored[n_cols];
    for (std::size_t j = 0; j < n_cols; ++j) {
        const std::size_t key = std::min(first_key + j, st.n_keys - 1);
        if constexpr (dtype != KvDtype::f32) {
            stored[j] = st.stored_keys + key * st.stored_key_row_bytes;
        } else {
            keys[j] = st.keys + key * st.key_stride;
        }
    }
    // Tested once a tile: a test every key slowed the tiles, and a contiguous cache's tiles, which
    // have one run, leave out even this one.
    if constexpr (two_runs) {
        if (first_key + n_cols > st.later_key) {
            for (std::size_t j = 0; j < n_cols; ++j) keys[j] = key_row(st, std::min(first_key + j, st.n_keys - 1));
        }
    }
    BlockPrefetcher prefetcher = st.prefetcher;
    Vec acc[lanes];  // acc[i · n_cols + j]: row i, key j
    for (Vec& a : acc) a = Simd::zero();
    for (std::size_t d0 = 0; d0 < dim; d0 += lanes) {
        Vec q[n_rows];
        for (std::size_t i = 0; i < n_rows; ++i) {
            // Loaded once for the n_cols keys, not folded into each FMA as another load.
            Vec row = Simd::load(queries + d0 * n_rows + i * lanes);
            if constexpr (n_cols > 1) keep_in_register(row);
            q[i] = row;
        }
        for (std::size_t j = 0; j < n_cols; ++j) {
            Vec k;
            if constexpr (dtype != KvDtype::f32) {
                k = load_fused_kv<dtype>(stored[j], d0, st.e4m3_keys_as_bits);
            } else if constexpr (whole) {
                k = Simd::load(keys[j] + d0);
            } else {
                k = Simd::load(keys[j] + d0, Simd::first(std::min(lanes, dim - d0)));
            }
            for (std::size_t i = 0; i < n_rows; ++i) acc[i * n_cols + j] = Simd::fma(q[i], k, acc[i * n_cols + j]);
        }
        prefetcher.issue<tile_may_spread(as_stored(dtype), n_rows)>();
    }
    st.prefetcher.take_progress(prefetcher);
    st.flops += 2 * n_rows * n_cols * round_up(dim, lanes);  // keys past the block and dims past dim too
    const Vec scores = Simd::reduce_lanes(acc);
    if constexpr (store_scores) {
        const std::size_t n_valid = std::min(n_cols, st.block_keys - first_key);
        for (std::size_t i = 0; i < n_rows; ++i) {
            Simd::store_lanes(block_probs(st, first_row + i) + first_key, scores, i * n_cols, n_valid);
        }
    }
    return scores;
}

// dot_score_tile for a whole tile (n_cols keys of the block) read in a reduced stored type:
// one running pointer walks the tile's keys instead of n_cols pointers, which with n_cols
// accumulators would not fit the 16 registers of AVX2, and the prefetcher is a local copy,
// kept in registers across the loop. Inlined into the loop over a block's tiles: at dh = 64 a
// tile of int8 is 64 loads and FMAs, and a call's set-up (the accumulators zeroed through
// memory, spills) weighs on so short a tile
// (bench/journal/2026-12-02-fused-tiles-from-cache.md).
template <std::size_t n_rows, KvDtype dtype>
[[gnu::always_inline]] inline void stored_dot_score_tile(BlockState& st, std::size_t first_row, std::size_t first_key) {
    constexpr std::size_t n_cols = lanes / n_rows;
    const std::size_t dim = st.problem.head_dim;
    const std::size_t padded_dim = st.ws.padded_dim();
    const std::size_t row_bytes = st.stored_key_row_bytes;
    const float* queries = st.ws.queries() + first_row * padded_dim;
    const std::byte* first = st.stored_keys + first_key * row_bytes;
    BlockPrefetcher prefetcher = st.prefetcher;
    Vec acc[lanes];  // acc[i · n_cols + j]: row i, key j
    for (Vec& a : acc) a = Simd::zero();
    // Two vectors of a block type's block a step, with one read of the block's scale
    // (load_fused_codes): with one row, the block's sum times its scale; with more, the same
    // FMAs in the same order as a vector a step.
    constexpr std::size_t per_step = is_block_type(dtype) && kv_block_values % (2 * lanes) == 0 ? 2 : 1;
    std::size_t d0 = 0;
    for (; d0 + per_step * lanes <= dim; d0 += per_step * lanes) {
        Vec q[per_step][n_rows];
        for (std::size_t v = 0; v < per_step; ++v) {
            for (std::size_t i = 0; i < n_rows; ++i) q[v][i] = Simd::load(queries + (d0 + v * lanes) * n_rows + i * lanes);
        }
        const std::byte* key = first;
        for (std::size_t j = 0; j < n_cols; ++j, key += row_bytes) {
            if constexpr (n_rows == 1 && is_block_type(dtype) && per_step == 2) {
                // One row: the query dotted with the block's codes, then times its scale, once.
                Vec codes[per_step];
                const Vec scale = load_fused_codes<dtype>(key, d0, codes);
                const Vec sum = Simd::fma(q[1][0], codes[1], Simd::mul(q[0][0], codes[0]));
                acc[j] = Simd::fma(scale, sum, acc[j]);
            } else {
                Vec k[per_step];
                load_fused_vectors<dtype>(key, d0, k, st.e4m3_keys_as_bits);
                for (std::size_t v = 0; v < per_step; ++v) {
                    for (std::size_t i = 0; i < n_rows; ++i) acc[i * n_cols + j] = Simd::fma(q[v][i], k[v], acc[i * n_cols + j]);
                }
            }
        }
        for (std::size_t v = 0; v < per_step; ++v) prefetcher.issue<tile_may_spread(as_stored(dtype), n_rows)>();
    }
    for (; d0 < dim; d0 += lanes) {  // a block type's last vector, in a partial block
        Vec q[n_rows];
        for (std::size_t i = 0; i < n_rows; ++i) q[i] = Simd::load(queries + d0 * n_rows + i * lanes);
        const std::byte* key = first;
        for (std::size_t j = 0; j < n_cols; ++j, key += row_bytes) {
            const Vec k = load_fused_kv<dtype>(key, d0, st.e4m3_keys_as_bits);
            for (std::size_t i = 0; i < n_rows; ++i) acc[i * n_cols + j] = Simd::fma(q[i], k, acc[i * n_cols + j]);
        }
        prefetcher.issue<tile_may_spread(as_stored(dtype), n_rows)>();
    }
    st.prefetcher.take_progress(prefetcher);
    st.flops += 2 * n_rows * n_cols * dim;
    const Vec scores = Simd::reduce_lanes(acc);
    float* probs = block_probs(st, first_row) + first_key;
    if constexpr (n_rows == 1) {
        Simd::store(probs, scores);  // a whole tile: every lane is a key of the block
    } else {
        for (std::size_t i = 0; i < n_rows; ++i) Simd::store_lanes(probs + i * max_key_block, scores, i * n_cols, n_cols);
    }
}

// int8 keys as integers, one query row: AVX2 (below) and AVX-512 with its byte and word
// instructions (BW).
#if (defined(__AVX2__) && !defined(__AVX512F__)) || defined(__AVX512BW__)
#define KVBENCH_INT8_INTEGER_KEYS 1
#endif

#if defined(KVBENCH_INT8_INTEGER_KEYS)
// AVX2 has no instruction that converts and multiplies int8 in one: each vector of 8 int8 keys
// costs a sign extension, a conversion and an FMA, two of them on the two FMA pipes, and for
// MHA (each element used by one query row) that made int8 compute-bound where it should be
// memory-bound (bench/journal/2026-12-02-int8-integer-keys-on-avx2.md). Here the keys stay
// integers: 16 of them sign-extend to 16 bits and one vpmaddwd multiplies them by the query
// rounded to 16 bits (query_i16, largest element ±32767) and adds pairs into 32-bit lanes, one
// pipe-slot per 16 keys. The rounding of the query is at most 2^-16 of its largest element,
// 1/256 of int8's own rounding of the keys (docs/model.md, "KV-cache element types"); sums are
// exact integers (|q|·|k|·head_dim ≤ 32767·128·256 < 2^31, so head_dim ≤ int8_dot_max_dim).
// AVX-512 does the same 32 keys at a time (vpdpwssd with VNNI, else vpmaddwd and an add): its
// float tiles spent a sign extension and a conversion per 16 elements before each FMA, and
// those, not memory, set int8's pace on Zen 5
// (bench/journal/2026-12-04-int8-and-formats-roof.md).
#if defined(__AVX512F__)
using IntVec = __m512i;
constexpr std::size_t int8_dot_lanes = 32;
[[gnu::always_inline]] inline IntVec int8_dot_load_query(const std::int16_t* q) { return _mm512_loadu_si512(q); }
[[gnu::always_inline]] inline IntVec int8_dot_step(IntVec acc, IntVec q, const std::byte* key) {
    const IntVec k = _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(key)));
#if defined(__AVX512VNNI__)
    return _mm512_dpwssd_epi32(acc, q, k);
#else
    return _mm512_add_epi32(acc, _mm512_madd_epi16(q, k));
#endif
}
[[gnu::always_inline]] inline Vec int8_dot_to_float(IntVec sums) { return _mm512_cvtepi32_ps(sums); }
[[gnu::always_inline]] inline IntVec int8_dot_zero() { return _mm512_setzero_si512(); }
#else
using IntVec = __m256i;
constexpr std::size_t int8_dot_lanes = 16;
[[gnu::always_inline]] inline IntVec int8_dot_load_query(const std::int16_t* q) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q));
}
[[gnu::always_inline]] inline IntVec int8_dot_step(IntVec acc, IntVec q, const std::byte* key) {
    const IntVec k = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(key)));
    return _mm256_add_epi32(acc, _mm256_madd_epi16(q, k));
}
[[gnu::always_inline]] inline Vec int8_dot_to_float(IntVec sums) { return _mm256_cvtepi32_ps(sums); }
[[gnu::always_inline]] inline IntVec int8_dot_zero() { return _mm256_setzero_si256(); }
#endif
constexpr std::size_t int8_dot_max_dim = 256;

// q rounded to 16 bits, q[d] ≈ out[d] · (the factor returned); none for a query with an
// infinite or NaN element (the float tiles then give the f32 path's NaN).
std::optional<float> round_query_to_i16(const float* q, std::size_t dim, std::int16_t* out) {
    float largest = 0.0f;
    for (std::size_t d = 0; d < dim; ++d) {
        if (!std::isfinite(q[d])) return std::nullopt;
        largest = std::max(largest, std::abs(q[d]));
    }
    if (largest == 0.0f) {
        std::fill_n(out, dim, std::int16_t{0});
        return 0.0f;
    }
    const float scale = 32767.0f / largest;
    for (std::size_t d = 0; d < dim; ++d) out[d] = static_cast<std::int16_t>(std::nearbyint(q[d] * scale));
    return largest / 32767.0f;
}

[[gnu::always_inline]] inline void int8_dot_score_tile(BlockState& st, std::size_t first_key) {
    constexpr std::size_t n_cols = lanes;  // keys per tile: one score per lane
    const std::size_t dim = st.problem.head_dim;
    const std::size_t row_bytes = st.stored_key_row_bytes;
    const std::byte* first = st.stored_keys + first_key * row_bytes;
    BlockPrefetcher prefetcher = st.prefetcher;
    IntVec acc[n_cols];
    for (IntVec& a : acc) a = int8_dot_zero();
    for (std::size_t d0 = 0; d0 < dim; d0 += int8_dot_lanes) {
        const IntVec q = int8_dot_load_query(st.query_i16 + d0);
        const std::byte* key = first + d0;
        for (std::size_t j = 0; j < n_cols; ++j, key += row_bytes) acc[j] = int8_dot_step(acc[j], q, key);
        prefetcher.issue<tile_may_spread(KvDtype::int8, 1)>();
    }
    st.prefetcher.take_progress(prefetcher);
    st.flops += 2 * n_cols * dim;
    Vec sums[n_cols];
    for (std::size_t j = 0; j < n_cols; ++j) sums[j] = int8_dot_to_float(acc[j]);
    const Vec scores = Simd::mul(Simd::reduce_lanes(sums), Simd::set1(st.query_i16_unscale));
    Simd::store(block_probs(st, 0) + first_key, scores);
}
#endif

// q8_0 keys as integers, one query row, on AVX2: int8's tile with each block's sum converted
// and scaled into the key's float accumulator. The float tile spends a widening to 32 bits and
// a conversion per 8 codes before each FMA, and on AVX2 those set q8_0's pace at issue 39's
// point (bench/journal/2026-12-07-block-codes-as-integers-on-avx2.md). A block's sums are exact
// (two products of at most 32767 · 128 in each of two steps); the error is the query's
// rounding, as for int8. On AVX-512, where one step is the whole block, it gained 2 %
// (bench/journal/2026-12-05-q8-0-integer-keys.md) and is left out.
#if defined(KVBENCH_INT8_INTEGER_KEYS) && !defined(__AVX512F__)
#define KVBENCH_Q8_0_INTEGER_KEYS 1
static_assert(kv_block_values == 2 * int8_dot_lanes);

[[gnu::always_inline]] inline void q8_0_dot_score_tile(BlockState& st, std::size_t first_key) {
    constexpr std::size_t n_cols = lanes;  // keys per tile: one score per lane
    constexpr std::size_t block_bytes = kv_row_bytes(KvDtype::q8_0, kv_block_values);
    const std::size_t dim = st.problem.head_dim;
    const std::size_t row_bytes = st.stored_key_row_bytes;
    const std::byte* first = st.stored_keys + first_key * row_bytes;
    BlockPrefetcher prefetcher = st.prefetcher;
    Vec acc[n_cols];
    for (Vec& a : acc) a = Simd::zero();
    for (std::size_t b = 0; b < dim / kv_block_values; ++b) {
        const IntVec q0 = int8_dot_load_query(st.query_i16 + b * kv_block_values);
        const IntVec q1 = int8_dot_load_query(st.query_i16 + b * kv_block_values + int8_dot_lanes);
        const std::byte* block = first + b * block_bytes;
        for (std::size_t j = 0; j < n_cols; ++j, block += row_bytes) {
            const IntVec sums = int8_dot_step(int8_dot_step(int8_dot_zero(), q0, block + 2), q1, block + 2 + int8_dot_lanes);
            std::uint16_t scale_bits;
            std::memcpy(&scale_bits, block, sizeof scale_bits);
            acc[j] = Simd::fma(int8_dot_to_float(sums), Simd::set1(_cvtsh_ss(scale_bits)), acc[j]);
        }
        // As many calls a block as the float tile makes (one a vector of the block).
        for (std::size_t v = 0; v < kv_block_values / lanes; ++v) prefetcher.issue<tile_may_spread(KvDtype::q8_0, 1)>();
    }
    st.prefetcher.take_progress(prefetcher);
    st.flops += 2 * n_cols * dim;
    const Vec scores = Simd::mul(Simd::reduce_lanes(acc), Simd::set1(st.query_i16_unscale));
    Simd::store(block_probs(st, 0) + first_key, scores);
}
#endif

// q4_0 keys as integers, one query row, on AVX-512 and AVX2.
#if defined(KVBENCH_INT8_INTEGER_KEYS) && defined(KVBENCH_BLOCK_CODE_PAIRS)
#define KVBENCH_Q4_0_INTEGER_KEYS 1
#endif

#if defined(KVBENCH_Q4_0_INTEGER_KEYS)
// With one query row every 4-bit code is used by one product, and converting codes to floats
// (a widening, two permutes and a shift a block, and the scale's broadcast and conversion)
// weighs on q4_0's step more than its bytes do (bench/journal/2026-12-06-q4-0-keys-in-lanes.md).
// Here a tile's keys (16, or 8 on AVX2) lie in the lanes: a block's codes of those keys come as
// four vectors of 4 bytes a key (load_q4_0_codes; 4-byte gathers until Zen 5 measured them
// slow), shifts and masks leave two codes in each 32-bit lane as 16-bit integers, and one
// vpdpwssd (vpmaddwd and an add on AVX2) multiplies them by a pair of the query rounded to 16
// bits (as int8's keys are) and adds them; the lanes end as the keys' sums, with no reduction
// across lanes. A code c stands for c - 8: the block's sum starts at -8 Σ q. Sums are exact
// integers (32767 · (15 + 8) · 32 < 2^31), so the error is the query's rounding alone. On
// AVX-512 q8_0's keys the same way ran no faster than its float tile, by eight gathers a block
// or by loads and this transpose (bench/journal/2026-12-07-q8-0-keys-in-lanes-on-zen-5.md), and
// keep it; AVX2's take int8's tile (q8_0_dot_score_tile).
// With VNNI's byte products (vpdpbusd, four products of an unsigned and a signed byte added into
// each 32-bit lane) the codes need no widening to 16 bits: a lane's 4 code bytes, masked to their
// low or high nibbles, are 4 codes as bytes. The 16-bit query element q = 256·h + l is split into
// a signed high byte h (the codes unsigned) and an unsigned low byte l (the codes, 0 to 15, read
// as signed), and the block's sum is 256·Σ h·c + Σ l·c: the same exact integer as the 16-bit
// products', so the same scores, with a mask and half a shift per 4 codes where the pairs took
// one and a half of each.
#if defined(__AVX512VNNI__)
#define KVBENCH_Q4_0_BYTE_PRODUCTS 1
#endif

struct Q4_0Query {
#if defined(KVBENCH_Q4_0_BYTE_PRODUCTS)
    // Per block and group g of 4 code bytes, 4 query bytes a word: the high bytes of elements 4g
    // to 4g+3 (the codes' low nibbles), of the 16 past them (the high nibbles), then the low bytes
    // of the same two runs.
#else
    // Per block and group g of 4 code bytes, the query pairs (two int16 in an int32) that
    // multiply the low nibbles of bytes 4g and 4g+2, of 4g+1 and 4g+3, then their high nibbles:
    // elements 4g, 4g+2; 4g+1, 4g+3; and 16 past each (kv_convert.hpp's layout).
#endif
    alignas(64) std::array<std::int32_t, int8_dot_max_dim / kv_block_values * 16> pairs;
    std::array<std::int32_t, int8_dot_max_dim / kv_block_values> offsets;  // -8 Σ q over each block
};

// The query rounded to 16 bits (round_query_to_i16's) in Q4_0Query's layout. Requires: dim a
// multiple of kv_block_values, at most int8_dot_max_dim.
void arrange_query_for_q4_0(const std::int16_t* q, std::size_t dim, Q4_0Query& out) {
#if defined(KVBENCH_Q4_0_BYTE_PRODUCTS)
    // Elements e..e+3 as 4 bytes of a word, each its high (signed) or low (unsigned) byte.
    const auto bytes = [](const std::int16_t* e, bool high) {
        std::uint32_t word = 0;
        for (std::size_t i = 0; i < 4; ++i) {
            const auto element = static_cast<std::uint16_t>(e[i]);
            word |= static_cast<std::uint32_t>(high ? element >> 8 : element & 0xffu) << (8 * i);
        }
        return static_cast<std::int32_t>(word);
    };
#else
    const auto pair = [](std::int16_t low, std::int16_t high) {
        return static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::uint16_t>(low)) |
                                         static_cast<std::uint32_t>(static_cast<std::uint16_t>(high)) << 16);
    };
#endif
    for (std::size_t b = 0; b < dim / kv_block_values; ++b) {
        const std::int16_t* low = q + b * kv_block_values;  // the low nibbles' elements
        const std::int16_t* high = low + kv_block_values / 2;
        std::int32_t sum = 0;
        for (std::size_t i = 0; i < kv_block_values; ++i) sum += low[i];
        out.offsets[b] = -8 * sum;
        std::int32_t* pairs = out.pairs.data() + 16 * b;
        for (std::size_t g = 0; g < 4; ++g) {
#if defined(KVBENCH_Q4_0_BYTE_PRODUCTS)
            pairs[4 * g + 0] = bytes(low + 4 * g, true);
            pairs[4 * g + 1] = bytes(high + 4 * g, true);
            pairs[4 * g + 2] = bytes(low + 4 * g, false);
            pairs[4 * g + 3] = bytes(high + 4 * g, false);
#else
            pairs[4 * g + 0] = pair(low[4 * g], low[4 * g + 2]);
            pairs[4 * g + 1] = pair(low[4 * g + 1], low[4 * g + 3]);
            pairs[4 * g + 2] = pair(high[4 * g], high[4 * g + 2]);
            pairs[4 * g + 3] = pair(high[4 * g + 1], high[4 * g + 3]);
#endif
        }
    }
}

[[gnu::always_inline]] inline void q4_0_dot_score_tile(BlockState& st, std::size_t first_key) {
    static_assert(kv_block_values == 32);
    const std::size_t dim = st.problem.head_dim;
    const std::size_t row_bytes = st.stored_key_row_bytes;
    constexpr std::size_t block_bytes = kv_row_bytes(KvDtype::q4_0, kv_block_values);
    const std::byte* first = st.stored_keys + first_key * row_bytes;
    const Q4_0Query& query = *st.q4_0_query;
    const auto rows = lane_row_offsets(row_bytes);
    BlockPrefetcher prefetcher = st.prefetcher;
    Vec scores = Simd::zero();
    for (std::size_t b = 0; b < dim / kv_block_values; ++b) {
        const std::byte* block = first + b * block_bytes;
        const std::int32_t* pairs = query.pairs.data() + 16 * b;
        PairVec sums = broadcast_pair(query.offsets[b]);
        PairVec block_codes[4];
        load_q4_0_codes(block + 2, row_bytes, block_codes);
#if defined(KVBENCH_Q4_0_BYTE_PRODUCTS)
        PairVec high_sums = zero_pairs();  // Σ h·c, 256 times smaller than its part of the sum
        for (std::size_t g = 0; g < 4; ++g) {
            const PairVec low_nibbles = nibble_bytes<0>(block_codes[g]);
            const PairVec high_nibbles = nibble_bytes<4>(block_codes[g]);
            high_sums = add_byte_products(high_sums, low_nibbles, broadcast_pair(pairs[4 * g]));
            high_sums = add_byte_products(high_sums, high_nibbles, broadcast_pair(pairs[4 * g + 1]));
            sums = add_byte_products(sums, broadcast_pair(pairs[4 * g + 2]), low_nibbles);
            sums = add_byte_products(sums, broadcast_pair(pairs[4 * g + 3]), high_nibbles);
        }
        sums = add_lanes(sums, times_256(high_sums));
#else
        for (std::size_t g = 0; g < 4; ++g) {
            const PairVec codes = block_codes[g];
            sums = add_pair_products(sums, nibble_words<0>(codes), broadcast_pair(pairs[4 * g]));
            sums = add_pair_products(sums, nibble_words<8>(codes), broadcast_pair(pairs[4 * g + 1]));
            sums = add_pair_products(sums, nibble_words<4>(codes), broadcast_pair(pairs[4 * g + 2]));
            sums = add_pair_products(sums, nibble_words<12>(codes), broadcast_pair(pairs[4 * g + 3]));
        }
#endif
        scores = Simd::fma(gather_block_scales(block, rows), pair_sums_to_floats(sums), scores);
        // As many calls a block as the float tile makes (one a vector of the block), so the
        // prefetch plan's count per block holds for either.
        for (std::size_t v = 0; v < kv_block_values / lanes; ++v) prefetcher.issue<tile_may_spread(KvDtype::q4_0, 1)>();
    }
    st.prefetcher.take_progress(prefetcher);
    st.flops += 2 * lanes * dim;
    Simd::store(block_probs(st, 0) + first_key, Simd::mul(scores, Simd::set1(st.query_i16_unscale)));
}
#endif

// Scores of rows [first_row, first_row + n_rows) against the whole block from the transposed
// keys: an (n_rows × key_block) register tile, one broadcast query element × one key vector
// per FMA.
template <std::size_t n_rows>
void transposed_score_tile(BlockState& st, std::size_t first_row) {
    const std::size_t padded_dim = st.ws.padded_dim();
    Vec acc[n_rows][block_vecs];
    for (auto& row : acc) {
        for (Vec& a : row) a = Simd::zero();
    }
    const float* queries = st.ws.queries() + first_row * padded_dim;
    const float* keys_t = st.ws.keys_t();
    // The prefetches of a run of dims follow its FMAs: interleaved dim by dim, GCC 12 wrote all
    // the accumulators back to the stack after every dim, a store per FMA
    // (bench/journal/2026-12-03-transposed-tiles-in-registers.md). Runs of dims_per_prefetch_run
    // dims still spread them over the tile.
    constexpr std::size_t dims_per_prefetch_run = tiles.dims_per_prefetch_run;
    BlockPrefetcher prefetcher = st.prefetcher;
    const std::size_t dim = st.problem.head_dim;
    for (std::size_t d0 = 0; d0 < dim; d0 += dims_per_prefetch_run) {
        const std::size_t d_end = std::min(dim, d0 + dims_per_prefetch_run);
        for (std::size_t d = d0; d < d_end; ++d) {
            Vec k[block_vecs];
            for (std::size_t v = 0; v < block_vecs; ++v) k[v] = Simd::load(keys_t + d * max_key_block + v * lanes);
            for (std::size_t i = 0; i < n_rows; ++i) {
                const Vec q = Simd::set1(queries[d * n_rows + i]);
                for (std::size_t v = 0; v < block_vecs; ++v) acc[i][v] = Simd::fma(q, k[v], acc[i][v]);
            }
        }
        for (std::size_t d = d0; d < d_end; ++d) prefetcher.issue<plan_may_spread(KvDtype::f32)>();
    }
    st.prefetcher.take_progress(prefetcher);
    st.flops += 2 * n_rows * key_block * st.problem.head_dim;  // the whole block, however many keys it holds
    for (std::size_t i = 0; i < n_rows; ++i) {
        float* scores = st.ws.probs() + (first_row + i) * max_key_block;
        for (std::size_t v = 0; v < block_vecs; ++v) Simd::store(scores + v * lanes, acc[i][v]);
    }
}

// Online softmax of one row's block scores (in probs): the running max moves to m_new, the
// row's earlier sum and outputs are rescaled by e^(m_old - m_new) (the outputs in the output
// tiles), and the scores become this block's probabilities e^(s - m_new).
// With int8's scales: the raw scores are q · k_int, so each is first multiplied by its key's
// scale (keys_scaled); and the stored probabilities carry their value's scale (values_scaled),
// for the output tiles to multiply unscaled values by, while the row's sum takes them unscaled.
template <bool keys_scaled, bool values_scaled, std::size_t n_block_vecs>
void update_softmax_row(BlockState& st, std::size_t row) {
    AttendWorkspace& ws = st.ws;
    float* probs = ws.probs() + row * max_key_block;
    Vec scores[n_block_vecs];
    Vec block_max = Simd::set1(minus_infinity);
    for (std::size_t v = 0; v < n_block_vecs; ++v) {
        // Lanes past the block's last key hold stale scores: mask them out.
        Vec raw = Simd::load(probs + v * lanes);
        if constexpr (keys_scaled) raw = Simd::mul(raw, Simd::load(st.key_scales + v * lanes, lanes_below(st.n_keys, v)));
        scores[v] = Simd::select(lanes_below(st.n_keys, v), raw, Simd::set1(minus_infinity));
        block_max = Simd::max(block_max, scores[v]);
    }
    const float old_max = ws.row_max()[row];
    const float new_max = std::max(old_max, Simd::reduce_max(block_max));
    // A block whose max does not pass the running one (most blocks after the first few) has
    // e^0 = 1 exactly: no libm call on its critical path, and no rescale of the sums or, in
    // output_tile, of the outputs (x · 1 = x, so the same bits). Equal infinities give NaN, as
    // exp would.
    const float max_drop = old_max - new_max;
    const float rescale = max_drop == 0.0f ? 1.0f : std::exp(max_drop);  // 0 on the first block: old_max = -inf
    const Vec shift = Simd::set1(new_max);
    Vec sums = Simd::load(ws.lane_sums() + row * max_lanes);
    if (rescale != 1.0f) sums = Simd::mul(sums, Simd::set1(rescale));
    for (std::size_t v = 0; v < n_block_vecs; ++v) {
        const Vec p = Simd::exp(Simd::sub(scores[v], shift));
        if constexpr (values_scaled) {
            Simd::store(probs + v * lanes, Simd::mul(p, Simd::load(st.value_scales + v * lanes, lanes_below(st.n_keys, v))));
        } else {
            Simd::store(probs + v * lanes, p);
        }
        sums = Simd::add(sums, p);
    }
    Simd::store(ws.lane_sums() + row * max_lanes, sums);
    ws.row_max()[row] = new_max;
    ws.rescale()[row] = rescale;
}

// outputs[r][v-range] = rescale[r] · outputs[r][v-range] + Σ_t probs[r][t] · values[t][v-range]
// for n_rows rows × n_vecs vectors of the output, held in registers across the block's keys.
// dtype other than f32: the stored values are read and converted in registers (fused).
// two_runs: f32 values of a paged block in place in two runs (BlockState::later_value).
template <std::size_t n_rows, std::size_t n_vecs, KvDtype dtype = KvDtype::f32, bool two_runs = false>
void output_tile(BlockState& st, std::size_t first_row, std::size_t first_vec) {
    const std::size_t padded_dim = st.ws.padded_dim();
    Vec acc[n_rows][n_vecs];
    float* outputs = st.ws.outputs() + first_row * padded_dim + first_vec * lanes;
    const float* probs = block_probs(st, first_row);
    for (std::size_t i = 0; i < n_rows; ++i) {
        const float rescale = st.ws.rescale()[first_row + i];
        for (std::size_t c = 0; c < n_vecs; ++c) acc[i][c] = Simd::load(outputs + i * padded_dim + c * lanes);
        // Most blocks leave the running max where it was (update_softmax_row): rescale is 1.
        if (rescale != 1.0f) {
            for (std::size_t c = 0; c < n_vecs; ++c) acc[i][c] = Simd::mul(acc[i][c], Simd::set1(rescale));
        }
    }
    const float* values = st.values + first_vec * lanes;
    // A reduced stored type through a running pointer; else f32 rows, in place, packed or decoded.
    // Both with the prefetcher a local copy in registers (as in stored_dot_score_tile): through
    // BlockState's reference its call count was a store and a reload every key
    // (bench/journal/2026-12-02-next-block-lines-spread.md).
    if (st.stored_values != nullptr) {
        BlockPrefetcher prefetcher = st.prefetcher;
        // Whole rows, later ones row_bytes apart; the tile's columns from first_vec on (an element
        // index, as a block type's vector is found through its block).
        const std::byte* row = st.stored_values;
        const std::size_t first_column = first_vec * lanes;
        // A block type's vectors two at a time where the tile's columns start a block's half,
        // with one read of the block's scale (load_fused_codes); never for other types.
        constexpr std::size_t pair = is_block_type(dtype) && n_vecs % 2 == 0 && kv_block_values % (2 * lanes) == 0 ? 2 : 1;
        const bool pairs = pair == 2 && first_column % (2 * lanes) == 0;
        // e4m3 values as f32 bits come 2^120 small: each probability is e4m3_bits_unit larger.
        if constexpr (n_rows == 1) {
            // The e4m3 read chosen once for the tile, not tested at every key (with_e4m3_read).
            // Not the group tiles': around their loop's lambda it ran a GQA-4 e4m3 step 1.22x the
            // time (the same journal).
            with_e4m3_read<dtype>(st.e4m3_values_as_bits, [&](auto as_bits) [[gnu::always_inline]] {
                constexpr float probability_unit = decltype(as_bits)::value ? e4m3_bits_unit : 1.0f;
                for (std::size_t t = 0; t < st.n_keys; ++t, row += st.stored_value_row_bytes) {
                    // One row uses each value vector once: load, convert and accumulate in turn.
                    const Vec p = Simd::set1(probs[t] * probability_unit);
                    if (pairs) {
                        if constexpr (pair == 2) {  // a block type's: pairs is false for every other
                            for (std::size_t c = 0; c < n_vecs; c += pair) {
                                Vec v[pair];
                                // The key's probability times the block's scale, once for its codes.
                                const Vec scaled = Simd::mul(p, load_fused_codes<dtype>(row, first_column + c * lanes, v));
                                for (std::size_t h = 0; h < pair; ++h) acc[0][c + h] = Simd::fma(scaled, v[h], acc[0][c + h]);
                            }
                        }
                    } else {
                        for (std::size_t c = 0; c < n_vecs; ++c) {
                            acc[0][c] = Simd::fma(p, load_fused_kv<dtype>(row, first_column + c * lanes, as_bits), acc[0][c]);
                        }
                    }
                    constexpr std::size_t keys_per_call = tiles.one_row_output_keys_per_prefetch;
                    if (keys_per_call == 1 || (t + 1) % keys_per_call == 0 || t + 1 == st.n_keys) {
                        prefetcher.issue<tile_may_spread(as_stored(dtype), n_rows)>();
                    }
                }
            });
        } else {
            // Each key's value vectors, converted once, for every row. A key's work is a lambda, as
            // for f32 rows below: written in the loop's body, GCC 12 stored every accumulator to the
            // stack after each key, a store per FMA, and a group of 4 rows over an f16 cache spent a
            // third of its time in this tile
            // (bench/journal/2026-12-06-group-output-tiles-without-stores.md).
            const std::size_t row_bytes = st.stored_value_row_bytes;
            const float probability_unit = st.e4m3_values_as_bits ? e4m3_bits_unit : 1.0f;
            const auto accumulate_row = [&](const std::byte* key_row, std::size_t t) [[gnu::always_inline]] {
                Vec v[n_vecs];
                for (std::size_t c = 0; c < n_vecs; ++c) {
                    v[c] = load_fused_kv<dtype>(key_row, first_column + c * lanes, st.e4m3_values_as_bits);
                }
                for (std::size_t i = 0; i < n_rows; ++i) {
                    const float probability = probs[i * max_key_block + t];
                    const Vec p = Simd::set1(as_stored(dtype) == KvDtype::e4m3 ? probability * probability_unit : probability);
                    for (std::size_t c = 0; c < n_vecs; ++c) acc[i][c] = Simd::fma(p, v[c], acc[i][c]);
                }
                prefetcher.issue<tile_may_spread(as_stored(dtype), n_rows)>();
            };
            for (std::size_t t = 0; t < st.n_keys; ++t) accumulate_row(row + t * row_bytes, t);
        }
        st.prefetcher.take_progress(prefetcher);
    } else if constexpr (dtype == KvDtype::f32) {
        BlockPrefetcher prefetcher = st.prefetcher;
        const auto accumulate_row = [&](const float* row, std::size_t t) [[gnu::always_inline]] {
            if constexpr (n_rows == 1) {
                // As above: each value vector loaded and accumulated in turn, so the 8-vector tile
                // of one row does not spill.
                const Vec p = Simd::set1(probs[t]);
                for (std::size_t c = 0; c < n_vecs; ++c) acc[0][c] = Simd::fma(p, Simd::load(row + c * lanes), acc[0][c]);
            } else {
                Vec v[n_vecs];
                for (std::size_t c = 0; c < n_vecs; ++c) v[c] = Simd::load(row + c * lanes);
                for (std::size_t i = 0; i < n_rows; ++i) {
                    const Vec p = Simd::set1(probs[i * max_key_block + t]);
                    for (std::size_t c = 0; c < n_vecs; ++c) acc[i][c] = Simd::fma(p, v[c], acc[i][c]);
                }
            }
            prefetcher.issue<tile_may_spread(as_stored(dtype), n_rows)>();
        };
        // Run by run: a pointer test every key would weigh on the tile.
        const std::size_t first_run_keys = two_runs ? std::min(st.later_value, st.n_keys) : st.n_keys;
        for (std::size_t t = 0; t < first_run_keys; ++t) accumulate_row(values + t * st.value_stride, t);
        if constexpr (two_runs) {
            const float* later = st.later_values + first_vec * lanes;
            for (std::size_t t = first_run_keys; t < st.n_keys; ++t) {
                accumulate_row(later + (t - first_run_keys) * st.value_stride, t);
            }
        }
        st.prefetcher.take_progress(prefetcher);
    }
    st.flops += 2 * n_rows * st.n_keys * n_vecs * lanes;
    for (std::size_t i = 0; i < n_rows; ++i) {
        for (std::size_t c = 0; c < n_vecs; ++c) Simd::store(outputs + i * padded_dim + c * lanes, acc[i][c]);
    }
}

// Widest output tile for n_rows rows: accumulators, one row of values and a broadcast
// fit in the register file. A single row uses each value vector once, as soon as it is
// loaded, so its tile needs only the accumulators, a broadcast and one value in flight.
constexpr std::size_t output_vecs_for(std::size_t n_rows) {
    if (n_rows == 1) return std::min(tiles.out_vecs, Simd::registers - 2);
    return std::min(tiles.out_vecs, (Simd::registers - 1) / (n_rows + 1));
}

// Tables of the tile functions by size, so a runtime tile shape picks a compiled one.
using TransposedTileFn = void (*)(BlockState&, std::size_t);
using OutputTileFn = void (*)(BlockState&, std::size_t, std::size_t);

template <std::size_t... i>
constexpr std::array<TransposedTileFn, sizeof...(i)> make_transposed_tiles(std::index_sequence<i...>) {
    return {&transposed_score_tile<i + 1>...};
}
constexpr auto transposed_tiles = make_transposed_tiles(std::make_index_sequence<tiles.score_rows>{});

// Shapes that would spill are left out (null): output_vecs_for never picks them.
template <KvDtype dtype, bool two_runs, std::size_t n_rows, std::size_t n_vecs>
constexpr OutputTileFn output_tile_if_it_fits() {
    if constexpr (n_vecs <= output_vecs_for(n_rows)) {
        return &output_tile<n_rows, n_vecs, dtype, two_runs>;
    } else {
        return nullptr;
    }
}
template <KvDtype dtype, bool two_runs, std::size_t n_rows, std::size_t... c>
constexpr std::array<OutputTileFn, sizeof...(c)> make_output_tile_row(std::index_sequence<c...>) {
    return {output_tile_if_it_fits<dtype, two_runs, n_rows, c + 1>()...};
}
template <KvDtype dtype, bool two_runs, std::size_t... r>
constexpr std::array<std::array<OutputTileFn, tiles.out_vecs>, sizeof...(r)> make_output_tiles(
    std::index_sequence<r...>) {
    return {make_output_tile_row<dtype, two_runs, r + 1>(std::make_index_sequence<tiles.out_vecs>{})...};
}
// One table per element type the tiles read: f32 in place, packed or decoded, and the fused ones;
// and f32 in place in two runs (a paged block over two cache blocks).
template <KvDtype dtype, bool two_runs = false>
constexpr auto output_tiles = make_output_tiles<dtype, two_runs>(std::make_index_sequence<tiles.out_rows>{});

// Dot tiles of tile_rows rows from first_row on, while whole tiles fit in n_rows; returns
// the first row left over.
template <std::size_t tile_rows, KvDtype dtype, bool two_runs>
std::size_t dot_score_rows(BlockState& st, std::size_t first_row, std::size_t n_rows) {
    constexpr std::size_t n_cols = lanes / tile_rows;
    for (; first_row + tile_rows <= n_rows; first_row += tile_rows) {
        std::size_t t = 0;
        // Four tiles of 4 rows hold each row's scores of lanes keys, a quarter of a vector per
        // tile: transposed in registers, they are stored as whole rows, where each tile's 4 masked
        // stores (vmaskmovps on AVX2) wrote pieces that the softmax's full loads then waited on
        // (bench/journal/2026-12-06-group-scores-stored-as-whole-rows.md).
        if constexpr (tile_rows == 4 && lanes >= 8) {
            const bool whole_f32 = st.keys_padded || st.problem.head_dim % lanes == 0;
            for (; t + lanes <= st.n_keys; t += lanes) {
                Vec scores[4];
                for (std::size_t q = 0; q < 4; ++q) {
                    if constexpr (dtype != KvDtype::f32) {
                        scores[q] = dot_score_tile<tile_rows, false, dtype, false, false>(st, first_row, t + q * n_cols);
                    } else if (whole_f32) {
                        scores[q] = dot_score_tile<tile_rows, true, KvDtype::f32, two_runs, false>(st, first_row, t + q * n_cols);
                    } else {
                        scores[q] = dot_score_tile<tile_rows, false, KvDtype::f32, two_runs, false>(st, first_row, t + q * n_cols);
                    }
                }
                // Through a type that depends on the tile, so that the portable back-end, whose one
                // lane has no quarters and whose builds discard this branch, need not declare it.
                using Quarters = std::conditional_t<tile_rows == 4, Simd, void>;
                Quarters::transpose_quarters(scores);
                for (std::size_t r = 0; r < 4; ++r) Simd::store(block_probs(st, first_row + r) + t, scores[r]);
            }
        }
        for (; t < st.n_keys; t += n_cols) {
            // One row (MHA): the running pointer's tile; with 2 and 4 rows it measured slower than the
            // tile below, which holds the pointers it needs
            // (bench/journal/2026-12-01-running-pointer-tile-for-one-row.md).
            if (dtype != KvDtype::f32 && tile_rows == 1 && st.stored_keys != nullptr && t + n_cols <= st.n_keys) {
#if defined(KVBENCH_INT8_INTEGER_KEYS)
                if (dtype == KvDtype::int8 && st.query_i16 != nullptr) {
                    int8_dot_score_tile(st, t);
                    continue;
                }
#endif
#if defined(KVBENCH_Q8_0_INTEGER_KEYS)
                if (dtype == KvDtype::q8_0 && st.query_i16 != nullptr) {
                    q8_0_dot_score_tile(st, t);
                    continue;
                }
#endif
#if defined(KVBENCH_Q4_0_INTEGER_KEYS)
                if (dtype == KvDtype::q4_0 && st.q4_0_query != nullptr) {
                    q4_0_dot_score_tile(st, t);
                    continue;
                }
#endif
                stored_dot_score_tile<tile_rows, dtype>(st, first_row, t);
            } else if constexpr (dtype != KvDtype::f32) {
                dot_score_tile<tile_rows, false, dtype>(st, first_row, t);
            } else if (st.keys_padded || (tile_rows > 1 && st.problem.head_dim % lanes == 0)) {
                // MHA's one-row tile keeps its masked loads: plain ones measured slower from DRAM
                // (bench/journal/2026-12-02-dot-tiles-in-registers.md).
                dot_score_tile<tile_rows, true, KvDtype::f32, two_runs>(st, first_row, t);
            } else {
                dot_score_tile<tile_rows, false, KvDtype::f32, two_runs>(st, first_row, t);
            }
        }
    }
    return first_row;
}

// Raw scores of every row against the block into probs (n_rows, max_key_block); dtype other
// than f32 only with dot tiles (n_rows <= dot_rows_max), fused.
template <KvDtype dtype = KvDtype::f32, bool two_runs = false>
void score_block(BlockState& st, std::size_t n_rows) {
    if (n_rows > tiles.dot_rows_max) {
        pack_key_block(st);
        for_each_tile(n_rows, tiles.score_rows,
                       [&](std::size_t first, std::size_t size) { transposed_tiles[size - 1](st, first); });
        return;
    }
    std::size_t first_row = dot_score_rows<dot_tile_rows[0], dtype, two_runs>(st, 0, n_rows);
    first_row = dot_score_rows<dot_tile_rows[1], dtype, two_runs>(st, first_row, n_rows);
    dot_score_rows<dot_tile_rows[2], dtype, two_runs>(st, first_row, n_rows);
}


// A fused block of a paged cache that crosses cache blocks, read in place run by run: the
// tiles score each run and sum its values as they would the same keys of one run, and the
// softmax takes the whole block, so the bits are the contiguous layout's. Only where each run
// but the last is whole vectors of keys, so that every tile starts where it starts in one run;
// other blocks are gathered (gather_paged_rows). Copying a block of 64 f16 keys and values cost
// a paged step at blocks of 32 positions 13-18 % of its time on Zen 5
// (bench/journal/2026-12-06-fused-blocks-of-64-keys.md).
struct FusedPieces {
    static constexpr std::size_t max_count = fused_key_block / lanes;
    std::size_t count = 0;
    std::array<RunRows, max_count> runs;
    std::array<std::size_t, max_count> first_key;  // each run's first key in the block
};

// Keys [first_key, first_key + n_keys) of a paged problem as FusedPieces; false where a run but
// the last is not whole vectors of keys.
bool find_fused_pieces(const GroupAttention& problem, std::size_t first_key, std::size_t n_keys, FusedPieces& pieces) {
    pieces.count = 0;
    for (std::size_t done = 0; done < n_keys;) {
        const RunRows run = paged_run_rows(problem, first_key + done, n_keys - done);
        const bool last = done + run.n_keys == n_keys;
        if (pieces.count == FusedPieces::max_count || (!last && run.n_keys % lanes != 0)) return false;
        pieces.runs[pieces.count] = run;
        pieces.first_key[pieces.count] = done;
        ++pieces.count;
        done += run.n_keys;
    }
    return true;
}

// fn(st) for each piece, st pointed at the piece's rows and restored after; or fn(st) once for
// a block of one run (pieces null). st itself, not a copy: a copy of the state, written field by
// field a moment before, is read back in 64-byte loads that wait for those stores
// (RunRows, paged_rows.hpp).
template <typename Fn>
void for_each_piece(BlockState& st, const FusedPieces* pieces, Fn&& fn) {
    if (pieces == nullptr) {
        fn(st);
        return;
    }
    const std::size_t n_keys = st.n_keys;
    const std::size_t block_keys = st.block_keys;
    const std::byte* stored_keys = st.stored_keys;
    const std::byte* stored_values = st.stored_values;
    for (std::size_t p = 0; p < pieces->count; ++p) {
        st.probs_first = pieces->first_key[p];
        st.n_keys = pieces->runs[p].n_keys;
        st.block_keys = block_keys - st.probs_first;
        st.stored_keys = pieces->runs[p].keys;
        st.stored_values = pieces->runs[p].values;
        fn(st);
    }
    st.probs_first = 0;
    st.n_keys = n_keys;
    st.block_keys = block_keys;
    st.stored_keys = stored_keys;
    st.stored_values = stored_values;
}

#if defined(KVBENCH_BLOCK_CODE_PAIRS)
// q8_0 and q4_0 values as integers, one query row, on AVX-512 (BW) and AVX2. With one query row
// each value feeds one product, and its decoding (a widening and a conversion, or two permutes,
// and its block's scale) set these types' pace: the output tile at half its arithmetic ran
// their step 0.84x and 0.79x the time on an Emerald Rapids Xeon
// (bench/journal/2026-12-07-block-values-as-integers.md). Here a key's weight for a block
// column (32 values), its probability times that block's scale, is rounded to 16 bits against
// the largest weight of the column over the whole fused block (as int8's keys round the query);
// two keys' codes are interleaved into 16-bit pairs, and one vpdpwssd (vpmaddwd and an add
// without VNNI; block_code_pairs.hpp) multiplies a vector of columns of both by their weights
// and adds them. A weight moves by at most 2^-16 of the column's largest.
// The sums are exact integers (|weight| ≤ 2^15, |code| ≤ 2^7, at most max_key_block keys: under
// 2^28), so how the keys fall into pieces of a paged cache changes no bit: the weights are set
// over the block, the sums carry across its pieces, and the outputs take them once. A block whose
// weights hold an infinity, a NaN or nothing above 2^-100 is left to the float tiles (false),
// whose NaNs and infinities are the f32 path's.
struct IntegerValueWeights {
    static constexpr std::size_t max_columns = int8_dot_max_dim / kv_block_values;
    // steps[b][t]: key t's weight for block column b in units[b]; zeros past the last key.
    alignas(64) std::array<std::array<std::int16_t, max_key_block + lanes>, max_columns> steps;
    std::array<float, max_columns> units;
    std::array<std::int32_t, max_columns> code_offsets;  // q4_0: a code c stands for c - 8
};

constexpr float smallest_integer_weight = 0x1p-100f;

template <KvDtype dtype>
bool weigh_block_values(BlockState& st, std::size_t n_columns, const FusedPieces* pieces, IntegerValueWeights& out) {
    constexpr std::size_t block_bytes = kv_row_bytes(dtype, kv_block_values);
    const std::size_t row_bytes = st.stored_value_row_bytes;
    const std::size_t n_keys = st.n_keys;
    const std::size_t n_key_vecs = (n_keys + lanes - 1) / lanes;
    const float* probs = block_probs(st, 0);
    const auto key_offsets = lane_row_offsets(row_bytes);
    for (std::size_t b = 0; b < n_columns; ++b) {
        // The block's weights for column b, piece by piece.
        alignas(64) std::array<float, max_key_block + lanes> weights;
        for_each_piece(st, pieces, [&](const BlockState& piece) {
            const std::byte* scales = piece.stored_values + b * block_bytes;
            for (std::size_t v = 0; v * lanes < piece.n_keys; ++v) {
                const Simd::Mask keys = lanes_below(piece.n_keys, v);
                const std::size_t first = piece.probs_first + v * lanes;
                const Vec scale = gather_block_scales(scales + v * lanes * row_bytes, key_offsets, keys);
                const Vec weight = Simd::mul(Simd::load(probs + first, keys), scale);
                Simd::store(weights.data() + first, weight, keys);
            }
        });
        // max drops a NaN operand, so NaNs and infinities are caught apart, as lanes above the
        // largest finite float or unordered with it.
        Vec largest = Simd::zero();
        bool not_finite = false;
        for (std::size_t v = 0; v < n_key_vecs; ++v) {
            const Vec size = magnitudes(Simd::load(weights.data() + v * lanes, lanes_below(n_keys, v)));
            not_finite |= any_not_finite(size);
            largest = Simd::max(largest, size);
        }
        const float most = Simd::reduce_max(largest);
        if (not_finite || most < smallest_integer_weight) return false;
        out.units[b] = most / 32767.0f;
        const Vec to_steps = Simd::set1(32767.0f / most);
        PairVec total = zero_pairs();
        out.steps[b].fill(0);
        for (std::size_t v = 0; v < n_key_vecs; ++v) {
            // A masked load leaves 0, so 0 steps, in the lanes past the last key.
            const Vec weight = Simd::load(weights.data() + v * lanes, lanes_below(n_keys, v));
            total = add_lanes(total, store_steps(Simd::mul(weight, to_steps), out.steps[b].data() + v * lanes));
        }
        out.code_offsets[b] = dtype == KvDtype::q4_0 ? -8 * sum_lanes(total) : 0;
    }
    return true;
}

// The fused block's values as runs of rows: the whole block, or its pieces in a paged cache
// (every run but the last whole vectors of keys, so an even count).
struct ValueRuns {
    std::size_t count = 0;
    std::array<const std::byte*, FusedPieces::max_count> rows;
    std::array<std::size_t, FusedPieces::max_count> n_keys;
    std::array<std::size_t, FusedPieces::max_count> first_key;  // in the block
};

// Block columns [first_column, first_column + n_columns) of one query row's outputs over the
// whole block, every run of it: outputs = rescale · outputs + units · Σ weights · codes.
template <KvDtype dtype, std::size_t n_columns>
void integer_value_tile(BlockState& st, const ValueRuns& runs, const IntegerValueWeights& w, std::size_t first_column) {
    constexpr std::size_t block_bytes = kv_row_bytes(dtype, kv_block_values);
    constexpr std::size_t keys_per_call = tiles.one_row_output_keys_per_prefetch;
    const std::size_t row_bytes = st.stored_value_row_bytes;
    PairVec sums[n_columns][pair_vecs];
    for (auto& column : sums) {
        for (PairVec& sum : column) sum = zero_pairs();
    }
    // Keys t and t + 1 of a run (the second's weight 0 where it has none), each column in turn.
    const auto add_pair = [&](const std::byte* first, const std::byte* second, const std::int16_t* const (&steps)[n_columns],
                              bool both) [[gnu::always_inline]] {
        for (std::size_t b = 0; b < n_columns; ++b) {
            const std::uint32_t low = static_cast<std::uint16_t>(steps[b][0]);
            const std::uint32_t high = both ? static_cast<std::uint16_t>(steps[b][1]) : 0u;
            const PairVec weights = broadcast_pair(static_cast<std::int32_t>(low | high << 16));
            PairVec paired[pair_vecs];
            pair_codes<dtype>(first + b * block_bytes + 2, second + b * block_bytes + 2, paired);
            for (std::size_t h = 0; h < pair_vecs; ++h) sums[b][h] = add_pair_products(sums[b][h], paired[h], weights);
        }
    };
    // A local copy, as output_tile's: through BlockState its count would be a store and a load
    // a call.
    BlockPrefetcher prefetcher = st.prefetcher;
    for (std::size_t r = 0; r < runs.count; ++r) {
        const std::byte* rows = runs.rows[r] + first_column * block_bytes;
        const std::size_t n_keys = runs.n_keys[r];
        const std::int16_t* steps[n_columns];
        for (std::size_t b = 0; b < n_columns; ++b) steps[b] = w.steps[first_column + b].data() + runs.first_key[r];
        std::size_t t = 0;
        for (; t + 2 <= n_keys; t += 2, rows += 2 * row_bytes) {
            add_pair(rows, rows + row_bytes, steps, true);
            for (std::size_t b = 0; b < n_columns; ++b) steps[b] += 2;
            // As many prefetch calls a key as output_tile makes, so the plan's count per block holds.
            if constexpr (keys_per_call == 2) {
                prefetcher.issue<tile_may_spread(dtype, 1)>();
            } else {
                for (std::size_t k = t; k < t + 2; ++k) {
                    if (keys_per_call == 1 || (k + 1) % keys_per_call == 0 || k + 1 == n_keys) prefetcher.issue<tile_may_spread(dtype, 1)>();
                }
            }
        }
        if (t < n_keys) {
            add_pair(rows, rows, steps, false);
            prefetcher.issue<tile_may_spread(dtype, 1)>();
        }
    }
    st.prefetcher.take_progress(prefetcher);
    float* outputs = st.ws.outputs() + first_column * kv_block_values;
    const float rescale = st.ws.rescale()[0];
    for (std::size_t b = 0; b < n_columns; ++b) {
        Vec columns[pair_vecs];
        column_sums_in_order<dtype>(sums[b], w.code_offsets[first_column + b], columns);
        const Vec unit = Simd::set1(w.units[first_column + b]);
        for (std::size_t h = 0; h < pair_vecs; ++h) {
            float* at = outputs + b * kv_block_values + h * lanes;
            Vec out = Simd::load(at);
            if (rescale != 1.0f) out = Simd::mul(out, Simd::set1(rescale));  // as output_tile
            Simd::store(at, Simd::fma(unit, columns[h], out));
        }
    }
}

// One query row's outputs over a q8_0 or q4_0 block as integers; false, with nothing written or
// requested, where the float tiles must take the block (a head not in whole block columns, or
// weights integers cannot hold).
template <KvDtype dtype>
bool block_values_as_integers(BlockState& st, std::size_t n_vecs, const FusedPieces* pieces) {
    const std::size_t dim = st.problem.head_dim;
    if (dim % kv_block_values != 0 || dim > int8_dot_max_dim) return false;
    const std::size_t n_columns = dim / kv_block_values;
    IntegerValueWeights w;
    if (!weigh_block_values<dtype>(st, n_columns, pieces, w)) return false;
    ValueRuns runs;
    for_each_piece(st, pieces, [&](const BlockState& piece) {
        runs.rows[runs.count] = piece.stored_values;
        runs.n_keys[runs.count] = piece.n_keys;
        runs.first_key[runs.count] = piece.probs_first;
        ++runs.count;
    });
    // As many columns at a time as output_tile's one-row tiles hold (eight accumulators: four
    // columns on AVX-512, two on AVX2), so that both make as many prefetch calls a key.
    constexpr std::size_t columns_per_tile = output_vecs_for(1) / pair_vecs;
    static_assert(columns_per_tile * pair_vecs == output_vecs_for(1) && columns_per_tile <= 4);
    std::size_t column = 0;
    for (; column + columns_per_tile <= n_columns; column += columns_per_tile) {
        integer_value_tile<dtype, columns_per_tile>(st, runs, w, column);
    }
    switch (n_columns - column) {  // fewer than columns_per_tile left
        case 1: integer_value_tile<dtype, 1>(st, runs, w, column); break;
        case 2: if constexpr (columns_per_tile > 2) integer_value_tile<dtype, 2>(st, runs, w, column); break;
        case 3: if constexpr (columns_per_tile > 3) integer_value_tile<dtype, 3>(st, runs, w, column); break;
        default: break;
    }
    st.flops += 2 * st.n_keys * n_vecs * lanes;
    return true;
}
#endif

// One block's scores, softmax and outputs, the tiles reading keys of key_dtype and values of
// value_dtype (fused where either is a reduced type; f32 for an f32 cache and for a decoded block).
// two_runs: f32 keys and values of a paged block in place in two runs (BlockState::later_key).
// pieces: a fused block read in place over cache blocks (FusedPieces); null for one run.
template <KvDtype key_dtype, KvDtype value_dtype, bool two_runs = false>
void attend_block(BlockState& st, std::size_t n_rows, std::size_t n_vecs, const FusedPieces* pieces = nullptr) {
    constexpr auto fixed_up = [](KvDtype d) { return d == KvDtype::e4m3 || d == KvDtype::e5m2; };
    if constexpr (fixed_up(key_dtype) || fixed_up(value_dtype)) {
        // An 8-bit float block without the patterns its conversion fixes up, which is every block
        // an encoder writes from finite values, is read without the fix: the same bits. A cache
        // that never stored one says so, and its blocks are not scanned: the scan cost the 8-bit
        // floats 4-10 % of their step at issue 39's point
        // (bench/journal/2026-12-05-fp8-scan-off-for-clean-caches.md).
        const std::size_t dim = st.problem.head_dim;
        bool keys_fixed = false;
        bool values_fixed = false;
        if (!st.problem.fp8_fix_free) {
            for_each_piece(st, pieces, [&](const BlockState& s) {
                if (fixed_up(key_dtype) && fp8_needs_fix(key_dtype, s.stored_keys, s.n_keys, s.stored_key_row_bytes, dim)) {
                    keys_fixed = true;
                }
                if (fixed_up(value_dtype) &&
                    fp8_needs_fix(value_dtype, s.stored_values, s.n_keys, s.stored_value_row_bytes, dim)) {
                    values_fixed = true;
                }
            });
        }
        if (!keys_fixed && !values_fixed) {
            attend_block<without_fix(key_dtype), without_fix(value_dtype), two_runs>(st, n_rows, n_vecs, pieces);
            return;
        }
    }
    constexpr bool all_f32 = key_dtype == KvDtype::f32 && value_dtype == KvDtype::f32;
    constexpr std::size_t n_block_vecs = (all_f32 ? key_block : fused_key_block) / lanes;
    for_each_piece(st, pieces, [&](BlockState& s) { score_block<key_dtype, two_runs>(s, n_rows); });
    for (std::size_t r = 0; r < n_rows; ++r) {
        update_softmax_row<key_dtype == KvDtype::int8, value_dtype == KvDtype::int8, n_block_vecs>(st, r);
    }
#if defined(KVBENCH_BLOCK_CODE_PAIRS)
    if constexpr (value_dtype == KvDtype::q8_0 || value_dtype == KvDtype::q4_0) {
        if (n_rows == 1 && block_values_as_integers<value_dtype>(st, n_vecs, pieces)) return;
    }
#endif
    bool first_piece = true;
    for_each_piece(st, pieces, [&](BlockState& s) {
        // The outputs take the block's rescale once, with its first run's values.
        if (!first_piece) std::fill_n(st.ws.rescale(), n_rows, 1.0f);
        first_piece = false;
        for_each_tile(n_rows, tiles.out_rows, [&](std::size_t first_row, std::size_t rows) {
            for_each_tile(n_vecs, output_vecs_for(rows), [&](std::size_t first_vec, std::size_t vecs) {
                output_tiles<value_dtype, two_runs>[rows - 1][vecs - 1](s, first_row, first_vec);
            });
        });
    });
}

// The types the fused tiles read: every type the engine stores (fp8 and int4, planned only,
// are not).
constexpr bool fusable(KvDtype dtype) { return dtype != KvDtype::fp8 && dtype != KvDtype::int4; }

// attend_block for the values' type at run time, the keys' fixed.
template <KvDtype key_dtype>
void attend_block_for_values(KvDtype value_dtype, BlockState& st, std::size_t n_rows, std::size_t n_vecs,
                             const FusedPieces* pieces) {
    switch (value_dtype) {
    case KvDtype::f16: attend_block<key_dtype, KvDtype::f16>(st, n_rows, n_vecs, pieces); break;
    case KvDtype::bf16: attend_block<key_dtype, KvDtype::bf16>(st, n_rows, n_vecs, pieces); break;
    case KvDtype::int8: attend_block<key_dtype, KvDtype::int8>(st, n_rows, n_vecs, pieces); break;
    case KvDtype::e4m3: attend_block<key_dtype, KvDtype::e4m3>(st, n_rows, n_vecs, pieces); break;
    case KvDtype::e5m2: attend_block<key_dtype, KvDtype::e5m2>(st, n_rows, n_vecs, pieces); break;
    case KvDtype::q8_0: attend_block<key_dtype, KvDtype::q8_0>(st, n_rows, n_vecs, pieces); break;
    case KvDtype::q4_0: attend_block<key_dtype, KvDtype::q4_0>(st, n_rows, n_vecs, pieces); break;
    default: attend_block<key_dtype, KvDtype::f32>(st, n_rows, n_vecs, pieces); break;
    }
}

// attend_block for both types at run time.
void attend_block_for(KvDtype key_dtype, KvDtype value_dtype, BlockState& st, std::size_t n_rows, std::size_t n_vecs,
                      const FusedPieces* pieces) {
    switch (key_dtype) {
    case KvDtype::f16: attend_block_for_values<KvDtype::f16>(value_dtype, st, n_rows, n_vecs, pieces); break;
    case KvDtype::bf16: attend_block_for_values<KvDtype::bf16>(value_dtype, st, n_rows, n_vecs, pieces); break;
    case KvDtype::int8: attend_block_for_values<KvDtype::int8>(value_dtype, st, n_rows, n_vecs, pieces); break;
    case KvDtype::e4m3: attend_block_for_values<KvDtype::e4m3>(value_dtype, st, n_rows, n_vecs, pieces); break;
    case KvDtype::e5m2: attend_block_for_values<KvDtype::e5m2>(value_dtype, st, n_rows, n_vecs, pieces); break;
    case KvDtype::q8_0: attend_block_for_values<KvDtype::q8_0>(value_dtype, st, n_rows, n_vecs, pieces); break;
    case KvDtype::q4_0: attend_block_for_values<KvDtype::q4_0>(value_dtype, st, n_rows, n_vecs, pieces); break;
    default: attend_block_for_values<KvDtype::f32>(value_dtype, st, n_rows, n_vecs, pieces); break;
    }
}

// The read a choice resolves to: host's is this CPU's; f32 bits never where not compiled.
GroupAttention::E4m3Read resolved(GroupAttention::E4m3Read read) {
    using Read = GroupAttention::E4m3Read;
    static const Read on_this_host = tiles.e4m3_as_f32_bits_off_intel && !on_intel_cpu() ? Read::f32_bits : Read::binary16;
    return !e4m3_bits_compiled ? Read::binary16 : read == Read::host ? on_this_host : read;
}

// Whether every |x| is below limit (a NaN is not).
bool all_below(std::span<const float> xs, float limit) {
    return std::all_of(xs.begin(), xs.end(), [&](float x) { return std::abs(x) < limit; });
}

}  // namespace

std::uint64_t attend_group_tiled(const GroupAttention& problem, const PartialSoftmax& result, AttendWorkspace& ws) {
    assert(problem.n_rows <= ws.max_rows() && problem.head_dim == ws.head_dim() && problem.n_ctx >= 1);
    const std::size_t n_rows = problem.n_rows;
    const std::size_t dim = problem.head_dim;
    const std::size_t padded_dim = ws.padded_dim();
    const std::size_t n_vecs = round_up(dim, lanes) / lanes;  // vectors per output row

    std::fill_n(ws.outputs(), n_rows * padded_dim, 0.0f);
    std::fill_n(ws.lane_sums(), n_rows * max_lanes, 0.0f);
    std::fill_n(ws.row_max(), n_rows, minus_infinity);

    // f32 values are read in place when their rows are whole vectors and contiguous (the KV
    // cache); otherwise packed, as a partial last vector would need masks in the output
    // tiles and widely strided rows would share L1 sets. A reduced type is converted as the
    // tiles load it (fused) when its rows are whole vectors and the rows few enough for dot
    // tiles (MHA and small GQA groups, where each element feeds few FMAs and a store and reload
    // through the workspace would cost more than the conversion); otherwise it is decoded a
    // block at a time into the workspace, once for all rows of the group, and the tiles read
    // f32 from L1 as they do for an f32 cache (docs/model.md, "KV-cache element types").
    // The fused tiles read every stored type, keys and values apart too (an f32 side in place),
    // each vector converted in registers: the 8-bit floats through binary16, the block types'
    // codes times their block's scale (bench/journal/2026-12-04-format-tiles.md).
    const bool all_f32 = problem.kv_dtype == KvDtype::f32 && problem.value_dtype == KvDtype::f32;
    const bool fused = !all_f32 && fusable(problem.kv_dtype) && fusable(problem.value_dtype) && dim % lanes == 0 &&
                       n_rows <= tiles.dot_rows_max;
    const bool decoded = !all_f32 && !fused;
    // Queries are scaled once here, so block scores come out of the FMAs final, each in the
    // layout of the tiles that read them; the fused tiles read e4m3 keys e4m3_unit smaller, so
    // their queries are that much larger (kv_load.hpp).
    if (n_rows <= tiles.dot_rows_max) {
        write_dot_tile_queries(problem, ws);
    } else {
        write_transposed_tile_queries(problem, ws);
    }
    const GroupAttention::E4m3Read e4m3_read = resolved(problem.e4m3_read);
    const bool e4m3_keys_as_bits = fused && problem.kv_dtype == KvDtype::e4m3 &&
                                   e4m3_read != GroupAttention::E4m3Read::binary16 &&
                                   all_below(std::span(ws.queries(), n_rows * padded_dim), e4m3_bits_query_limit);
    const bool e4m3_values_as_bits =
        fused && problem.value_dtype == KvDtype::e4m3 && e4m3_read == GroupAttention::E4m3Read::f32_bits;
    if (fused && problem.kv_dtype == KvDtype::e4m3) {
        const float unit = e4m3_keys_as_bits ? e4m3_bits_unit : e4m3_unit;
        for (float& q : std::span(ws.queries(), n_rows * padded_dim)) q *= unit;
    }
    const bool values_in_place = all_f32 && dim % lanes == 0 && problem.kv_stride == dim;
    const std::size_t key_row_bytes = kv_row_bytes(problem.kv_dtype, problem.kv_stride);
    const std::size_t value_row_bytes = kv_row_bytes(problem.value_dtype, problem.kv_stride);
    const auto* key_bytes = static_cast<const std::byte*>(problem.keys);
    const auto* value_bytes = static_cast<const std::byte*>(problem.values);
#if defined(KVBENCH_INT8_INTEGER_KEYS)
    // Filled by round_query_to_i16 where the int8 tiles run, and read nowhere else.
    alignas(64) std::array<std::int16_t, int8_dot_max_dim> query_i16;
    std::optional<float> query_i16_unscale;
    if (fused && problem.kv_dtype == KvDtype::int8 && n_rows == 1 && dim % int8_dot_lanes == 0 &&
        dim <= int8_dot_max_dim) {
        query_i16_unscale = round_query_to_i16(ws.queries(), dim, query_i16.data());
    }
#endif
#if defined(KVBENCH_Q8_0_INTEGER_KEYS)
    if (fused && problem.kv_dtype == KvDtype::q8_0 && n_rows == 1 && dim % kv_block_values == 0 &&
        dim <= int8_dot_max_dim) {
        query_i16_unscale = round_query_to_i16(ws.queries(), dim, query_i16.data());
    }
#endif
#if defined(KVBENCH_Q4_0_INTEGER_KEYS)
    Q4_0Query q4_0_query;
    bool q4_0_integer_keys = false;
    if (fused && problem.kv_dtype == KvDtype::q4_0 && n_rows == 1 && dim % kv_block_values == 0 &&
        dim <= int8_dot_max_dim) {
        query_i16_unscale = round_query_to_i16(ws.queries(), dim, query_i16.data());
        if (query_i16_unscale) {
            arrange_query_for_q4_0(query_i16.data(), dim, q4_0_query);
            q4_0_integer_keys = true;
        }
    }
#endif
    const bool group_dot_tiles = tiles.group_dot_tiles_plan && n_rows > 1 && n_rows <= tiles.dot_rows_max;
    const bool paged = problem.block_table != nullptr;
    const PrefetchPlan contiguous_plan = block_prefetch_plan(problem.kv_dtype, group_dot_tiles);
    BlockPrefetcher prefetcher(paged ? paged_block_plan(contiguous_plan, problem.kv_dtype) : contiguous_plan);
    std::size_t calls_per_block = 64;  // a guess for the first block; later ones count
    std::uint64_t flops = 0;
    const std::size_t block_keys = fused ? fused_key_block : key_block;
    // A paged cache (docs/model.md, "Paged caches"): the same blocks of keys, each read in place
    // from the cache block that holds it, f32 rows from the two that hold it (the tiles take a
    // pointer per run), a fused block run by run where its runs are whole vectors (FusedPieces);
    // any other block over cache blocks is gathered into the workspace (decoded, or copied as
    // stored for the fused tiles), so the tiles, their order and so the bits of the result are
    // the contiguous layout's. At blocks of half the kernel's the gather's copy cost more than
    // the tiles' own reads (bench/journal/2026-12-04-paged-prefetch.md).
    BlockPrefetcher::PagedTurns paged_turns;
    FusedPieces pieces;
    // In place, int8 and q4_0 keys ran 1.06-1.20× the time of gathered at cache blocks of 16
    // (MHA on Zen 5), where f16, bf16 and q8_0 keys ran 0.88-0.94× (e4m3 1.05×); the journal
    // entry of FusedPieces has the rounds.
    const bool pieces_in_place = problem.kv_dtype != KvDtype::int8 && problem.kv_dtype != KvDtype::q4_0;
    for (std::size_t t0 = 0; t0 < problem.n_ctx; t0 += block_keys) {
        const std::size_t ahead = t0 + prefetcher.blocks_ahead() * block_keys;
        if (paged) {
            prefetcher.start_paged(problem, ahead, block_keys, calls_per_block, paged_turns);
        } else {
            prefetcher.start(problem, ahead, block_keys, calls_per_block);
        }
        const std::size_t n_keys = std::min(block_keys, problem.n_ctx - t0);
        const std::byte* block_key_bytes = key_bytes + t0 * key_row_bytes;
        const std::byte* block_value_bytes = value_bytes + t0 * value_row_bytes;
        const float* block_key_scales = problem.key_scales != nullptr ? problem.key_scales + t0 : nullptr;
        const float* block_value_scales = problem.value_scales != nullptr ? problem.value_scales + t0 : nullptr;
        bool crosses_blocks = false;
        const FusedPieces* block_pieces = nullptr;
        // f32 rows in place over two cache blocks: the second run's first key in the block, and
        // its rows; 0 for a block in one run.
        std::size_t later_key = 0;
        const void* later_keys = nullptr;
        const void* later_values = nullptr;
        if (paged) {
            RunRows rows = paged_run_rows(problem, t0, n_keys);
            crosses_blocks = rows.n_keys < n_keys;
            if (crosses_blocks && !fused && !decoded) {
                const RunRows later = paged_run_rows(problem, t0 + rows.n_keys, n_keys - rows.n_keys);
                if (rows.n_keys + later.n_keys == n_keys) {
                    later_key = rows.n_keys;
                    later_keys = later.keys;
                    later_values = later.values;
                }
            }
            if (crosses_blocks && fused) {
                if (pieces_in_place && find_fused_pieces(problem, t0, n_keys, pieces)) {
                    // The softmax reads the block's int8 scales as one array.
                    block_pieces = &pieces;
                    const GatheredScales scales = gather_paged_scales(problem, t0, n_keys, ws);
                    rows.key_scales = scales.keys;
                    rows.value_scales = scales.values;
                } else {
                    rows = gather_paged_rows(problem, t0, n_keys, ws);
                }
            }
            block_key_bytes = rows.keys;
            block_value_bytes = rows.values;
            block_key_scales = rows.key_scales;
            block_value_scales = rows.value_scales;
        }
        BlockState st{problem,
                      ws,
                      prefetcher,
                      t0,
                      n_keys,
                      block_keys,
                      reinterpret_cast<const float*>(block_key_bytes),
                      problem.kv_stride,
                      reinterpret_cast<const float*>(block_value_bytes),
                      problem.kv_stride};
        const bool two_runs = later_key > 0;
        if (two_runs) {
            st.later_key = later_key;
            st.later_value = later_key;
            st.later_keys = static_cast<const float*>(later_keys);
            st.later_values = static_cast<const float*>(later_values);
        }
        // f32 rows over more than two cache blocks are decoded too (copied, zero past head_dim):
        // the tiles then read them as they read the cache's, the same products in the same order.
        if (decoded || (crosses_blocks && !fused && !two_runs)) {
            if (paged) {
                decode_paged_rows(problem, t0, n_keys, ws);
            } else {
                decode_kv_blocks(problem, t0, n_keys, ws);
            }
            st.keys = ws.decoded_keys();
            st.key_stride = padded_dim;
            st.keys_padded = true;
            st.values = ws.values();
            st.value_stride = padded_dim;
        } else if (fused) {
            st.stored_keys = block_key_bytes;
            st.stored_values = block_value_bytes;
            st.stored_key_row_bytes = key_row_bytes;
            st.stored_value_row_bytes = value_row_bytes;
            if (problem.key_scales != nullptr) st.key_scales = block_key_scales;
            if (problem.value_scales != nullptr) st.value_scales = block_value_scales;
#if defined(KVBENCH_INT8_INTEGER_KEYS)
            if (query_i16_unscale) {
                st.query_i16 = query_i16.data();
                st.query_i16_unscale = *query_i16_unscale;
            }
#endif
#if defined(KVBENCH_Q4_0_INTEGER_KEYS)
            if (q4_0_integer_keys) st.q4_0_query = &q4_0_query;
#endif
            st.e4m3_keys_as_bits = e4m3_keys_as_bits;
            st.e4m3_values_as_bits = e4m3_values_as_bits;
        } else if (!values_in_place) {
            pack_value_block(st);
        }
        if (fused) {
            attend_block_for(problem.kv_dtype, problem.value_dtype, st, n_rows, n_vecs, block_pieces);
        } else {
            if (two_runs) {
                attend_block<KvDtype::f32, KvDtype::f32, true>(st, n_rows, n_vecs);
            } else {
                attend_block<KvDtype::f32, KvDtype::f32>(st, n_rows, n_vecs);
            }
        }
        calls_per_block = std::max<std::size_t>(1, prefetcher.calls());
        flops += st.flops;
    }

    // The fused tiles' outputs over e4m3 values read through binary16 come e4m3_unit smaller, as
    // the values they read; read as f32 bits, with each probability 2^120 larger, they come whole.
    const float output_unit = fused && problem.value_dtype == KvDtype::e4m3 && !e4m3_values_as_bits ? e4m3_unit : 1.0f;
    for (std::size_t r = 0; r < n_rows; ++r) {
        const float sum = Simd::reduce_add(Simd::load(ws.lane_sums() + r * max_lanes));
        const float* output = ws.outputs() + r * padded_dim;
        std::transform(output, output + dim, result.out + r * result.out_stride, [&](float o) { return o * output_unit; });
        result.row_max[r] = ws.row_max()[r];
        result.row_sum[r] = sum;
    }
    return flops;
}

TiledKernelShape attend_group_tiled_shape() { return {lanes, key_block, tiles.dot_rows_max}; }

}  // namespace kvbench
