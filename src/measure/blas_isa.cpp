// OpenBLAS core types by the instruction set of their sgemm kernels (OpenBLAS's kernel/x86_64
// KERNEL.<core> files: SkylakeX, Cooper Lake and Sapphire Rapids use AVX-512; Haswell, Zen and
// Excavator AVX2 with FMA; Sandy Bridge and the Bulldozer line AVX; the rest SSE).
#include "kvbench/measure/blas_isa.hpp"

#include "kvbench/engine/ascii_case.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <utility>

namespace kvbench {

namespace {

// The vector ISAs, ordered from the narrowest (an ISA's rank is its index), each with the name
// a note shows and the oldest OpenBLAS core type of its kind, which Debian's DYNAMIC_ARCH build
// carries and OPENBLAS_CORETYPE can ask for.
struct VectorIsa {
    std::string_view name;
    std::string_view display_name;
    std::string_view oldest_core;
};
constexpr std::array<VectorIsa, 4> isa_order = {{
    {"sse", "SSE", "Nehalem"},
    {"avx", "AVX", "SandyBridge"},
    {"avx2", "AVX2", "Haswell"},
    {"avx512", "AVX-512", "SkylakeX"},
}};

std::size_t rank_of(std::string_view isa) {
    return static_cast<std::size_t>(
        std::find_if(isa_order.begin(), isa_order.end(), [&](const VectorIsa& v) { return v.name == isa; }) -
        isa_order.begin());
}

}  // namespace

std::string_view openblas_core_isa(std::string_view core) {
    static const std::array<std::pair<std::string_view, std::string_view>, 26> cores = {{
        {"skylakex", "avx512"},   {"cooperlake", "avx512"}, {"sapphirerapids", "avx512"},
        {"haswell", "avx2"},      {"zen", "avx2"},          {"excavator", "avx2"},
        {"sandybridge", "avx"},   {"bulldozer", "avx"},     {"piledriver", "avx"},
        {"steamroller", "avx"},   {"nehalem", "sse"},       {"core2", "sse"},
        {"penryn", "sse"},        {"dunnington", "sse"},    {"prescott", "sse"},
        {"atom", "sse"},          {"opteron", "sse"},       {"opteron_sse3", "sse"},
        {"barcelona", "sse"},     {"bobcat", "sse"},        {"nano", "sse"},
        {"katmai", "sse"},        {"coppermine", "sse"},    {"northwood", "sse"},
        {"banias", "sse"},        {"athlon", "sse"},
    }};
    const std::string lower = lowercase(core);
    for (const auto& [name, isa] : cores) {
        if (lower == name) return isa;
    }
    return "";
}

std::string_view cpu_vector_isa() {
#if !defined(__x86_64__)
    return "";  // OpenBLAS's other architectures are not ranked here: nothing is said
#else
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return "avx512";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "avx2";
    if (__builtin_cpu_supports("avx")) return "avx";
    return "sse";
#endif
}

std::string blas_held_back_note(std::string_view blas_core, std::string_view cpu_isa, std::string_view coretype) {
    const std::string_view blas_isa = openblas_core_isa(blas_core);
    const std::size_t blas_rank = rank_of(blas_isa);
    const std::size_t cpu_rank = rank_of(cpu_isa);
    if (blas_isa.empty() || cpu_rank >= isa_order.size() || blas_rank >= cpu_rank) return "";
    const VectorIsa& blas = isa_order[blas_rank];
    const VectorIsa& cpu = isa_order[cpu_rank];
    const std::string cause = coretype.empty() ? std::string("OpenBLAS chose them for a CPU it may not know")
                                               : fmt::format("OPENBLAS_CORETYPE={} asks for them", coretype);
    std::string note = fmt::format("OpenBLAS runs its {} kernels ({}) on a CPU with {}, as {}: sgemm's FLOP/s, the "
                                   "uncached path's and the roofline's, are {}'s",
                                   blas_core, blas.display_name, cpu.display_name, cause, blas.display_name);
    // An OpenBLAS older than the CPU may fall back as far as SSE, which inflates every
    // uncached-over-cached ratio, and one variable lifts it. A host's own OPENBLAS_CORETYPE may be
    // there for correctness (docs/measuring.md): no advice then.
    if (coretype.empty()) note += fmt::format("; OPENBLAS_CORETYPE={} runs its {} kernels", cpu.oldest_core, cpu.display_name);
    return note;
}

}  // namespace kvbench
