// kvbench's entry point: parse, dispatch to a subcommand, map exceptions to exit codes.
#include "cli/command_line.hpp"
#include "cli/compare_command.hpp"
#include "cli/exit_status.hpp"
#include "cli/generate_command.hpp"
#include "cli/history_command.hpp"
#include "cli/hardware_command.hpp"
#include "cli/help_command.hpp"
#include "cli/memory_command.hpp"
#include "cli/merge_command.hpp"
#include "cli/models_command.hpp"
#include "cli/plan_command.hpp"
#include "cli/reload_command.hpp"
#include "cli/roofline_command.hpp"
#include "cli/sweep_command.hpp"
#include "cli/sweep_options.hpp"

#include "cli/help_formatter.hpp"
#include "cli/parse_errors.hpp"
#include "kvbench/engine/config.hpp"
#include "kvbench_git_commit.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <memory>
#include <new>
#include <string>
#include <vector>

namespace {

using kvbench::exit_failure;
using kvbench::exit_usage;

constexpr const char* overview = R"(Quick start:
  kvbench sweep             MHA vs GQA vs MQA, cached vs uncached decode,
                            N = 128..4096: about 20 s on 2 cores
  kvbench sweep --dry-run   the grid and its estimated time; nothing measured
  kvbench roofline          this machine's peak GB/s and GFLOP/s, measured
                            once; sweeps then show roofline %
  kvbench generate          a prompt's prefill, then 128 new tokens, step by
                            step, cached vs uncached
  kvbench memory --model llama-3-8b --seq 8192 --budget 24GiB
                            a real model's KV-cache bill, and what fits
  kvbench plan --model llama-3-70b --hardware h100-sxm --tp 8 --tpot 50ms
      --efficiency 0.8      the largest batch and context within 50 ms a
                            token, predicted at 80 % of the device's roofline
                            (or --calibrate run.csv: a sweep of this machine)
  kvbench compare BASE NEW  two result files row by row: faster, slower or
                            the same within noise, and by how much (a 95 %
                            interval); exit 1 on a slowdown
  kvbench sweep --db results.sqlite    add the run to a results database
  kvbench history --db results.sqlite -n 1024 -g 4
                            a point's latency across commits and machines
  kvbench sweep --shard 2/4 -o s2.json, then kvbench merge s*.json -o all.json
                            one grid over four machines
  kvbench sweep --help      every axis, output format and option (or
                            kvbench help sweep)

Exit status: 0 success; 1 a point or the --verify check failed, or a report
could not be written; 2 bad usage (nothing is run); 128 + the signal when
stopped: 130 Ctrl-C (SIGINT), 143 SIGTERM, 129 SIGHUP.)";

// Output that never reached stdout (a full disk, a closed pipe, > /dev/full) is a failure, not a
// success: flushes stdout and turns a write error into exit status 1 with one line saying so.
int finish_stdout(int exit_code) {
    std::cout.flush();
    errno = 0;  // so that the reason below is this flush's, not an older call's
    if (std::fflush(stdout) == 0 && std::ferror(stdout) == 0 && std::cout.good()) return exit_code;
    // errno is the flush's reason; an earlier write's failure left only the stream's error flag.
    const int error = errno;
    fmt::print(stderr, "kvbench: error: cannot write to standard output: {}\n",
               error != 0 ? std::strerror(error) : "a write failed (disk full, or the reader gone?)");
    return exit_code == 0 ? exit_failure : exit_code;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"kvbench: what a KV cache does to transformer decoding, measured on this machine"};
    app.set_version_flag("-V,--version", fmt::format("kvbench {} ({})", KVBENCH_VERSION, KVBENCH_GIT_COMMIT));
    app.formatter(std::make_shared<kvbench::HelpFormatter>());  // before the subcommands, which copy it
    app.footer(overview);
    app.require_subcommand(0, 1);

    kvbench::SweepCliOptions sweep_options;
    CLI::App* sweep = kvbench::add_sweep_command(app, sweep_options);
    kvbench::RooflineCliOptions roofline_options;
    CLI::App* roofline = kvbench::add_roofline_command(app, roofline_options);
    kvbench::GenerateCliOptions generate_options;
    CLI::App* generate = kvbench::add_generate_command(app, generate_options);
    kvbench::MemoryCliOptions memory_options;
    CLI::App* memory = kvbench::add_memory_command(app, memory_options);
    kvbench::ModelsCliOptions models_options;
    CLI::App* models = kvbench::add_models_command(app, models_options);
    kvbench::PlanCliOptions plan_options;
    CLI::App* plan = kvbench::add_plan_command(app, plan_options);
    kvbench::ReloadCliOptions reload_options;
    CLI::App* reload = kvbench::add_reload_command(app, reload_options);
    kvbench::HardwareCliOptions hardware_options;
    CLI::App* hardware = kvbench::add_hardware_command(app, hardware_options);
    kvbench::CompareCliOptions compare_options;
    CLI::App* compare = kvbench::add_compare_command(app, compare_options);
    kvbench::HistoryCliOptions history_options;
    CLI::App* history = kvbench::add_history_command(app, history_options);
    kvbench::MergeCliOptions merge_options;
    CLI::App* merge = kvbench::add_merge_command(app, merge_options);
    std::string help_topic;
    CLI::App* help = kvbench::add_help_command(app, help_topic);

    kvbench::record_command_line(argc, argv);  // for the reports' command_line column
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
        // Help and version are "errors" that exit 0 and print to stdout.
        if (error.get_exit_code() == 0) return finish_stdout(app.exit(error));
        const CLI::App* command = app.get_subcommands().empty() ? nullptr : app.get_subcommands().front();
        const std::vector<std::string> args(argv + 1, argv + argc);
        fmt::print(stderr, "kvbench: error: {}; see kvbench{} --help\n",
                   kvbench::without_library_tags(kvbench::describe_parse_error(app, error, args)),
                   command ? " " + command->get_name() : "");
        return exit_usage;
    }

    try {
        if (sweep->parsed()) return finish_stdout(kvbench::run_sweep_command(sweep_options));
        if (roofline->parsed()) return finish_stdout(kvbench::run_roofline_command(roofline_options));
        if (generate->parsed()) return finish_stdout(kvbench::run_generate_command(generate_options));
        if (memory->parsed()) return finish_stdout(kvbench::run_memory_command(memory_options));
        if (models->parsed()) return finish_stdout(kvbench::run_models_command(models_options));
        if (plan->parsed()) return finish_stdout(kvbench::run_plan_command(plan_options));
        if (reload->parsed()) return finish_stdout(kvbench::run_reload_command(reload_options));
        if (hardware->parsed()) return finish_stdout(kvbench::run_hardware_command(hardware_options));
        if (compare->parsed()) return finish_stdout(kvbench::run_compare_command(compare_options));
        if (history->parsed()) return finish_stdout(kvbench::run_history_command(history_options));
        if (merge->parsed()) return finish_stdout(kvbench::run_merge_command(merge_options));
        if (help->parsed()) return finish_stdout(kvbench::run_help_command(app, help_topic));
        fmt::print("{}", app.help());
        return finish_stdout(0);
    } catch (const kvbench::ConfigError& error) {
        fmt::print(stderr, "kvbench: error: {}\n", kvbench::without_library_tags(error.what()));
        return exit_usage;
    } catch (const std::bad_alloc&) {
        fmt::print(stderr, "kvbench: error: out of memory; lower --seq, --batch or --dim, or set --max-memory\n");
        return exit_failure;
    } catch (const std::exception& error) {
        fmt::print(stderr, "kvbench: error: {}\n", kvbench::without_library_tags(error.what()));
        return exit_failure;
    }
}
