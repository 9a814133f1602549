// The `kvbench roofline` subcommand: options, measurement, summary and saved JSON.
#include "cli/roofline_command.hpp"

#include "kvbench/engine/blas.hpp"
#include "kvbench/measure/environment.hpp"
#include "kvbench/measure/roofline.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <stdexcept>

namespace kvbench {

CLI::App* add_roofline_command(CLI::App& app, RooflineCliOptions& options) {
    CLI::App* command = app.add_subcommand(
        "roofline", "Measure peak memory read bandwidth and fp32 sgemm FLOP/s, and save them for roofline_pct");
    options.n_threads = available_cores();
    command->add_option("-t,--threads", options.n_threads, "Compute threads to measure with")
        ->check(CLI::Range(1, 1024))
        ->capture_default_str();
    command->add_option_function<std::string>(
        "-o,--output", [&options](const std::string& path) { options.output = path; },
        "JSON file to write (default: roofline-t<threads>.json in $KVBENCH_ROOFLINE_DIR, "
        "$XDG_CACHE_HOME/kvbench or ~/.cache/kvbench)");
    command->add_option("--reps", options.n_reps, "Timed repetitions of each measurement; the best is kept")
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
    command->add_option("--buffer-mib", options.buffer_mib,
                        "MiB read per bandwidth repetition (0: 32, evicted by clflush before each "
                        "pass; 4 x the LLCs, at least 256, where clflush is missing)")
        ->check(CLI::Range(0, 1 << 20))
        ->capture_default_str();
    command->add_option("--sgemm-dim", options.sgemm_dim, "Side of the square sgemm timed for peak FLOP/s")
        ->check(CLI::Range(64, 16384))
        ->capture_default_str();
    return command;
}

int run_roofline_command(const RooflineCliOptions& options) {
    std::filesystem::path path;
    if (options.output) {
        path = *options.output;
        // Checked before measuring, so a typo costs nothing but this message.
        const std::filesystem::path dir = path.parent_path().empty() ? "." : path.parent_path();
        if (!std::filesystem::is_directory(dir)) {
            throw std::runtime_error(fmt::format("--output {}: directory '{}' does not exist (create it first)",
                                                 path.string(), dir.string()));
        }
    } else {
        path = default_roofline_path(options.n_threads);
        // Only the default location is ours to create; a mistyped --output directory is an error.
        std::filesystem::create_directories(path.parent_path());
    }

    const Environment env = collect_environment();
    if (!env.optimized_build) {
        fmt::print(stderr,
                   "kvbench: warning: this is a {} build without full optimization; its roofline is not the "
                   "machine's (rebuild with -DCMAKE_BUILD_TYPE=Release)\n",
                   env.build_type);
    }
    fmt::print(stderr, "kvbench: measuring read bandwidth and sgemm peak on {} thread{}...\n", options.n_threads,
               options.n_threads == 1 ? "" : "s");

    RooflineOptions measure_options;
    measure_options.bandwidth_buffer_bytes = options.buffer_mib << 20;
    measure_options.sgemm_dim = options.sgemm_dim;
    measure_options.n_reps = options.n_reps;
    const Roofline roofline = measure_roofline(options.n_threads, measure_options);
    save_roofline(path, roofline);

    const double buffer_mib = static_cast<double>(roofline.bandwidth_buffer_bytes) / static_cast<double>(1 << 20);
    const std::string coretype = env.openblas_coretype.empty() ? "unset" : env.openblas_coretype;
    fmt::print("CPU          {}\n", roofline.cpu_model);
    fmt::print("caches       {}\n", env.cache_sizes);
    fmt::print("threads      {} of {} cores\n", roofline.n_threads, env.n_cores);
    fmt::print("BLAS         {} ({}, OPENBLAS_CORETYPE={})\n", roofline.blas_library, env.blas_threading, coretype);
    fmt::print("peak read    {:8.1f} GB/s      sum over {:.0f} MiB{}, best of {}\n", roofline.peak_gbps, buffer_mib,
               roofline.bandwidth_method == "clflush" ? " evicted from every cache by clflush" : "", roofline.n_reps);
    fmt::print("peak fp32    {:8.1f} GFLOP/s   sgemm {}x{}x{}, best of {}\n", roofline.peak_gflops,
               roofline.sgemm_dim, roofline.sgemm_dim, roofline.sgemm_dim, roofline.n_reps);
    fmt::print("ridge point  {:8.1f} FLOP/byte\n", roofline.peak_gflops / roofline.peak_gbps);
    fmt::print("saved to     {}\n", path.string());
    return 0;
}

}  // namespace kvbench
