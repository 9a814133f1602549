// kvbench's entry point: parse, dispatch to a subcommand, map exceptions to exit codes.
#include "roofline_command.hpp"
#include "sweep_command.hpp"
#include "sweep_options.hpp"

#include "kvbench/config.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <exception>
#include <new>

namespace {

constexpr int exit_usage = 2;
constexpr int exit_failure = 1;

constexpr const char* overview = R"(Quick start:
  kvbench sweep                  MHA vs GQA vs MQA, cached vs uncached, N = 128..4096 (about a minute)
  kvbench roofline               measure this machine's peak GB/s and GFLOP/s once; sweeps then show roofline %
  kvbench sweep --help           every axis, output format and option

Exit status: 0 success, 1 runtime failure or --verify mismatch, 2 bad usage, 130 interrupted.)";

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"kvbench: what a KV cache does to transformer decoding, measured on this machine"};
    app.set_version_flag("-V,--version", fmt::format("kvbench {} ({})", KVBENCH_VERSION, KVBENCH_GIT_COMMIT));
    app.footer(overview);
    app.require_subcommand(0, 1);

    kvbench::SweepCliOptions sweep_options;
    CLI::App* sweep = kvbench::add_sweep_command(app, sweep_options);
    kvbench::RooflineCliOptions roofline_options;
    CLI::App* roofline = kvbench::add_roofline_command(app, roofline_options);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
        return app.exit(error);
    }

    try {
        if (sweep->parsed()) return kvbench::run_sweep_command(sweep_options);
        if (roofline->parsed()) return kvbench::run_roofline_command(roofline_options);
        fmt::print("{}", app.help());
        return 0;
    } catch (const kvbench::ConfigError& error) {
        fmt::print(stderr, "kvbench: error: {}\n", error.what());
        return exit_usage;
    } catch (const std::bad_alloc&) {
        fmt::print(stderr, "kvbench: error: out of memory; lower --seq, --batch or --dim, or set --max-memory\n");
        return exit_failure;
    } catch (const std::exception& error) {
        fmt::print(stderr, "kvbench: error: {}\n", error.what());
        return exit_failure;
    }
}
