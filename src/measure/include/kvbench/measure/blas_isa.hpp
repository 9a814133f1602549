// Whether OpenBLAS runs kernels of a lower instruction set than the CPU has, as a host's
// OPENBLAS_CORETYPE or an OpenBLAS older than the CPU can make it do: then sgemm's FLOP/s, the
// uncached path's and the roofline's peak, are that instruction set's, not the machine's.
#pragma once

#include <string>
#include <string_view>

namespace kvbench {

// The widest vector instruction set of an OpenBLAS core type's kernels (openblas_get_corename(),
// or a name OPENBLAS_CORETYPE takes, in any case): "avx512", "avx2", "avx", "sse"; "" for a name
// not known here.
std::string_view openblas_core_isa(std::string_view core);

// The widest of those instruction sets this CPU runs; "" off x86-64.
std::string_view cpu_vector_isa();

// One sentence when `blas_core`'s kernels are of a lower instruction set than `cpu_isa`, naming
// OPENBLAS_CORETYPE when it is set (`coretype`), and otherwise the OPENBLAS_CORETYPE that would
// run the CPU's own; else "" (also when the core is unknown).
std::string blas_held_back_note(std::string_view blas_core, std::string_view cpu_isa, std::string_view coretype);

}  // namespace kvbench
