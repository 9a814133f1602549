// Registration of `kvbench generate`'s flags and the checks that turn them into a GeneratePlan.
#include "cli/generate_options.hpp"

#include "cli/value_list.hpp"
#include "kvbench/engine/blas.hpp"

#include <fmt/format.h>

#include <map>

namespace kvbench {

namespace {

constexpr const char* generate_examples = R"(Examples:
  kvbench generate                                  P=512, T=128: MHA vs GQA-4 vs MQA at D=1024, H=16
  kvbench generate --prompt 64 --new 32 --verify    check cached == uncached at every step
  kvbench generate -p 2048 --new 256 --paths cached long generations: the cache alone
  kvbench generate --format csv -o results/gen.csv  tables on the terminal, one CSV row per step in the file
  kvbench generate -p 256 --new 1024 --fit-from 512 fit the growth law where N is large

Step 0 is the prefill (context P): its time is the time to first token. Steps 1..T decode at N = P+1 .. P+T.)";

}  // namespace

CLI::App* add_generate_command(CLI::App& app, GenerateCliOptions& options) {
    CLI::App* generate =
        app.add_subcommand("generate", "Time a whole generation: a prompt's prefill, then one token per step");
    generate->footer(generate_examples);

    generate->add_option("-p,--prompt", options.prompt, "Prompt length P: positions the prefill reads")
        ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 24))
        ->capture_default_str();
    generate->add_option("--new", options.n_new, "New tokens T: decode steps after the prefill")
        ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 24))
        ->capture_default_str();
    generate->add_option("-b,--batch", options.batch, "Batch sizes B")->capture_default_str();
    generate->add_option("-d,--dim", options.dim, "Model dimensions D")->capture_default_str();
    generate->add_option("--heads", options.heads, "Query heads H (must divide D)")->capture_default_str();
    generate->add_option("-g,--kv-heads", options.kv_heads,
                         "KV heads G (must divide H): G=H is MHA, G=1 MQA, between GQA")
        ->capture_default_str();
    generate->add_option("-l,--layers", options.layers, "Stacked attention layers L")->capture_default_str();
    generate->add_option("-t,--threads", options.threads, "Compute threads (default: all cores)");
    generate->add_option("--paths", options.paths, "Decode paths to time")
        ->delimiter(',')
        ->check(CLI::IsMember({"cached", "uncached"}))
        ->capture_default_str();
    generate->add_option("--cache-state", options.cache_state,
                         "cold: evict the last-level cache before each step; warm: do not")
        ->check(CLI::IsMember({"cold", "warm"}))
        ->capture_default_str();
    generate->add_option("--seed", options.seed, "Seed of weights and the input sequence")->capture_default_str();
    generate->add_flag("--verify", options.verify,
                       "Check at every step that the cached output equals the uncached forward's (1e-4)");
    generate->add_option("-f,--format", options.format, "Output format: table, csv or json (csv/json: one row per step)")
        ->check(CLI::IsMember({"table", "csv", "json"}))
        ->capture_default_str();
    generate->add_option("-o,--output", options.output,
                         "Write the per-step report to FILE (whole or not at all); the terminal still shows tables");
    generate->add_option("--fit-from", options.fit_from,
                         "Fit the growth law a*N^k only over steps with N >= this (default: every decode step)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 30));
    generate->add_option("--time-unit", options.time_unit,
                         "Unit of the tables' times: auto (per column, from its values), ns, us, ms or s")
        ->check(CLI::IsMember({"auto", "ns", "us", "ms", "s"}))
        ->capture_default_str();
    return generate;
}

GeneratePlan to_generate_plan(const GenerateCliOptions& options) {
    GeneratePlan plan;
    plan.generation.prompt_len = options.prompt;
    plan.generation.n_new = options.n_new;

    SweepSpec spec;
    spec.seq = {options.prompt + options.n_new};
    spec.batch = parse_value_list(options.batch, "--batch");
    spec.dim = parse_value_list(options.dim, "--dim");
    spec.heads = parse_value_list(options.heads, "--heads");
    spec.kv_heads = parse_value_list(options.kv_heads, "--kv-heads");
    spec.layers = parse_value_list(options.layers, "--layers");
    spec.threads = options.threads.empty() ? std::vector<std::size_t>{available_cores()}
                                           : parse_value_list(options.threads, "--threads", 1024);
    plan.grid = expand(spec);

    plan.generation.run_cached = false;
    plan.generation.run_uncached = false;
    for (const std::string& path : options.paths) {
        (path == "cached" ? plan.generation.run_cached : plan.generation.run_uncached) = true;
    }
    if (!plan.generation.run_cached && !plan.generation.run_uncached) {
        throw ConfigError("--paths must name cached, uncached or both");
    }
    if (options.verify && !(plan.generation.run_cached && plan.generation.run_uncached)) {
        throw ConfigError("--verify compares the two paths: it needs --paths cached,uncached");
    }
    plan.generation.cold_cache = options.cache_state == "cold";
    plan.generation.verify = options.verify;
    plan.generation.seed = options.seed;
    const std::map<std::string, OutputFormat> formats{
        {"table", OutputFormat::table}, {"csv", OutputFormat::csv}, {"json", OutputFormat::json}};
    plan.format = formats.at(options.format);
    plan.table.time_unit = parse_time_unit(options.time_unit);
    if (!options.output.empty()) {
        if (plan.format == OutputFormat::table) {
            throw ConfigError("-o writes one row per step: give --format csv or --format json with it");
        }
        plan.output = options.output;
    }
    const std::size_t last_context = options.prompt + options.n_new;
    if (options.fit_from > last_context) {
        throw ConfigError(fmt::format("--fit-from {} is beyond the last step's context P+T = {}: nothing to fit",
                                      options.fit_from, last_context));
    }
    plan.fit_from = options.fit_from;
    return plan;
}

}  // namespace kvbench
