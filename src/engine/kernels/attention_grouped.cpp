// attend_group_by_lanes(): a large query group against one KV head, with the query rows as
// vector lanes, written once in GCC vector extensions for 16 registers of 8 (AVX2) or 4 lanes
// (SSE, NEON).
//
// Why it exists: attend_group_tiled's tiles are laid out for AVX-512's 32 registers; cut down to
// 16 they leave per-row scalar work in every block (a horizontal max, a libm exp) and small
// register tiles, so on AVX2 the grouped attention (MQA, and GQA with large groups) ran far
// below the sgemm peak (bench/journal/2026-12-01-avx2-paths-on-an-avx512-host.md). Here a
// block's scores are computed transposed, S^T = K · (scale · Q)^T: a key element broadcast
// times a vector of query rows, so no key is ever transposed, and the online softmax is
// vertical (one max, one exp, one sum per lane, no horizontal step). The output is the usual
// O += P · V, a probability broadcast times a vector of values.
// Every sum runs in an order fixed by the shape, so equal inputs give equal bits.
#include "attention_grouped.hpp"

#include "even_tiles.hpp"
#include "kv_decode.hpp"
#include "prefetch_plan.hpp"
#include "simd.hpp"
#include "tuning.hpp"

#include "kvbench/engine/kv_convert.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <utility>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace kvbench {

namespace {

#if defined(__AVX2__) && defined(__FMA__)
constexpr std::size_t lanes = 8;
#else
constexpr std::size_t lanes = 4;
#endif
typedef float Vec __attribute__((vector_size(lanes * sizeof(float))));
typedef std::int32_t IntVec __attribute__((vector_size(lanes * sizeof(float))));

// Keys per block and register tiles (tuning.hpp): a score tile is n_keys × n_vecs accumulators
// plus n_vecs query vectors and one broadcast key (6 × 2 + 2 + 1 = 15, or 12 × 1 + 1 + 1 = 14); an
// output tile is n_rows × n_vecs accumulators plus n_vecs value vectors and one broadcast
// probability (6 × 2 + 2 + 1 = 15).
constexpr std::size_t key_block = tuning.lanes.key_block;
static_assert(key_block <= max_key_block, "probs_t lives in the workspace's probs region");
constexpr std::size_t score_vecs_max = tuning.lanes.score_vecs_max;
constexpr std::size_t score_keys_max_2 = tuning.lanes.score_keys_max_2;  // with 2 vectors of query rows
constexpr std::size_t score_keys_max_1 = tuning.lanes.score_keys_max_1;  // with 1
constexpr std::size_t out_rows_max = tuning.lanes.out_rows_max;
constexpr std::size_t out_vecs_max = tuning.lanes.out_vecs_max;

// Cephes' expf, as simd.hpp's back-ends compute it: e^x = 2^k · e^r, k = round(x · log2 e).
using simd::exp_highest;
using simd::exp_ln2_hi;
using simd::exp_ln2_lo;
using simd::exp_log2e;
using simd::exp_lowest;
using simd::exp_p0;
using simd::exp_p1;
using simd::exp_p2;
using simd::exp_p3;
using simd::exp_p4;
using simd::exp_p5;
using simd::minus_infinity;
// 1.5 · 2^23: adding and subtracting it rounds a float below 2^22 to the nearest integer (ties
// to even, as the default rounding mode does) without a rounding instruction SSE2 lacks.
constexpr float round_shifter = 12582912.0f;

// x - 0 is x for every x (x + 0 is not, for -0), so the subtraction folds away into a broadcast.
inline Vec splat(float x) { return x - Vec{}; }
// Vectors at any float's address; may_alias, as the buffers are floats.
typedef float UnalignedVec __attribute__((vector_size(lanes * sizeof(float)), aligned(alignof(float)), may_alias));
inline Vec load(const float* p) { return *reinterpret_cast<const UnalignedVec*>(p); }
inline void store(float* p, Vec v) { *reinterpret_cast<UnalignedVec*>(p) = v; }
inline Vec max(Vec a, Vec b) { return a > b ? a : b; }
// a · b + c; one rounding where the build has FMA.
inline Vec fma(Vec a, Vec b, Vec c) {
#if defined(__AVX2__) && defined(__FMA__)
    return _mm256_fmadd_ps(a, b, c);
#else
    return a * b + c;
#endif
}

Vec exp(Vec x) {
    Vec clamped = x < splat(exp_lowest) ? splat(exp_lowest) : x;
    clamped = clamped > splat(exp_highest) ? splat(exp_highest) : clamped;
    const Vec k = (clamped * exp_log2e + round_shifter) - round_shifter;
    Vec r = clamped - k * exp_ln2_hi;
    r = r - k * exp_ln2_lo;
    Vec p = fma(splat(exp_p0), r, splat(exp_p1));
    p = fma(p, r, splat(exp_p2));
    p = fma(p, r, splat(exp_p3));
    p = fma(p, r, splat(exp_p4));
    p = fma(p, r, splat(exp_p5));
    p = fma(p, r * r, r) + 1.0f;
    // k is in [-126, 127] after the clamp, so 2^k is a normal float built from its exponent bits.
    const IntVec biased = __builtin_convertvector(k, IntVec) + 127;
    const Vec scaled = p * std::bit_cast<Vec>(biased << 23);
    const IntVec kept = x >= splat(exp_lowest);
    return std::bit_cast<Vec>(std::bit_cast<IntVec>(scaled) & kept);
}

// One block's operands in the workspace. Row r of the group is lane r % lanes of vector
// r / lanes wherever rows are lanes.
struct LaneGroup {
    const float* keys;      // (n_ctx, kv_stride): key t at keys + t · kv_stride
    const float* values;    // (n_ctx, kv_stride), as keys
    std::size_t kv_stride;  // floats
    std::size_t n_rows;     // query rows, a multiple of lanes
    std::size_t head_dim;   // a multiple of lanes
    std::size_t padded_dim;
    float* queries_t;       // (head_dim, n_rows): scale · q, transposed
    float* probs_t;         // (key_block, n_rows): a block's scores, then e^(s - row max)
    float* outputs;         // (n_rows, padded_dim): running Σ_t p_t · v_t
    float* row_max;         // (n_rows): running max score
    float* row_sum;         // (n_rows): running Σ_t p_t
    float* rescale;         // (n_rows): e^(old max - new max) of the current block
};

// A later block's keys and values (prefetch_plan.hpp: how far ahead, into L1 or L2), one cache
// line of each per call, spread over the current block's score loop: that loop reads keys in
// short bursts between FMAs, which the hardware prefetcher alone follows too late, and a burst
// of prefetches would overflow the miss buffers (see block_prefetcher.hpp). The score loop
// makes more calls than a block has lines at the usual shapes (dh = 128: 512 calls at 32 rows,
// 256 at 16 and 8, for 192 lines; dh = 64 at 16 rows: 128 calls, 96 lines); the lines it
// leaves, if any, come from the hardware prefetcher.
class Prefetcher {
public:
    explicit Prefetcher(bool into_l2) : into_l2_(into_l2) {}
    void start(const void* keys, const void* values, std::size_t n_bytes) {
        keys_ = static_cast<const char*>(keys);
        values_ = static_cast<const char*>(values);
        lines_left_ = (n_bytes + line_bytes - 1) / line_bytes;
    }
    void stop() { lines_left_ = 0; }
    void issue() {
        if (lines_left_ == 0) return;
        prefetch_line(keys_, into_l2_);
        prefetch_line(values_, into_l2_);
        keys_ += line_bytes;
        values_ += line_bytes;
        --lines_left_;
    }

private:
    static constexpr std::size_t line_bytes = 64;
    bool into_l2_;
    const char* keys_ = nullptr;
    const char* values_ = nullptr;
    std::size_t lines_left_ = 0;
};

// probs_t[t][rows of vectors first_vec ..] = Σ_d keys[t][d] · queries_t[d][..] for the tile's
// n_keys keys (keys: the first of them) × n_vecs vectors of rows.
template <std::size_t n_keys, std::size_t n_vecs>
void score_tile(const LaneGroup& c, const float* keys, std::size_t first_vec, float* probs_t, Prefetcher& shared) {
    Prefetcher prefetcher = shared;  // a local copy stays in registers across the loop
    Vec acc[n_keys][n_vecs] = {};
    const float* queries = c.queries_t + first_vec * lanes;
    const auto step = [&](std::size_t d) {
        Vec q[n_vecs];
        for (std::size_t v = 0; v < n_vecs; ++v) q[v] = load(queries + d * c.n_rows + v * lanes);
        for (std::size_t t = 0; t < n_keys; ++t) {
            const Vec k = splat(keys[t * c.kv_stride + d]);
            for (std::size_t v = 0; v < n_vecs; ++v) acc[t][v] = fma(k, q[v], acc[t][v]);
        }
    };
    // Tiles of two vectors of rows ask for one line per two dims: at one per dim, the
    // prefetcher's call (a test, two prefetches, three counter updates) was a large part of the
    // loop's instructions (bench/journal/2026-12-02-lanes-kernel-fewer-prefetch-calls.md).
    // They still make more calls than a block has lines (see Prefetcher). head_dim is a multiple
    // of lanes, so of two.
    constexpr std::size_t dims_per_issue = n_vecs;
    for (std::size_t d = 0; d < c.head_dim; d += dims_per_issue) {
        for (std::size_t i = 0; i < dims_per_issue; ++i) step(d + i);
        prefetcher.issue();
    }
    shared = prefetcher;
    for (std::size_t t = 0; t < n_keys; ++t) {
        for (std::size_t v = 0; v < n_vecs; ++v) store(probs_t + t * c.n_rows + (first_vec + v) * lanes, acc[t][v]);
    }
}

// outputs[rows first_row ..][vectors first_vec ..] = rescale[row] · outputs[..] + Σ_t probs_t[t][row] · values[t][..]
// for n_rows rows × n_vecs vectors of head_dim, kept in registers across the block's n_keys keys.
template <std::size_t n_rows, std::size_t n_vecs>
void output_tile(const LaneGroup& c, const float* values, std::size_t n_keys, std::size_t first_row,
                 std::size_t first_vec) {
    Vec acc[n_rows][n_vecs];
    float* outputs = c.outputs + first_row * c.padded_dim + first_vec * lanes;
    for (std::size_t i = 0; i < n_rows; ++i) {
        const Vec rescale = splat(c.rescale[first_row + i]);
        for (std::size_t v = 0; v < n_vecs; ++v) acc[i][v] = load(outputs + i * c.padded_dim + v * lanes) * rescale;
    }
    const float* probs = c.probs_t + first_row;
    values += first_vec * lanes;
    for (std::size_t t = 0; t < n_keys; ++t) {
        Vec value[n_vecs];
        for (std::size_t v = 0; v < n_vecs; ++v) value[v] = load(values + t * c.kv_stride + v * lanes);
        for (std::size_t i = 0; i < n_rows; ++i) {
            const Vec p = splat(probs[t * c.n_rows + i]);
            for (std::size_t v = 0; v < n_vecs; ++v) acc[i][v] = fma(p, value[v], acc[i][v]);
        }
    }
    for (std::size_t i = 0; i < n_rows; ++i) {
        for (std::size_t v = 0; v < n_vecs; ++v) store(outputs + i * c.padded_dim + v * lanes, acc[i][v]);
    }
}

// Tables of the tiles by size, so a runtime tile shape picks a compiled one.
using ScoreTileFn = void (*)(const LaneGroup&, const float*, std::size_t, float*, Prefetcher&);
using OutputTileFn = void (*)(const LaneGroup&, const float*, std::size_t, std::size_t, std::size_t);

template <std::size_t n_vecs, std::size_t... i>
constexpr std::array<ScoreTileFn, sizeof...(i)> score_tiles_of(std::index_sequence<i...>) {
    return {&score_tile<i + 1, n_vecs>...};
}
constexpr auto score_tiles_1 = score_tiles_of<1>(std::make_index_sequence<score_keys_max_1>{});
constexpr auto score_tiles_2 = score_tiles_of<2>(std::make_index_sequence<score_keys_max_2>{});

template <std::size_t n_rows, std::size_t... v>
constexpr std::array<OutputTileFn, sizeof...(v)> output_tile_row(std::index_sequence<v...>) {
    return {&output_tile<n_rows, v + 1>...};
}
template <std::size_t... r>
constexpr std::array<std::array<OutputTileFn, out_vecs_max>, sizeof...(r)> output_tiles_of(std::index_sequence<r...>) {
    return {output_tile_row<r + 1>(std::make_index_sequence<out_vecs_max>{})...};
}
constexpr auto output_tiles = output_tiles_of(std::make_index_sequence<out_rows_max>{});

// Raw scores of the block's n_keys keys into probs_t, prefetching a later block meanwhile.
void score_block(const LaneGroup& c, const float* keys, std::size_t n_keys, Prefetcher& prefetcher) {
    for_each_tile(c.n_rows / lanes, score_vecs_max, [&](std::size_t first_vec, std::size_t n_vecs) {
        const std::size_t keys_max = n_vecs == 2 ? score_keys_max_2 : score_keys_max_1;
        for_each_tile(n_keys, keys_max, [&](std::size_t first_key, std::size_t tile_keys) {
            const ScoreTileFn tile = n_vecs == 2 ? score_tiles_2[tile_keys - 1] : score_tiles_1[tile_keys - 1];
            tile(c, keys + first_key * c.kv_stride, first_vec, c.probs_t + first_key * c.n_rows, prefetcher);
        });
    });
}

// Online softmax of the block, lane by lane: each row's max moves to the block's, the scores
// become e^(s - max), the sum is rescaled and extended, and rescale holds the factor that the
// output tiles apply to the earlier outputs (0 on the first block, where the max was -inf).
void update_softmax(const LaneGroup& c, std::size_t n_keys) {
    for (std::size_t r = 0; r < c.n_rows; r += lanes) {
        const Vec old_max = load(c.row_max + r);
        Vec new_max = old_max;
        for (std::size_t t = 0; t < n_keys; ++t) new_max = max(new_max, load(c.probs_t + t * c.n_rows + r));
        Vec sum = Vec{};
        for (std::size_t t = 0; t < n_keys; ++t) {
            float* scores = c.probs_t + t * c.n_rows + r;
            const Vec p = exp(load(scores) - new_max);
            store(scores, p);
            sum += p;
        }
        const Vec rescale = exp(old_max - new_max);
        store(c.row_sum + r, fma(load(c.row_sum + r), rescale, sum));
        store(c.row_max + r, new_max);
        store(c.rescale + r, rescale);
    }
}

void accumulate_block(const LaneGroup& c, const float* values, std::size_t n_keys) {
    for_each_tile(c.n_rows, out_rows_max, [&](std::size_t first_row, std::size_t n_rows) {
        for_each_tile(c.head_dim / lanes, out_vecs_max, [&](std::size_t first_vec, std::size_t n_vecs) {
            output_tiles[n_rows - 1][n_vecs - 1](c, values, n_keys, first_row, first_vec);
        });
    });
}

}  // namespace

std::size_t lanes_kernel_width() { return lanes; }

std::uint64_t attend_group_by_lanes(const GroupAttention& problem, const PartialSoftmax& result, AttendWorkspace& ws) {
    const std::size_t n_rows = problem.n_rows;
    const std::size_t dim = problem.head_dim;
    assert(n_rows % lanes == 0 && dim % lanes == 0 && n_rows <= ws.max_rows() && dim == ws.head_dim());

    // Scratch regions of the workspace, each at least as large as used here: queries
    // (max_rows, padded_dim) >= (dim, n_rows); probs (max_rows, max_key_block) >=
    // (key_block, n_rows); lane_sums (max_rows, 16) >= n_rows.
    // A reduced type is decoded a block at a time into the workspace (keys and values as
    // (key_block, padded_dim) floats), once for all rows of the group; the tiles then read f32.
    const bool decoded = problem.kv_dtype != KvDtype::f32 || problem.value_dtype != KvDtype::f32;
    const std::size_t key_row_bytes = kv_row_bytes(problem.kv_dtype, problem.kv_stride);
    const std::size_t value_row_bytes = kv_row_bytes(problem.value_dtype, problem.kv_stride);
    const auto* key_bytes = static_cast<const std::byte*>(problem.keys);
    const auto* value_bytes = static_cast<const std::byte*>(problem.values);
    const LaneGroup c{static_cast<const float*>(problem.keys),
                      static_cast<const float*>(problem.values),
                      problem.kv_stride,
                      n_rows,
                      dim,
                      ws.padded_dim(),
                      ws.queries(),
                      ws.probs(),
                      ws.outputs(),
                      ws.row_max(),
                      ws.lane_sums(),
                      ws.rescale()};
    LaneGroup decoded_block = c;
    decoded_block.kv_stride = ws.padded_dim();
    for (std::size_t r = 0; r < n_rows; ++r) {
        const float* q = problem.q + r * problem.q_stride;
        for (std::size_t d = 0; d < dim; ++d) c.queries_t[d * n_rows + r] = q[d] * problem.scale;
    }
    std::fill_n(c.outputs, n_rows * c.padded_dim, 0.0f);
    std::fill_n(c.row_max, n_rows, minus_infinity);
    std::fill_n(c.row_sum, n_rows, 0.0f);

    const PrefetchPlan plan = block_prefetch_plan(problem.kv_dtype);
    Prefetcher prefetcher(plan.into_l2);
    for (std::size_t t0 = 0; t0 < problem.n_ctx; t0 += key_block) {
        const std::size_t n_keys = std::min(key_block, problem.n_ctx - t0);
        const std::size_t ahead = t0 + plan.blocks_ahead * key_block;
        if (ahead < problem.n_ctx) {
            const std::size_t ahead_keys = std::min(key_block, problem.n_ctx - ahead);
            // Keys and values of different types: the wider rows' lines for both (the
            // narrower side's extra lines are its next block's).
            const std::size_t row_bytes = std::max(key_row_bytes, value_row_bytes);
            prefetcher.start(key_bytes + ahead * key_row_bytes, value_bytes + ahead * value_row_bytes,
                             (ahead_keys - 1) * row_bytes +
                                 std::max(kv_row_bytes(problem.kv_dtype, dim), kv_row_bytes(problem.value_dtype, dim)));
            if (problem.key_scales != nullptr) __builtin_prefetch(problem.key_scales + ahead, 0, 3);
            if (problem.value_scales != nullptr) __builtin_prefetch(problem.value_scales + ahead, 0, 3);
        } else {
            prefetcher.stop();
        }
        if (decoded) {
            decode_kv_blocks(problem, t0, n_keys, ws);
            score_block(decoded_block, ws.decoded_keys(), n_keys, prefetcher);
            update_softmax(c, n_keys);
            accumulate_block(decoded_block, ws.values(), n_keys);
            continue;
        }
        score_block(c, c.keys + t0 * c.kv_stride, n_keys, prefetcher);
        update_softmax(c, n_keys);
        accumulate_block(c, c.values + t0 * c.kv_stride, n_keys);
    }

    for (std::size_t r = 0; r < n_rows; ++r) {
        std::copy_n(c.outputs + r * c.padded_dim, dim, result.out + r * result.out_stride);
        result.row_max[r] = c.row_max[r];
        result.row_sum[r] = c.row_sum[r];
    }
    // Scores and outputs: one multiply-add per (row, key, dim) each, nothing padded.
    return std::uint64_t{4} * n_rows * problem.n_ctx * dim;
}

}  // namespace kvbench
