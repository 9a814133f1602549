// Environment: the provenance fields every result row carries.
#include "kvbench/measure/environment.hpp"

#include "kvbench/engine/kernel_isa.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <regex>
#include <string>

namespace {

std::string env_or_empty(const char* name) {
    const char* value = std::getenv(name);
    return value == nullptr ? std::string() : std::string(value);
}

}  // namespace

TEST_CASE("the environment names the build, the machine and the blas") {
    const kvbench::Environment env = kvbench::collect_environment();
    CHECK_FALSE(env.tool_version.empty());
    CHECK_FALSE(env.git_commit.empty());
    CHECK_FALSE(env.build_type.empty());
    CHECK_FALSE(env.compiler.empty());
    CHECK_FALSE(env.cpu_model.empty());
    CHECK_FALSE(env.cache_sizes.empty());
    CHECK_FALSE(env.blas_library.empty());
    CHECK(env.n_cores >= 1);
    CHECK(env.kernel_isa == kvbench::kernel_isa());
    const bool known_threading = env.blas_threading == "serial" || env.blas_threading == "pthread" ||
                                 env.blas_threading == "openmp";
    CHECK(known_threading);
}

#ifdef __linux__
TEST_CASE("on linux the last-level cache size is read from sysfs and listed") {
    const kvbench::Environment env = kvbench::collect_environment();
    CHECK(env.llc_bytes > 0);
    // The LLC is at least as large as a typical L1d, and is listed by level.
    CHECK(env.llc_bytes >= 16 * 1024);
    CHECK(env.cache_sizes.find("L1d ") != std::string::npos);
    CHECK(env.cache_sizes.find("iB") != std::string::npos);
}
#endif

TEST_CASE("the timestamp is utc iso 8601 to the second") {
    const kvbench::Environment env = kvbench::collect_environment();
    const std::regex iso_utc(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z)");
    CHECK_MESSAGE(std::regex_match(env.timestamp, iso_utc), env.timestamp);
}

TEST_CASE("openblas variables are copied from the process environment, empty when unset") {
    const kvbench::Environment env = kvbench::collect_environment();
    CHECK(env.openblas_coretype == env_or_empty("OPENBLAS_CORETYPE"));
    CHECK(env.openblas_l2_size == env_or_empty("OPENBLAS_L2_SIZE"));
}

TEST_CASE("a debug build is never reported as optimized") {
    const kvbench::Environment env = kvbench::collect_environment();
    if (env.build_type == "Debug") CHECK_FALSE(env.optimized_build);
#if !defined(__OPTIMIZE__)
    CHECK_FALSE(env.optimized_build);
#endif
}
