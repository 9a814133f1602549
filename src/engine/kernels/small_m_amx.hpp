// small_m_gemm_int8_amx(): y = x · W^T (+ y) for a few rows of x over int8 weights, on the
// tile unit of Intel's AMX (Sapphire Rapids and later), where the vector kernels' f32
// arithmetic caps the read from a few rows of x on (docs/model.md, "Weight element types").
#pragma once

#include <cstddef>
#include <cstdint>

namespace kvbench {

// Most rows of x one call takes: 8 rows of four parts each fill the two 16-column B tiles.
inline constexpr std::size_t amx_int8_max_rows = 8;

// Whether this build has the kernel (an AVX-512 build for x86-64 Linux), this CPU has AMX's
// int8 tiles and the kernel lets the process use their state (asked once, on first call).
bool amx_int8_usable();

// The bytes of x's packed parts the kernel keeps for reuse, per calling thread, for rows of x
// up to in_dim long: at most amx_int8_max_rows rows' four parts, 1 KiB a tile of 64 columns.
std::size_t amx_int8_parts_bytes(std::size_t in_dim);

// y (n_rows, out_dim) = x (n_rows, in_dim) · (scales ⊙ W)^T + beta · y, W (out_dim, in_dim)
// int8 with one scale per output row. Each row of x becomes four 8-bit parts at one power of
// two per row (x = 2^e · (p0 + p1/2^7 + p2/2^14 + p3/2^21) up to 2^-27 of the row's largest
// element); the tiles multiply and add them exactly in 32-bit integers, and each output's four
// sums become one double, scaled, then one float. Sums follow the shape only, never the
// thread count. Returns false, and writes nothing, where a row of x holds an infinity or NaN
// (the vector kernels then propagate it as IEEE arithmetic does).
// Requires: amx_int8_usable(); 1 <= n_rows <= amx_int8_max_rows; in_dim >= 1; beta is 0 or 1;
// y overlaps neither x nor w.
bool small_m_gemm_int8_amx(const float* x, std::size_t n_rows, std::size_t in_dim, const std::int8_t* w,
                           const float* scales, std::size_t out_dim, float beta, float* y);

}  // namespace kvbench
