// small_m_gemm(): y = x · W^T (+ y) for a few rows of x, streaming each weight once for all rows.
#pragma once

#include "small_m_isa.hpp"
#include "tuning.hpp"

#include <cstddef>
#include <vector>

namespace kvbench {

// The kernels this build compiled, slowest first; the last is what the default overload runs.
// `scalar` is always there, so tests can hold every compiled path to the reference.
std::vector<SmallMIsa> small_m_isas();

// "scalar", "avx2" or "avx512".
const char* isa_name(SmallMIsa isa);

// The L1 data cache a kernel's chunks of x and prefetching are chosen for: 32 KiB (Zen 2 to 4)
// or 48 KiB and more (Zen 5, Intel since Ice Lake). Either runs correctly on any CPU, so tests
// hold both to the reference wherever they run.
enum class SmallML1 { kib32, kib48 };

// This CPU's: kib32 below 48 KiB, else kib48 (also where the size cannot be read).
SmallML1 small_m_l1();

// How the AVX2 tiles that take 7 and 8 rows of x in passes over one weight tile (16 registers)
// prefetch the next tile: each pass its share of its lines, or the first pass all of them.
// Prefetches only, so both give the same bits; tests run both wherever AVX2 is compiled.
enum class PassPrefetch { spread, first_pass };

// This CPU's: first_pass on an Intel CPU where the build's tuning class says so, else spread.
PassPrefetch host_pass_prefetch();

// y (n_rows, out_dim) = x (n_rows, in_dim) · W^T + beta · y, W (out_dim, in_dim) row-major.
// Each OpenMP thread streams one contiguous slab of W's rows once, for all n_rows rows of x.
// y is not read when beta is 0, so it may hold garbage then. The order of the sums depends
// on the shape, the isa and l1 only, never on addresses or the thread count: equal inputs give
// equal bits on one machine. A page-aligned W streams fastest
// (bench/journal/2026-11-30-linear-sgemv-small-m-or-sgemm.md).
// Requires: 1 <= n_rows <= small_m_max_rows; in_dim >= 1; beta is 0 or 1;
// y overlaps neither x nor w; isa is in small_m_isas().
void small_m_gemm(const float* x, std::size_t n_rows, std::size_t in_dim, const float* w,
                  std::size_t out_dim, float beta, float* y, SmallMIsa isa, SmallML1 l1,
                  PassPrefetch pass_prefetch);
// The same for this CPU's L1 and pass prefetch (small_m_l1(), host_pass_prefetch()).
void small_m_gemm(const float* x, std::size_t n_rows, std::size_t in_dim, const float* w,
                  std::size_t out_dim, float beta, float* y, SmallMIsa isa);
// The same for this CPU's L1 and the widest isa compiled: what linear() runs.
void small_m_gemm(const float* x, std::size_t n_rows, std::size_t in_dim, const float* w,
                  std::size_t out_dim, float beta, float* y);

}  // namespace kvbench
