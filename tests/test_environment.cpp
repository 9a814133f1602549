// Environment: the provenance fields every result row carries.
#include "kvbench/measure/environment.hpp"


#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

namespace {

std::string env_or_empty(const char* name) {
    const char* value = std::getenv(name);
    return value == nullptr ? std::string() : std::string(value);
}

// What the build's KVBENCH_ARCH promises for the kernels, worked out apart from kernel_isa()'s
// macros: a named level fixes it, and native is the best this CPU runs.
std::string expected_kernel_isa() {
    const std::string arch = KVBENCH_ARCH_NAME;
    if (arch == "x86-64-v4") return "avx512";
    if (arch == "x86-64-v3") return "avx2+fma";
    if (arch == "x86-64-v2" || arch == "generic") return "portable";
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f")) return "avx512";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "avx2+fma";
#endif
    return "portable";
}

// A process environment of fixed contents, for read_openblas_variables.
const char* fake_openblas_environment(const char* name) {
    const std::string wanted = name;
    if (wanted == "OPENBLAS_CORETYPE") return "Haswell";
    if (wanted == "OPENBLAS_L2_SIZE") return "1048576";
    return "unrelated";
}
const char* empty_environment(const char*) { return nullptr; }

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
    CHECK(env.kernel_isa == expected_kernel_isa());
    const bool known_threading = env.blas_threading == "serial" || env.blas_threading == "pthread" ||
                                 env.blas_threading == "openmp";
    CHECK(known_threading);
}

#ifdef __linux__
TEST_CASE("on linux the caches come from sysfs where it lists them, from cpuid where it does not") {
    const kvbench::Environment env = kvbench::collect_environment();
    const std::size_t first_cpu = kvbench::affinity_cpus().front();
    const std::filesystem::path cache_dir =
        "/sys/devices/system/cpu/cpu" + std::to_string(first_cpu) + "/cache";
    bool sysfs_lists_caches = false;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(cache_dir, ec)) {
        sysfs_lists_caches = sysfs_lists_caches || entry.path().filename().string().rfind("index", 0) == 0;
    }
    if (sysfs_lists_caches) {
        CHECK(env.llc_bytes > 0);
        // The LLC is at least as large as a typical L1d, and is listed by level.
        CHECK(env.llc_bytes >= 16 * 1024);
        CHECK(env.cache_sizes.find("L1d ") != std::string::npos);
        CHECK(env.cache_sizes.find("iB") != std::string::npos);
        CHECK(env.cache_sizes.find("(cpuid)") == std::string::npos);
    } else {
        // CPUID's sizes are listed, but a hypervisor's L3 is no size to flush or fit by.
        CHECK(env.cache_sizes == kvbench::describe_cpuid_caches(kvbench::read_cpuid_caches()));
        CHECK(env.llc_bytes == 0);
        CHECK(env.llc_total_bytes == 0);
    }
}
#endif

TEST_CASE("cpuid's cache sizes are listed by level and say where they come from") {
    const kvbench::CpuidCaches three_levels{std::size_t{48} << 10, std::size_t{1} << 20, std::size_t{508} << 20};
    CHECK(kvbench::describe_cpuid_caches(three_levels) == "L1d 48 KiB, L2 1 MiB, L3 508 MiB (cpuid)");
    const kvbench::CpuidCaches no_l3{std::size_t{32} << 10, std::size_t{2} << 20, 0};
    CHECK(kvbench::describe_cpuid_caches(no_l3) == "L1d 32 KiB, L2 2 MiB (cpuid)");
    CHECK(kvbench::describe_cpuid_caches({}) == "unknown");
}

TEST_CASE("the timestamp is utc iso 8601 to the second") {
    const kvbench::Environment env = kvbench::collect_environment();
    const std::regex iso_utc(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z)");
    CHECK_MESSAGE(std::regex_match(env.timestamp, iso_utc), env.timestamp);
}

TEST_CASE("openblas variables are copied from the process environment, empty when unset") {
    const kvbench::OpenblasVariables set = kvbench::read_openblas_variables(fake_openblas_environment);
    CHECK(set.coretype == "Haswell");
    CHECK(set.l2_size == "1048576");
    const kvbench::OpenblasVariables unset = kvbench::read_openblas_variables(empty_environment);
    CHECK(unset.coretype.empty());
    CHECK(unset.l2_size.empty());
    // The run's own environment goes the same way (whatever the host sets).
    const kvbench::Environment env = kvbench::collect_environment();
    CHECK(env.openblas_coretype == env_or_empty("OPENBLAS_CORETYPE"));
    CHECK(env.openblas_l2_size == env_or_empty("OPENBLAS_L2_SIZE"));
}

TEST_CASE("the huge-page mode is the bracketed word of the kernel's setting") {
    CHECK(kvbench::selected_hugepage_mode("always [madvise] never") == "madvise");
    CHECK(kvbench::selected_hugepage_mode("[always] madvise never") == "always");
    CHECK(kvbench::selected_hugepage_mode("always madvise [never]") == "never");
    CHECK(kvbench::selected_hugepage_mode("") == "");  // no such file: a kernel without THP
    CHECK(kvbench::selected_hugepage_mode("always [madvise never") == "");
}

TEST_CASE("a debug build is never reported as optimized") {
    CHECK(kvbench::is_optimized_build(true, "Release"));
    CHECK(kvbench::is_optimized_build(true, "RelWithDebInfo"));
    CHECK_FALSE(kvbench::is_optimized_build(true, "Debug"));
    CHECK_FALSE(kvbench::is_optimized_build(false, "Release"));  // -O0 or a sanitizer, whatever the name
    // This build: the tests are compiled with the library's flags.
    const kvbench::Environment env = kvbench::collect_environment();
#if defined(__OPTIMIZE__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    CHECK(env.optimized_build == (env.build_type != "Debug"));
#else
    CHECK_FALSE(env.optimized_build);
#endif
}

namespace {

// A fake /sys/devices/system/cpu: per CPU an L1d, an L2 of its own, and an L3 given by the caller.
class FakeCpuTree {
public:
    FakeCpuTree() {
        static int counter = 0;
        root_ = std::filesystem::temp_directory_path() /
                ("kvbench_test_cpus_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
    }
    FakeCpuTree(const FakeCpuTree&) = delete;
    FakeCpuTree& operator=(const FakeCpuTree&) = delete;
    ~FakeCpuTree() {
        std::error_code ignored;
        std::filesystem::remove_all(root_, ignored);
    }

    // l3_id empty: no id file, as older kernels write, so shared_cpu_list names the instance.
    void add_cpu(std::size_t cpu, const std::string& l3_size, const std::string& l3_id,
                 const std::string& l3_shared_cpus) {
        const auto dir = root_ / ("cpu" + std::to_string(cpu)) / "cache";
        write_index(dir / "index0", "1", "Data", "48K", std::to_string(cpu), std::to_string(cpu));
        write_index(dir / "index1", "1", "Instruction", "32K", std::to_string(cpu), std::to_string(cpu));
        write_index(dir / "index2", "2", "Unified", "2048K", std::to_string(cpu), std::to_string(cpu));
        write_index(dir / "index3", "3", "Unified", l3_size, l3_id, l3_shared_cpus);
    }
    const std::filesystem::path& root() const { return root_; }

private:
    static void write_index(const std::filesystem::path& dir, const std::string& level, const std::string& type,
                            const std::string& size, const std::string& id, const std::string& shared_cpus) {
        std::filesystem::create_directories(dir);
        std::ofstream(dir / "level") << level << '\n';
        std::ofstream(dir / "type") << type << '\n';
        std::ofstream(dir / "size") << size << '\n';
        std::ofstream(dir / "shared_cpu_list") << shared_cpus << '\n';
        if (!id.empty()) std::ofstream(dir / "id") << id << '\n';
    }

    std::filesystem::path root_;
};

}  // namespace

TEST_CASE("every l3 the cpus reach counts once, not cpu0's alone") {
    FakeCpuTree tree;  // two core complexes of two CPUs, 32 MiB of L3 each
    tree.add_cpu(0, "32768K", "0", "0-1");
    tree.add_cpu(1, "32768K", "0", "0-1");
    tree.add_cpu(2, "32768K", "1", "2-3");
    tree.add_cpu(3, "32768K", "1", "2-3");
    const kvbench::LastLevelCaches all = kvbench::read_last_level_caches(tree.root(), {0, 1, 2, 3});
    CHECK(all.level == 3);
    CHECK(all.n_instances == 2);
    CHECK(all.total_bytes == std::size_t{64} << 20);
    CHECK(all.largest_bytes == std::size_t{32} << 20);
    // An affinity mask inside one complex reaches one L3.
    const kvbench::LastLevelCaches one = kvbench::read_last_level_caches(tree.root(), {2, 3});
    CHECK(one.n_instances == 1);
    CHECK(one.total_bytes == std::size_t{32} << 20);
}

TEST_CASE("without id files, cpus that list the same sharers share one l3") {
    FakeCpuTree tree;
    tree.add_cpu(0, "16M", "", "0,2");
    tree.add_cpu(1, "8M", "", "1");
    tree.add_cpu(2, "16M", "", "0,2");
    const kvbench::LastLevelCaches llc = kvbench::read_last_level_caches(tree.root(), {0, 1, 2, 7});
    CHECK(llc.n_instances == 2);
    CHECK(llc.total_bytes == std::size_t{24} << 20);
    CHECK(llc.largest_bytes == std::size_t{16} << 20);
}

TEST_CASE("cpus without cache information give an unknown llc") {
    FakeCpuTree tree;
    const kvbench::LastLevelCaches llc = kvbench::read_last_level_caches(tree.root(), {0});
    CHECK(llc.n_instances == 0);
    CHECK(llc.total_bytes == 0);
}

TEST_CASE("the affinity mask names at least one cpu and the environment sums its llcs") {
    CHECK_FALSE(kvbench::affinity_cpus().empty());
    const kvbench::Environment env = kvbench::collect_environment();
    CHECK(env.llc_total_bytes >= env.llc_bytes);
    if (env.llc_bytes > 0) CHECK(env.n_llc_instances >= 1);
}
