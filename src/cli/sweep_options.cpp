// Registration of `kvbench sweep`'s flags and the checks that turn them into a SweepPlan.
#include "cli/sweep_options.hpp"

#include "kvbench/engine/blas.hpp"
#include "cli/value_list.hpp"

#include <fmt/format.h>

#include <map>

namespace kvbench {

namespace {

constexpr const char* sweep_examples = R"(Examples:
  kvbench sweep                                   MHA vs GQA-4 vs MQA at D=1024, H=16, N=128..4096
  kvbench sweep -n 1024 -d 1024 --heads 16 -g 4   one configuration, both paths
  kvbench sweep -n 512-8192*2 -g 32,8,1 -d 4096 --heads 32 --paths cached
  kvbench sweep -b 1,8 -n 1024 --verify           check cached == uncached at every point
  kvbench sweep --dry-run -n 1,8,128-1024*2       list the grid, its FLOPs and memory; run nothing
  kvbench sweep --format csv -o results/run.csv   tables on the terminal, CSV in the file

Axis values: a list 1,4,16; a geometric range 128-4096*2; an arithmetic range 64-256+64; or a mix.)";

}  // namespace

CLI::App* add_sweep_command(CLI::App& app, SweepCliOptions& options) {
    CLI::App* sweep = app.add_subcommand("sweep", "Measure the cached and uncached decode step over a grid");
    sweep->footer(sweep_examples);

    sweep->add_option("-n,--seq", options.seq, "Context lengths N (positions attended, the new one included)")
        ->capture_default_str();
    sweep->add_option("-b,--batch", options.batch, "Batch sizes B")->capture_default_str();
    sweep->add_option("-d,--dim", options.dim, "Model dimensions D")->capture_default_str();
    sweep->add_option("--heads", options.heads, "Query heads H (must divide D)")->capture_default_str();
    sweep->add_option("-g,--kv-heads", options.kv_heads,
                      "KV heads G (must divide H): G=H is MHA, G=1 MQA, between GQA")
        ->capture_default_str();
    sweep->add_option("-l,--layers", options.layers, "Stacked attention layers L")->capture_default_str();
    sweep->add_option("-t,--threads", options.threads, "Compute threads (default: all cores)");
    sweep->add_option("--paths", options.paths, "Decode paths to time")
        ->delimiter(',')
        ->check(CLI::IsMember({"cached", "uncached"}))
        ->capture_default_str();
    sweep->add_option("-r,--reps", options.n_reps, "Timed repetitions per point and path")
        ->check(CLI::Range(1, 1000000))
        ->capture_default_str();
    sweep->add_option("-w,--warmup", options.n_warmup, "Untimed repetitions before timing")
        ->check(CLI::Range(0, 1000000))
        ->capture_default_str();
    sweep->add_option("--cache-state", options.cache_state,
                      "cold: evict the last-level cache before each repetition; warm: do not")
        ->check(CLI::IsMember({"cold", "warm"}))
        ->capture_default_str();
    sweep->add_option("--flush", options.flush,
                      "How cold is made cold: clflush evicts the step's own buffers from every cache "
                      "(default on x86-64); stream writes and reads a buffer of 4x the LLCs")
        ->check(CLI::IsMember({"clflush", "stream"}));
    sweep->add_option("--seed", options.seed, "Seed of weights and inputs")->capture_default_str();
    sweep->add_flag("--verify", options.verify,
                    "Check at every point that the cached step equals the uncached forward (SPEC 1e-4)");
    sweep->add_flag("--dry-run", options.dry_run,
                    "List the grid with FLOPs, KV bytes, peak memory and estimated time; run nothing");
    sweep->add_option("-f,--format", options.format, "Output format: table, csv, json or md")
        ->check(CLI::IsMember({"table", "csv", "json", "md"}))
        ->capture_default_str();
    sweep->add_option("-o,--output", options.output,
                      "Write the report to FILE (whole or not at all); the terminal still shows tables");
    sweep->add_option("--max-memory", options.max_memory,
                      "Refuse points needing more than this (e.g. 8GiB; default: available memory)")
        ->transform(CLI::AsSizeValue(false));
    sweep->add_option("--roofline", options.roofline,
                      "Roofline JSON from `kvbench roofline` (default: the saved one for the thread count, "
                      "measured quickly on the first run)")
        ->check(CLI::ExistingFile);
    sweep->add_flag("--measure-roofline", options.measure_roofline,
                    "Measure the roofline first (a few seconds per thread count) and save it: "
                    "on a shared machine, bandwidth drifts")
        ->excludes("--roofline");
    sweep->add_flag("--no-roofline", options.no_roofline,
                    "Run without a roofline: no roofline %, no first-run measurement, no bandwidth drift check")
        ->excludes("--roofline")
        ->excludes("--measure-roofline");
    return sweep;
}

SweepPlan to_sweep_plan(const SweepCliOptions& options) {
    SweepSpec spec;
    spec.seq = parse_value_list(options.seq, "--seq");
    spec.batch = parse_value_list(options.batch, "--batch");
    spec.dim = parse_value_list(options.dim, "--dim");
    spec.heads = parse_value_list(options.heads, "--heads");
    spec.kv_heads = parse_value_list(options.kv_heads, "--kv-heads");
    spec.layers = parse_value_list(options.layers, "--layers");
    spec.threads = options.threads.empty() ? std::vector<std::size_t>{available_cores()}
                                           : parse_value_list(options.threads, "--threads", 1024);

    SweepPlan plan;
    plan.grid = expand(spec);
    plan.run.run_cached = false;
    plan.run.run_uncached = false;
    for (const std::string& path : options.paths) {
        (path == "cached" ? plan.run.run_cached : plan.run.run_uncached) = true;
    }
    if (!plan.run.run_cached && !plan.run.run_uncached) {
        throw ConfigError("--paths must name cached, uncached or both");
    }
    plan.run.n_reps = options.n_reps;
    plan.run.n_warmup = options.n_warmup;
    plan.run.cold_cache = options.cache_state == "cold";
    if (options.flush == "clflush" && !clflush_supported()) {
        throw ConfigError("--flush clflush needs an x86-64 CPU; use --flush stream");
    }
    plan.flush = options.flush == "stream" || !clflush_supported() ? FlushMethod::stream : FlushMethod::clflush;
    plan.run.verify = options.verify;
    plan.run.seed = options.seed;
    const std::map<std::string, OutputFormat> formats{{"table", OutputFormat::table},
                                                      {"csv", OutputFormat::csv},
                                                      {"json", OutputFormat::json},
                                                      {"md", OutputFormat::md}};
    plan.format = formats.at(options.format);
    if (!options.output.empty()) plan.output = options.output;
    if (options.max_memory == 0) throw ConfigError("--max-memory 0 must be at least 1 byte (e.g. 8GiB)");
    if (options.max_memory != SweepCliOptions::not_given) plan.max_memory = options.max_memory;
    if (!options.roofline.empty()) plan.roofline = options.roofline;
    plan.measure_roofline = options.measure_roofline;
    plan.no_roofline = options.no_roofline;
    plan.dry_run = options.dry_run;
    return plan;
}

}  // namespace kvbench
