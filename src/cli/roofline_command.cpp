// `kvbench roofline` as named steps: plan, environment (run context), measure and save each thread count, summary.
#include "cli/roofline_command.hpp"

#include "cli/command_line.hpp"
#include "cli/option_conventions.hpp"
#include "cli/output_options.hpp"
#include "cli/output_streams.hpp"
#include "cli/value_list.hpp"
#include "kvbench/engine/ascii_case.hpp"
#include "kvbench/engine/blas.hpp"
#include "kvbench/engine/config.hpp"
#include "kvbench/measure/environment.hpp"
#include "kvbench/measure/roofline.hpp"
#include "kvbench/measure/run_context.hpp"
#include "kvbench/report/units.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <stdexcept>
#include <system_error>
#include <vector>

namespace kvbench {

namespace {

struct RooflinePlan {
    std::vector<std::size_t> threads;
    std::vector<std::filesystem::path> paths;  // one per thread count
    RooflineOptions measure;
};

// A roofline is always JSON, so -o follows the sweep's rule that the extension names the format:
// x.csv holding JSON would mislead whoever opens it, and a name without an extension says nothing.
void check_json_extension(const std::filesystem::path& path) {
    if (lowercase(path.extension().string()) == ".json") return;
    std::filesystem::path renamed = path;
    renamed.replace_extension(".json");
    throw ConfigError(fmt::format("-o {}: a roofline is written as JSON, so the name must end in .json (e.g. -o {})",
                                  path.string(), renamed.string()));
}

RooflinePlan to_roofline_plan(const RooflineCliOptions& options) {
    RooflinePlan plan;
    plan.threads = options.threads ? parse_value_list(*options.threads, "--threads", 1024)
                                   : std::vector<std::size_t>{default_thread_count()};
    plan.measure.n_reps = static_cast<std::size_t>(parse_whole_number(options.n_reps, "--reps", 1, 1000));
    plan.measure.bandwidth_buffer_bytes =
        static_cast<std::size_t>(parse_whole_number(options.buffer_mib, "--buffer-mib", 0, 1 << 20)) << 20;
    plan.measure.sgemm_dim = static_cast<std::size_t>(parse_whole_number(options.sgemm_dim, "--sgemm-dim", 64, 16384));
    if (options.output) {
        if (plan.threads.size() > 1) {
            throw ConfigError(fmt::format("-o names one file but --threads gives {}: drop -o to save each "
                                          "in the default place, or give one thread count",
                                          plural(plan.threads.size(), "thread count")));
        }
        const std::filesystem::path path = *options.output;
        // Checked before measuring (a directory, a missing one, no permission), so a typo costs
        // nothing but this message.
        check_output_file(path.string(), "-o", fmt::format("roofline-t{}.json", plan.threads.front()));
        check_json_extension(path);
        plan.paths.push_back(path);
    } else {
        for (const std::size_t n_threads : plan.threads) plan.paths.push_back(default_roofline_path(n_threads));
    }
    return plan;
}

// The default place checked before measuring, as -o is: created if missing (a save would create
// it), then a file there must be writable, or a second of measurement ends in an error. A dry
// run creates nothing: a missing directory passes when its nearest existing ancestor is one.
void check_default_paths(const RooflinePlan& plan, const RooflineCliOptions& options) {
    if (options.output) return;
    for (const std::filesystem::path& path : plan.paths) {
        std::error_code error;
        if (options.dry_run) {
            std::filesystem::path ancestor = path.parent_path();
            while (!ancestor.empty() && !std::filesystem::exists(ancestor, error)) ancestor = ancestor.parent_path();
            if (ancestor.empty() || std::filesystem::is_directory(ancestor, error)) {
                if (ancestor == path.parent_path()) check_output_file(path.string(), "KVBENCH_ROOFLINE_DIR", path.filename().string());
                continue;
            }
            error = std::make_error_code(std::errc::not_a_directory);
        } else {
            std::filesystem::create_directories(path.parent_path(), error);
        }
        if (error) {
            throw ConfigError(fmt::format("cannot save the roofline in {}: {} (set KVBENCH_ROOFLINE_DIR to a directory "
                                          "you can write to, or give -o FILE)",
                                          path.parent_path().string(), error.message()));
        }
        check_output_file(path.string(), "KVBENCH_ROOFLINE_DIR", path.filename().string());
    }
}

// The probe's buffer is held while it is read: refused, before measuring, when the machine has
// not that much memory free.
void check_buffer_memory(const RooflinePlan& plan) {
    const MemoryLimit limit = memory_limit(std::nullopt);
    if (!limit.bytes || plan.measure.bandwidth_buffer_bytes <= *limit.bytes) return;
    throw ConfigError(fmt::format("--buffer-mib {}: the probe's buffer is more than {} ({})",
                                  plan.measure.bandwidth_buffer_bytes >> 20, limit.name, format_bytes(*limit.bytes)));
}

void measure_one(std::size_t n_threads, const std::filesystem::path& path, const RooflineOptions& measure_options,
                 const Environment& env) {
    fmt::print(stderr, "kvbench: measuring read bandwidth and sgemm peak on {}...\n", plural(n_threads, "thread"));
    // Creates the default location; a mistyped --output directory was refused by to_roofline_plan.
    const Roofline roofline = measure_and_save_roofline(n_threads, measure_options, path);

    const double buffer_mib = static_cast<double>(roofline.bandwidth_buffer_bytes) / static_cast<double>(1 << 20);
    const std::string coretype = env.openblas_coretype.empty() ? "unset" : env.openblas_coretype;
    fmt::print("CPU          {}\n", roofline.cpu_model);
    fmt::print("caches       {}\n", env.cache_sizes);
    fmt::print("threads      {} of {} cores\n", roofline.n_threads, env.n_cores);
    fmt::print("BLAS         {} ({}, OPENBLAS_CORETYPE={})\n", roofline.blas_library, env.blas_threading, coretype);
    fmt::print("peak read    {:8.1f} GB/s      sum over {:.0f} MiB{}, best of {}\n", roofline.peak_gbps, buffer_mib,
               roofline.bandwidth_method == "clflush" ? " evicted from every cache by clflush" : "", roofline.n_reps);
    fmt::print("pages        2 MiB huge pages advised (transparent_hugepage={})\n",
               env.transparent_hugepage.empty() ? "unknown" : env.transparent_hugepage);
    fmt::print("peak fp32    {:8.1f} GFLOP/s   sgemm {}x{}x{}, best of {}\n", roofline.peak_gflops,
               roofline.sgemm_dim, roofline.sgemm_dim, roofline.sgemm_dim, roofline.n_reps);
    fmt::print("ridge point  {:8.1f} FLOP/byte\n", roofline.peak_gflops / roofline.peak_gbps);
    if (!env.blas_held_back.empty()) fmt::print("note         {}\n", env.blas_held_back);
    fmt::print("saved to     {}\n", path.string());
}

}  // namespace

CLI::App* add_roofline_command(CLI::App& app, RooflineCliOptions& options) {
    CLI::App* command = app.add_subcommand(
        "roofline", "Measure peak memory read bandwidth and fp32 sgemm FLOP/s, and save them: a sweep's roofline % is the least time they allow for a step's FLOPs and bytes, over its median");
    command->footer(R"(Examples:
  kvbench roofline              measure on the default thread count and save
  kvbench roofline -t 1,2       one measurement (and file) per thread count
  kvbench roofline --dry-run    where each measurement would be saved)");
    list_option(*command, "-t,--threads", options.threads,
                "Compute threads to measure with, a list as in sweep (default: $OMP_NUM_THREADS if set, "
                "else all cores)");
    command->add_option_function<std::string>(
        "-o,--output", [&options](const std::string& path) { options.output = path; },
        "JSON file to write, named *.json (default: roofline-t<threads>.json in $KVBENCH_ROOFLINE_DIR, "
        "$XDG_CACHE_HOME/kvbench or ~/.cache/kvbench)")
        ->type_name("FILE");
    command->add_option("--reps", options.n_reps, "Timed repetitions of each measurement, 1 to 1000; the best is kept")
        ->type_name("N")
        ->capture_default_str();
    command->add_option("--buffer-mib", options.buffer_mib,
                        "MiB read per bandwidth repetition (0: 32, evicted by clflush before each "
                        "pass; 4 x the LLCs, at least 256, where clflush is missing)")
        ->type_name("N")
        ->capture_default_str();
    command->add_option("--sgemm-dim", options.sgemm_dim,
                        "Side of the square sgemm timed for peak FLOP/s, 64 to 16384")
        ->type_name("N")
        ->capture_default_str();
    command->add_flag("--dry-run", options.dry_run, "Say what would be measured and where it would be saved");
    return command;
}

int run_roofline_command(const RooflineCliOptions& options) {
    const RooflinePlan plan = to_roofline_plan(options);
    check_default_paths(plan, options);
    check_buffer_memory(plan);
    if (options.dry_run) {
        for (std::size_t i = 0; i < plan.threads.size(); ++i) {
            fmt::print("would measure on {} and save to {}\n", plural(plan.threads[i], "thread"),
                       plan.paths[i].string());
        }
        return 0;
    }
    const Environment env = collect_run_environment(command_line(), "its roofline is not the machine's", cli_messages());
    for (std::size_t i = 0; i < plan.threads.size(); ++i) measure_one(plan.threads[i], plan.paths[i], plan.measure, env);
    return 0;
}

}  // namespace kvbench
