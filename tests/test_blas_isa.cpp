// Whether OpenBLAS is held below the CPU's instruction set, and how the run says so; which
// matrix units the kernels use beside their instruction set.
#include "kernels/small_m_amx.hpp"

#include "kvbench/engine/blas.hpp"
#include "kvbench/engine/kernel_isa.hpp"
#include "kvbench/measure/blas_isa.hpp"
#include "kvbench/measure/environment.hpp"
#include "kvbench/report/report.hpp"
#include "kvbench/report/summary_tables.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <sstream>
#include <string>
#include <vector>

namespace kvbench {

TEST_CASE("openblas core types map to the instruction set of their kernels, in any case") {
    CHECK(openblas_core_isa("SkylakeX") == "avx512");
    CHECK(openblas_core_isa("COOPERLAKE") == "avx512");
    CHECK(openblas_core_isa("Haswell") == "avx2");
    CHECK(openblas_core_isa("zen") == "avx2");
    CHECK(openblas_core_isa("Sandybridge") == "avx");
    CHECK(openblas_core_isa("Nehalem") == "sse");
    CHECK(openblas_core_isa("Imaginary9000").empty());
}

TEST_CASE("a lower core than the CPU's is named, with OPENBLAS_CORETYPE as the cause or as the remedy") {
    const std::string forced = blas_held_back_note("Haswell", "avx512", "Haswell");
    CHECK(forced == "OpenBLAS runs its Haswell kernels (AVX2) on a CPU with AVX-512, as OPENBLAS_CORETYPE=Haswell "
                    "asks for them: sgemm's FLOP/s, the uncached path's and the roofline's, are AVX2's");
    const std::string chosen = blas_held_back_note("Zen", "avx512", "");
    CHECK(chosen.find("its Zen kernels (AVX2) on a CPU with AVX-512, as OpenBLAS chose them") != std::string::npos);
    CHECK(chosen.ends_with("; OPENBLAS_CORETYPE=SkylakeX runs its AVX-512 kernels"));
    CHECK(blas_held_back_note("Prescott", "avx2", "").ends_with("; OPENBLAS_CORETYPE=Haswell runs its AVX2 kernels"));
    // The host's choice is reported, not argued with: it may be what keeps an old OpenBLAS correct.
    CHECK(forced.find("runs its AVX-512") == std::string::npos);
    CHECK(blas_held_back_note("SkylakeX", "avx512", "").empty());   // the CPU's own
    CHECK(blas_held_back_note("Haswell", "avx2", "Haswell").empty());  // as wide as the CPU
    CHECK(blas_held_back_note("Mystery", "avx512", "").empty());     // unknown: nothing said
    CHECK(blas_held_back_note("Haswell", "", "").empty());           // not an x86-64 CPU
}

TEST_CASE("the environment records openblas's core and says when it holds the run back") {
    const Environment env = collect_environment();
    CHECK_FALSE(env.blas_core.empty());
    // As on a host that sets OPENBLAS_CORETYPE=Haswell on an AVX-512 CPU (the cause named), or
    // with an OpenBLAS older than the CPU and nothing set (the remedy named).
    if (!env.blas_held_back.empty()) {
        CHECK(env.blas_held_back.find("its " + env.blas_core + " kernels") != std::string::npos);
        CHECK((env.blas_held_back.find("as OPENBLAS_CORETYPE=") != std::string::npos) == !env.openblas_coretype.empty());
        CHECK((env.blas_held_back.find("; OPENBLAS_CORETYPE=") != std::string::npos) == env.openblas_coretype.empty());
    }
    std::ostringstream json;
    write_json(json, {}, env);
    const nlohmann::json parsed = nlohmann::json::parse(json.str());
    CHECK(parsed.at("environment").at("blas_core") == env.blas_core);
    CHECK(parsed.at("environment").at("blas_held_back").is_null() == env.blas_held_back.empty());
}

TEST_CASE("the run's header carries the held-back note as its own line") {
    Environment env;
    env.blas_held_back = blas_held_back_note("Haswell", "avx512", "Haswell");
    const std::vector<std::string> lines = run_description_lines({}, env);
    REQUIRE(lines.size() >= 5);
    CHECK(lines[4] == "note:    " + env.blas_held_back);
    env.blas_held_back.clear();
    CHECK(run_description_lines({}, env).size() == 4);
}

TEST_CASE("the environment names AMX's int8 tiles where int8 weights would run on them, in the JSON and the header") {
    const Environment env = collect_environment();
    // kernel_isa(), not tuning.hpp: this file is compiled without the kernels' -march, and would
    // read the portable row.
    const bool tiles_in_use = std::string(kernel_isa()) == "avx512" && amx_int8_usable();
    CHECK(env.kernel_tiles == (tiles_in_use ? "amx-int8" : ""));
    std::ostringstream json;
    write_json(json, {}, env);
    const nlohmann::json parsed = nlohmann::json::parse(json.str());
    CHECK(parsed.at("environment").at("kernel_tiles").is_null() == env.kernel_tiles.empty());

    Environment described;
    described.kernel_isa = "avx512";
    described.kernel_tiles = "amx-int8";
    CHECK(run_description_lines({}, described)[2].find("kernels avx512 + amx-int8)") != std::string::npos);
    described.kernel_tiles.clear();
    CHECK(run_description_lines({}, described)[2].find("kernels avx512)") != std::string::npos);
}

}  // namespace kvbench
