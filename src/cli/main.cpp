// kvbench's entry point: parse, dispatch to a subcommand, map exceptions to exit codes.
#include "cli/compare_command.hpp"
#include "cli/generate_command.hpp"
#include "cli/roofline_command.hpp"
#include "cli/sweep_command.hpp"
#include "cli/sweep_options.hpp"

#include "kvbench/engine/config.hpp"
#include "kvbench_git_commit.hpp"
#include "cli/suggest.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <new>

namespace {

constexpr int exit_usage = 2;
constexpr int exit_failure = 1;

constexpr const char* overview = R"(Quick start:
  kvbench sweep                  MHA vs GQA vs MQA, cached vs uncached, N = 128..4096 (about a minute)
  kvbench roofline               measure this machine's peak GB/s and GFLOP/s once; sweeps then show roofline %
  kvbench sweep --help           every axis, output format and option
  kvbench generate               a prompt's prefill then 128 tokens, cached vs uncached, step by step
  kvbench compare BASE NEW       two result files row by row: faster, slower or same within noise

Exit status: 0 success, 1 runtime failure or --verify mismatch, 2 bad usage, 130 interrupted.)";

// Names a mistyped option or subcommand could have meant, from the command that was parsing it.
std::vector<std::string> known_names(const CLI::App& command, bool option) {
    std::vector<std::string> names;
    if (option) {
        for (const CLI::Option* opt : command.get_options()) {
            for (const std::string& name : opt->get_lnames()) names.push_back("--" + name);
            for (const std::string& name : opt->get_snames()) names.push_back("-" + name);
        }
    } else {
        for (const CLI::App* sub : command.get_subcommands({})) names.push_back(sub->get_name());
    }
    return names;
}

// CLI11's message on one line, prefixed like every kvbench error, with a suggestion for a typo.
int report_parse_error(const CLI::App& app, const CLI::ParseError& error) {
    std::string message = error.what();
    if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) {
        const CLI::App* command = &app;
        for (const CLI::App* sub : app.get_subcommands()) command = sub;
        for (const std::string& extra : command->remaining()) {
            const bool is_option = !extra.empty() && extra.front() == '-';
            const std::string typed = extra.substr(0, extra.find('='));
            if (auto hint = kvbench::closest_name(typed, known_names(*command, is_option))) {
                message = fmt::format("unknown {} '{}' (did you mean {}?)",
                                      is_option ? "option" : "command", typed, *hint);
                break;
            }
        }
    }
    fmt::print(stderr, "kvbench: error: {}; see kvbench{} --help\n", message,
               app.get_subcommands().empty() ? "" : " " + app.get_subcommands().front()->get_name());
    return exit_usage;
}

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
    app.footer(overview);
    app.require_subcommand(0, 1);

    kvbench::SweepCliOptions sweep_options;
    CLI::App* sweep = kvbench::add_sweep_command(app, sweep_options);
    kvbench::RooflineCliOptions roofline_options;
    CLI::App* roofline = kvbench::add_roofline_command(app, roofline_options);
    kvbench::GenerateCliOptions generate_options;
    CLI::App* generate = kvbench::add_generate_command(app, generate_options);
    kvbench::CompareCliOptions compare_options;
    CLI::App* compare = kvbench::add_compare_command(app, compare_options);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
        // Help and version are "errors" that exit 0 and print to stdout.
        if (error.get_exit_code() == 0) return finish_stdout(app.exit(error));
        return report_parse_error(app, error);
    }

    try {
        if (sweep->parsed()) return finish_stdout(kvbench::run_sweep_command(sweep_options));
        if (roofline->parsed()) return finish_stdout(kvbench::run_roofline_command(roofline_options));
        if (generate->parsed()) return finish_stdout(kvbench::run_generate_command(generate_options));
        if (compare->parsed()) return finish_stdout(kvbench::run_compare_command(compare_options));
        fmt::print("{}", app.help());
        return finish_stdout(0);
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
