// The AMX kernel for int8 weights. The tiles multiply 8-bit integers only, so x goes in as
// four 8-bit parts per element: each part is what the earlier ones leave, times 2^7, rounded,
// all at one power of two per row, so every step is exact in float and the only error is the
// last part's rounding. W is never converted: a tile of 16 of W's rows × 64 columns is loaded
// straight from the matrix as the A operand, and x's parts are packed once per call as the B
// operand (the layout TDPBSSD reads: 4 consecutive columns of x per 32-bit element).
#include "small_m_amx.hpp"

#include "tuning.hpp"

#include <cassert>

#if defined(__x86_64__) && defined(__AVX512F__) && defined(__linux__)
#define KVBENCH_AMX_INT8 1
#include <cpuid.h>
#include <immintrin.h>
#include <omp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>
#endif

namespace kvbench {

#ifdef KVBENCH_AMX_INT8

namespace {

constexpr auto choices = tuning.small_m_typed;

constexpr std::size_t parts = 4;                // 8-bit parts per element of x
constexpr int part_shift = 7;                   // each part 2^7 finer than the one before
constexpr double part_step = 1.0 / (1 << part_shift);
constexpr std::size_t chunk_cols = 64;          // columns of W per tile row (64 bytes)
// W's rows per block: two A tiles of 16, whose 32 streams read 23-24 GB/s where one tile's 16
// read 21.5 (bench/journal/2026-12-05-amx-int8-weights.md).
constexpr std::size_t block_rows = 32;
constexpr std::size_t tile_bytes = 1024;        // 16 rows × 64 bytes
// Columns summed in 32 bits before the sums are moved to doubles: no part of x passes 2^6 in
// magnitude and no weight 2^7, so 2^17 columns stay below 2^30.
constexpr std::size_t max_span_cols = std::size_t{1} << 17;

// Linux keeps the tiles' 8 KiB of state off until a process asks (ARCH_REQ_XCOMP_PERM for
// XFEATURE_XTILEDATA); a kernel or hypervisor that does not grant it refuses here.
bool request_tile_state() {
    constexpr long arch_req_xcomp_perm = 0x1023;
    constexpr long xfeature_xtiledata = 18;
    return syscall(SYS_arch_prctl, arch_req_xcomp_perm, xfeature_xtiledata) == 0;
}

bool cpu_has_amx_int8() {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) return false;
    constexpr unsigned amx_tile = 1u << 24, amx_int8 = 1u << 25;
    return (edx & amx_tile) != 0 && (edx & amx_int8) != 0;
}

// The palette-1 configuration LDTILECFG reads: tiles 0-1 W (A), 2-3 x's parts (B), 4-7 the
// sums, C(a, b) = 4 + 2a + b for A tile a and B tile b. Every tile 16 rows of 64 bytes.
struct alignas(64) TileConfig {
    std::uint8_t palette = 1;
    std::uint8_t start_row = 0;
    std::array<std::uint8_t, 14> reserved{};
    std::array<std::uint16_t, 16> colsb{};
    std::array<std::uint8_t, 16> rows{};
};

TileConfig tile_config() {
    TileConfig config;
    for (std::size_t t = 0; t < 8; ++t) {
        config.colsb[t] = 64;
        config.rows[t] = 16;
    }
    return config;
}

// x's parts as B tiles, chunk by chunk of 64 columns: tile b of chunk c at (c·n_tiles + b) KiB,
// its row kk holding columns 4kk..4kk+3 of the chunk for each of 16 tile columns, tile column
// j being part j % 4 of row 4b + j / 4 of x. Returns false where a row holds an infinity or NaN.
bool pack_parts(const float* x, std::size_t n_rows, std::size_t in_dim, std::size_t n_chunks, std::size_t n_tiles,
                std::vector<std::int8_t>& packed, std::array<double, amx_int8_max_rows>& row_scale) {
    packed.assign(n_chunks * n_tiles * tile_bytes, 0);
    alignas(16) std::array<std::int8_t, 16> bytes{};
    for (std::size_t m = 0; m < n_rows; ++m) {
        const float* row = x + m * in_dim;
        // The masked forms, all lanes on: GCC 12 warns that the plain ones read an undefined register.
        constexpr __mmask16 all = 0xffff;
        __m512 magnitudes = _mm512_setzero_ps();
        __mmask16 not_finite = 0;
        for (std::size_t k0 = 0; k0 < in_dim; k0 += 16) {
            const auto mask = static_cast<__mmask16>((1u << std::min<std::size_t>(16, in_dim - k0)) - 1u);
            const __m512 magnitude = _mm512_abs_ps(_mm512_maskz_loadu_ps(mask, row + k0));
            magnitudes = _mm512_maskz_max_ps(all, magnitudes, magnitude);
            // NaN is unordered with itself; an infinity's magnitude is infinity.
            const __m512 infinity = _mm512_set1_ps(std::numeric_limits<float>::infinity());
            not_finite = static_cast<__mmask16>(not_finite | _mm512_cmp_ps_mask(magnitude, magnitude, _CMP_UNORD_Q) |
                                                _mm512_cmp_ps_mask(magnitude, infinity, _CMP_EQ_OQ));
        }
        if (not_finite != 0) return false;
        alignas(64) std::array<float, 16> lanes;
        _mm512_store_ps(lanes.data(), magnitudes);
        const float largest = *std::max_element(lanes.begin(), lanes.end());
        // 2^e with every |x / 2^e| below 2^6: the first part then fits 8 bits with room.
        int exponent = 0;
        if (largest > 0.0f) std::frexp(largest, &exponent);
        exponent -= 6;
        row_scale[m] = std::ldexp(1.0, exponent);
        const __m512 down = _mm512_set1_ps(static_cast<float>(-exponent));
        const __m512 finer = _mm512_set1_ps(static_cast<float>(1 << part_shift));
        for (std::size_t k0 = 0; k0 < in_dim; k0 += 16) {
            const std::size_t len = std::min<std::size_t>(16, in_dim - k0);
            const auto mask = static_cast<__mmask16>((1u << len) - 1u);
            // scalef multiplies by 2^-e without forming 2^-e, which a float cannot hold for
            // rows of tiny elements.
            __m512 rest = _mm512_maskz_scalef_ps(all, _mm512_maskz_loadu_ps(mask, row + k0), down);
            for (std::size_t part = 0; part < parts; ++part) {
                const __m512 rounded = _mm512_maskz_roundscale_ps(all, rest, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
                rest = _mm512_mul_ps(_mm512_sub_ps(rest, rounded), finer);
                _mm_store_si128(reinterpret_cast<__m128i*>(bytes.data()),
                                _mm512_maskz_cvtsepi32_epi8(all, _mm512_maskz_cvtps_epi32(all, rounded)));
                const std::size_t column = m * parts + part;
                const std::size_t chunk = k0 / chunk_cols, kk = (k0 % chunk_cols) / 4;
                std::int8_t* to = packed.data() + (chunk * n_tiles + column / 16) * tile_bytes + kk * 64 + column % 16 * 4;
                // Lanes past in_dim are zeros and their columns lie inside the last chunk.
                for (std::size_t g = 0; g < 4; ++g) std::memcpy(to + g * 64, bytes.data() + 4 * g, 4);
            }
        }
    }
    return true;
}

struct Block {
    const std::int8_t* w;  // the block's first row of W
    std::size_t rows;      // of W: 32, or fewer in the last block
};

// Where A tile a (W's rows 16a..16a+15 of the block) reads chunk c from: W itself where the
// tile lies inside it, else a zero-padded copy (the last chunk of a ragged row, the last
// block's missing rows), to be loaded before the next copy.
struct TileSource {
    const std::int8_t* data;
    long stride;
};

TileSource w_tile(const Block& block, std::size_t a, std::size_t chunk, std::size_t in_dim, std::int8_t* padded) {
    const std::size_t k0 = chunk * chunk_cols;
    const std::size_t first = a * 16;
    const std::size_t cols = std::min(chunk_cols, in_dim - k0);
    if (cols == chunk_cols && first + 16 <= block.rows) return {block.w + first * in_dim + k0, static_cast<long>(in_dim)};
    std::memset(padded, 0, tile_bytes);
    for (std::size_t r = first; r < std::min(first + 16, block.rows); ++r) {
        std::memcpy(padded + (r - first) * 64, block.w + r * in_dim + k0, cols);
    }
    return {padded, 64};
}

// GCC 12's _tile_loadd is an asm without a memory clobber: nothing tells the compiler that it
// reads the padded copy, so without this the next copy into the same buffer could be moved
// above the load.
inline void loaded_from_memory() { asm volatile("" ::: "memory"); }

// One block's outputs: y[m][o] for its rows o, every row m of x.
__attribute__((target("amx-tile,amx-int8"))) void block_product(const Block& block, std::size_t in_dim,
                                                                 const std::int8_t* packed, std::size_t n_tiles,
                                                                 std::size_t n_columns,
                                                                 std::array<double, block_rows * amx_int8_max_rows * parts>& sums) {
    const std::size_t n_chunks = (in_dim + chunk_cols - 1) / chunk_cols;
    const std::size_t a_tiles = block.rows > 16 ? 2 : 1;
    // Neither is read before it is written: padded by w_tile's copy, stored by the tiles.
    alignas(64) std::array<std::int8_t, tile_bytes> padded;
    alignas(64) std::array<std::int32_t, 4 * 256> stored;
    for (std::size_t span = 0; span < n_chunks; span += max_span_cols / chunk_cols) {
        const std::size_t span_end = std::min(n_chunks, span + max_span_cols / chunk_cols);
        _tile_zero(4);
        _tile_zero(5);
        _tile_zero(6);
        _tile_zero(7);
        for (std::size_t c = span; c < span_end; ++c) {
            // The lines the tiles load next, into L1: the tile loads wait for their lines one
            // after another, where prefetches are in flight together
            // (bench/journal/2026-12-05-amx-int8-weights.md).
            for (std::size_t r = 0; r < block.rows; ++r) {
                _mm_prefetch(reinterpret_cast<const char*>(block.w + r * in_dim + c * chunk_cols) +
                                 choices.amx_prefetch_bytes,
                             _MM_HINT_T0);
            }
            const std::int8_t* parts_tile = packed + c * n_tiles * tile_bytes;
            const TileSource w0 = w_tile(block, 0, c, in_dim, padded.data());
            _tile_loadd(0, w0.data, w0.stride);
            loaded_from_memory();
            _tile_loadd(2, parts_tile, 64);
            _tile_dpbssd(4, 0, 2);
            if (a_tiles == 2) {
                const TileSource w1 = w_tile(block, 1, c, in_dim, padded.data());
                _tile_loadd(1, w1.data, w1.stride);
                loaded_from_memory();
                _tile_dpbssd(6, 1, 2);
            }
            if (n_tiles == 2) {
                _tile_loadd(3, parts_tile + tile_bytes, 64);
                _tile_dpbssd(5, 0, 3);
                if (a_tiles == 2) _tile_dpbssd(7, 1, 3);
            }
        }
        _tile_stored(4, stored.data(), 64);
        _tile_stored(5, stored.data() + 256, 64);
        _tile_stored(6, stored.data() + 512, 64);
        _tile_stored(7, stored.data() + 768, 64);
        // stored[(2a + b)·256 + r·16 + j]: W's row 16a + r against B tile b's column j.
        for (std::size_t a = 0; a < a_tiles; ++a) {
            for (std::size_t r = 0; r < 16; ++r) {
                for (std::size_t column = 0; column < n_columns; ++column) {
                    const auto value = static_cast<double>(stored[(2 * a + column / 16) * 256 + r * 16 + column % 16]);
                    double& sum = sums[(a * 16 + r) * amx_int8_max_rows * parts + column];
                    sum = span == 0 ? value : sum + value;
                }
            }
        }
    }
}

// What run_blocks needs of the call; x itself is read only by pack_parts, before it.
struct Product {
    std::size_t n_rows, in_dim;
    const std::int8_t* w;
    const float* scales;
    std::size_t out_dim;
    float beta;
    float* y;
};

// Blocks [first_block, last_block) of one thread, on its own tile configuration.
__attribute__((target("amx-tile,amx-int8"))) void run_blocks(const Product& p, const std::int8_t* packed,
                                                              std::size_t n_tiles,
                                                              const std::array<double, amx_int8_max_rows>& row_scale,
                                                              std::size_t first_block, std::size_t last_block) {
    if (first_block == last_block) return;
    const TileConfig config = tile_config();
    _tile_loadconfig(&config);
    std::array<double, block_rows * amx_int8_max_rows * parts> sums{};
    for (std::size_t b = first_block; b < last_block; ++b) {
        const std::size_t first = b * block_rows;
        const Block block{p.w + first * p.in_dim, std::min(block_rows, p.out_dim - first)};
        block_product(block, p.in_dim, packed, n_tiles, p.n_rows * parts, sums);
        for (std::size_t r = 0; r < block.rows; ++r) {
            for (std::size_t m = 0; m < p.n_rows; ++m) {
                const double* part_sums = sums.data() + r * amx_int8_max_rows * parts + m * parts;
                double sum = part_sums[parts - 1];
                // Times 2^-7 as a product, exact in double: std::ldexp is a library call per part.
                for (std::size_t part = parts - 1; part-- > 0;) sum = part_sums[part] + sum * part_step;
                const float value =
                    static_cast<float>(sum * row_scale[m] * static_cast<double>(p.scales[first + r]));
                float& out = p.y[m * p.out_dim + first + r];
                out = p.beta == 0.0f ? value : out + value;
            }
        }
    }
    _tile_release();
}

}  // namespace

bool amx_int8_usable() {
    static const bool usable = cpu_has_amx_int8() && request_tile_state();
    return usable;
}

std::size_t amx_int8_parts_bytes(std::size_t in_dim) {
    return (in_dim + chunk_cols - 1) / chunk_cols * (amx_int8_max_rows * parts / 16) * tile_bytes;
}

bool small_m_gemm_int8_amx(const float* x, std::size_t n_rows, std::size_t in_dim, const std::int8_t* w,
                           const float* scales, std::size_t out_dim, float beta, float* y) {
    assert(amx_int8_usable() && n_rows >= 1 && n_rows <= amx_int8_max_rows && in_dim >= 1);
    const std::size_t n_chunks = (in_dim + chunk_cols - 1) / chunk_cols;
    const std::size_t n_tiles = (n_rows * parts + 15) / 16;
    // Grows once, to the widest call's parts; a few hundred KiB at D = 8192.
    static thread_local std::vector<std::int8_t> packed;
    std::array<double, amx_int8_max_rows> row_scale{};
    if (!pack_parts(x, n_rows, in_dim, n_chunks, n_tiles, packed, row_scale)) return false;
    const std::size_t n_blocks = (out_dim + block_rows - 1) / block_rows;
    const std::int8_t* parts_data = packed.data();
#pragma omp parallel if (out_dim * in_dim >= choices.min_parallel_weights)
    {
        const auto n_threads = static_cast<std::size_t>(omp_get_num_threads());
        const auto thread = static_cast<std::size_t>(omp_get_thread_num());
        run_blocks({n_rows, in_dim, w, scales, out_dim, beta, y}, parts_data, n_tiles, row_scale,
                   n_blocks * thread / n_threads, n_blocks * (thread + 1) / n_threads);
    }
    return true;
}

#else

bool amx_int8_usable() { return false; }

std::size_t amx_int8_parts_bytes(std::size_t) { return 0; }

bool small_m_gemm_int8_amx(const float*, std::size_t, std::size_t, const std::int8_t*, const float*, std::size_t,
                           float, float*) {
    assert(false && "small_m_gemm_int8_amx needs amx_int8_usable()");
    return false;
}

#endif

}  // namespace kvbench
