// Registration of `kvbench generate`'s flags and the checks that turn them into a GeneratePlan.
#include "cli/generate_options.hpp"

#include "cli/attention_options.hpp"
#include "cli/layer_options.hpp"
#include "cli/model_options.hpp"
#include "cli/grid_guard.hpp"
#include "cli/kv_block_option.hpp"
#include "cli/kv_dtype_option.hpp"
#include "cli/option_conventions.hpp"
#include "cli/roofline_options.hpp"
#include "cli/shared_prefix_option.hpp"
#include "cli/value_list.hpp"
#include "kvbench/engine/blas.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>


namespace kvbench {

namespace {

constexpr const char* generate_examples = R"(Examples:
  kvbench generate                          P=512, T=128: MHA vs GQA-4 vs MQA
                                            at D=1024, H=16
  kvbench generate -p 64 --new 32 --verify  cached == uncached at every step
  kvbench generate -p 2K --new 256 --paths cached
                                            a long generation, the cache alone
  kvbench generate -o gen.csv               one CSV row per step in the file
  kvbench generate -p 256 --new 1K --fit-from 512
                                            fit the growth law where N is large
  kvbench generate -p 8K --dry-run          the cost and time of a long one
  kvbench generate -b 8 --prompt-lens 200,4K --paths cached
                                            requests with different prompts

Step 0 is the prefill (context P): its time is the time to first token. Steps
1..T decode at N = P+1 .. P+T. Lists and suffixes as in `kvbench sweep --help`
(-g 16 -g 1 is -g 16,1; 2K = 2048).

Exit status: 0 ok; 1 a step or a write failed; 2 bad usage; 128 + the signal
that stopped it: 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP.)";

// One row per step in csv, json, jsonl and the results database (sql, sqlite); the table is the
// terminal's summary only.
const OutputFormats& generate_formats() {
    static const OutputFormats formats{OutputFormat::table, OutputFormat::csv, OutputFormat::json,
                                       OutputFormat::jsonl, OutputFormat::sql, OutputFormat::sqlite};
    return formats;
}

}  // namespace

CLI::App* add_generate_command(CLI::App& app, GenerateCliOptions& options) {
    CLI::App* generate =
        app.add_subcommand("generate", "Time a whole generation: a prompt's prefill, then one token per step");
    generate->footer(generate_examples);

    CLI::Option* prompt =
        generate->add_option("-p,--prompt", options.prompt, "Prompt length P: positions the prefill reads")
            ->type_name("N")
            ->capture_default_str();
    generate
        ->add_option("--prompt-lens", options.prompt_lens,
                     "A ragged batch in place of --prompt: each sequence's own prompt, a pattern repeated over the "
                     "batch (--prompt-lens 200,4000 -b 8: four of each; B a multiple of its length); every step "
                     "adds one token to each sequence")
        ->type_name("N1,N2,...")
        ->excludes(prompt);
    generate->add_option("--new", options.n_new, "New tokens T: decode steps after the prefill")
        ->type_name("N")
        ->capture_default_str();
    list_option(*generate, "-b,--batch", options.batch, "Batch sizes B");
    add_shared_prefix_option(*generate, options.shared_prefix, "the shortest prompt P");
    list_option(*generate, "-d,--dim", options.dim, "Model dimensions D");
    list_option(*generate, "--heads", options.heads, "Query heads H (each must divide D, unless --head-dim is given)");
    list_option(*generate, "--head-dim", options.head_dim, "Head dimensions dh, when not D/H (Gemma-7B: 256 at D=3072)");
    list_option(*generate, "-g,--kv-heads", options.kv_heads,
                "KV heads G (each must divide H): G=H is MHA, G=1 MQA, between GQA");
    list_option(*generate, "-l,--layers", options.layers, "Stacked layers L (attention blocks or full layers, --block)");
    list_option(*generate, "--kv-dtype", options.kv_dtype, kv_dtype_help);
    list_option(*generate, "--kv-block", options.kv_block, kv_block_help);
    add_attention_options(*generate, options.attention);
    add_layer_options(*generate, options.layer);
    add_latent_options(*generate, options.latent);
    add_model_options(*generate, options.dim, options.heads, options.kv_heads, options.layers, options.head_dim,
                      options.model_note, options.model, &options.latent.model);
    list_option(*generate, "-t,--threads", options.threads,
                "Compute threads T (default: $OMP_NUM_THREADS if set, else all cores)");
    list_option(*generate, "--paths", options.paths, "Decode paths to time: cached, uncached or both");
    generate->add_option("--cache-state", options.cache_state,
                         "cold: evict the last-level cache before each step; warm: do not")
        ->type_name("cold|warm")
        ->capture_default_str();
    generate->add_option("--seed", options.seed, "Seed of weights and the input sequence")
        ->type_name("N")
        ->capture_default_str();
    generate->add_flag("--verify", options.verify,
                       "Check at every step that the cached output equals the uncached forward's (1e-4)");
    generate->add_flag("-y,--yes", options.yes,
                       "Run a grid of more than 200 configurations or an estimated hour (refused without it)");
    generate->add_flag("--dry-run", options.dry_run,
                       "List the configurations with the generation's FLOPs, memory and estimated time; run "
                       "nothing. With -o or -f, the list in that format (csv, json, jsonl) for scripts");
    add_roofline_options(*generate, options.roofline, options.measure_roofline, options.no_roofline,
                         "the saved one for the thread count, if any; a generation measures none itself",
                         "no roofline %, and the saved one is not read");
    add_output_options(generate, options.out, generate_formats(), false);
    add_verbose_option(generate, options.out);
    add_database_options(generate, options.out);
    generate->add_option("--fit-from", options.fit_from,
                         "Fit the growth law a*N^k only over steps with N >= this (default: every decode step)")
        ->type_name("N");
    generate->add_option("--time-unit", options.time_unit,
                         "Unit of the tables' times: auto (per column, from its values), ns, us, ms or s")
        ->type_name("UNIT")
        ->capture_default_str();
    return generate;
}

GeneratePlan to_generate_plan(const GenerateCliOptions& options) {
    GeneratePlan plan;
    constexpr std::size_t max_tokens = std::size_t{1} << 24;
    plan.generation.prompt_len = parse_count(options.prompt, "--prompt", 1, max_tokens);
    plan.generation.n_new = parse_count(options.n_new, "--new", 1, max_tokens);

    SweepSpec spec;
    spec.batch = parse_value_list(options.batch, "--batch");
    if (options.prompt_lens) {
        const std::string& text = *options.prompt_lens;
        for (std::size_t at = 0; at <= text.size();) {
            const std::size_t end = std::min(text.find(',', at), text.size());
            plan.prompt_lens.push_back(parse_count(std::string_view(text).substr(at, end - at), "--prompt-lens", 1, max_tokens));
            at = end + 1;
        }
        for (const std::size_t batch : spec.batch) {
            if (batch % plan.prompt_lens.size() != 0) {
                throw ConfigError(fmt::format("--prompt-lens has {} values, which do not divide --batch {}: the pattern "
                                              "repeats over the batch (give a batch of a multiple of {})",
                                              plan.prompt_lens.size(), batch, plan.prompt_lens.size()));
            }
        }
        // The prefill runs to the longest prompt; the generation's steps are the longest sequence's.
        plan.generation.prompt_len = *std::max_element(plan.prompt_lens.begin(), plan.prompt_lens.end());
        for (const std::size_t prompt_len : plan.prompt_lens) {
            spec.seq_lens.push_back(static_cast<std::uint32_t>(prompt_len + plan.generation.n_new));
        }
    }
    spec.seq = {plan.generation.prompt_len + plan.generation.n_new};
    spec.dim = parse_value_list(options.dim, "--dim");
    spec.heads = parse_value_list(options.heads, "--heads");
    if (options.head_dim) spec.head_dim = parse_value_list(*options.head_dim, "--head-dim");
    spec.kv_heads = parse_value_list(options.kv_heads, "--kv-heads");
    spec.layers = parse_value_list(options.layers, "--layers", max_layers);
    spec.kv_dtypes = parse_stored_kv_dtypes(options.kv_dtype);
    spec.kv_blocks = parse_kv_blocks(options.kv_block);
    if (options.shared_prefix) {
        spec.shared_prefixes.clear();
        // The prefix is every prompt's beginning, so a percentage is of the shortest prompt and
        // every decode step's new token is each sequence's own.
        const std::size_t shortest =
            plan.prompt_lens.empty() ? plan.generation.prompt_len
                                     : *std::min_element(plan.prompt_lens.begin(), plan.prompt_lens.end());
        const std::string prompt = plan.prompt_lens.empty() ? fmt::format("--prompt {}", shortest)
                                                            : fmt::format("the shortest of --prompt-lens, {}", shortest);
        for (const SharedPrefixLength& prefix : parse_shared_prefixes(*options.shared_prefix)) {
            const std::size_t positions = prefix.positions_at(shortest);
            if (positions >= shortest) {
                throw ConfigError(fmt::format("--shared-prefix {} must be less than {}: the shared positions "
                                              "are the prompt's first ones (try --shared-prefix {})",
                                              positions, prompt, shortest / 2));
            }
            spec.shared_prefixes.push_back({positions, false});
        }
    }
    apply_layer_options(options.layer, options.model, spec);
    apply_attention_options(options.attention, spec);
    apply_latent_options(options.latent, spec);
    spec.threads = options.threads ? parse_value_list(*options.threads, "--threads", 1024)
                                   : std::vector<std::size_t>{default_thread_count()};
    plan.grid = expand(spec);
    plan.yes = options.yes;
    plan.dry_run = options.dry_run;
    plan.likely_intent = likely_grid_intent({{"-b", options.batch}, {"-d", options.dim}, {"--heads", options.heads},
                                             {"-g", options.kv_heads}, {"-l", options.layers},
                                             {"-t", options.threads.value_or("")}});

    const DecodePaths paths = parse_paths(options.paths, "--paths");
    plan.generation.run_cached = paths.cached;
    plan.generation.run_uncached = paths.uncached;
    if (options.verify && !(plan.generation.run_cached && plan.generation.run_uncached)) {
        throw ConfigError("--verify compares the two paths: it needs --paths cached,uncached");
    }
    plan.generation.cold_cache = parse_choice(options.cache_state, "--cache-state", {"cold", "warm"}) == "cold";
    plan.generation.verify = options.verify;
    plan.generation.seed = parse_whole_number(options.seed, "--seed", 0, ~std::uint64_t{0});
    plan.table.time_unit = parse_time_unit(parse_choice(options.time_unit, "--time-unit", {"auto", "ns", "us", "ms", "s"}));
    const std::size_t last_context = plan.generation.prompt_len + plan.generation.n_new;
    const std::size_t fit_from = options.fit_from ? parse_count(*options.fit_from, "--fit-from", 1, std::size_t{1} << 30) : 0;
    if (fit_from > last_context) {
        throw ConfigError(fmt::format("--fit-from {} is beyond the last step's context P+T = {}: nothing to fit",
                                      *options.fit_from, last_context));
    }
    plan.fit_from = fit_from;
    plan.measure_roofline = options.measure_roofline;
    plan.no_roofline = options.no_roofline;
    // The files last: the output check creates (and removes) a file.
    if (options.roofline) plan.roofline = load_given_roofline(*options.roofline);
    plan.out = to_output_plan(options.out, generate_formats(), false);
    return plan;
}

}  // namespace kvbench
