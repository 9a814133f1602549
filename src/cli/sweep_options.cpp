// Registration of `kvbench sweep`'s flags and the checks that turn them into a SweepPlan.
#include "cli/sweep_options.hpp"

#include "kvbench/engine/blas.hpp"
#include "cli/byte_units.hpp"
#include "cli/attention_options.hpp"
#include "cli/layer_options.hpp"
#include "cli/model_options.hpp"
#include "cli/grid_guard.hpp"
#include "cli/kv_block_option.hpp"
#include "cli/kv_dtype_option.hpp"
#include "cli/option_conventions.hpp"
#include "cli/roofline_options.hpp"
#include "cli/value_list.hpp"

#include <fmt/format.h>

#include <charconv>
#include <stdexcept>
#include <string_view>

namespace kvbench {

namespace {

constexpr const char* sweep_examples = R"(Axes: -n -b -d --heads -g -l -t each take a list, and repeat: -n 128 -n 256
is -n 128,256. A list mixes values 1,4,16, geometric ranges 128-4096*2 and
arithmetic ranges 64-256+64. Numbers take binary suffixes, as a bare unit of
--max-memory does: K = 1024, M = 1024^2, G = 1024^3 (also k, Ki, Mi, Gi), so
-n 4K is 4096 (a "4K context") and -n 1K-32K*2 is 1024..32768. A grid above
200 points or an estimated hour needs --yes. -t defaults to $OMP_NUM_THREADS
when it is set.

Examples:
  kvbench sweep                         MHA vs GQA-4 vs MQA, D=1024, H=16,
                                        N = 128..4096
  kvbench sweep --dry-run -n 1K-32K*2   the grid, memory and time; no run
  kvbench sweep -n 1024 -g 4            one configuration, both paths
  kvbench sweep -n 512-8K*2 -d 4096 --heads 32 -g 32,8,1 --paths cached
  kvbench sweep -b 1,8 -n 1024 --verify check cached == uncached everywhere
  kvbench sweep -t 1 -t 2 -n 2K         the same points on 1 and 2 threads
  kvbench sweep -o run.csv              tables on the terminal, CSV in a file
  kvbench sweep -q -o - -f jsonl        one JSON line per row, as it finishes

Exit status: 0 ok; 1 a point or a write failed; 2 bad usage; 128 + the signal
that stopped it: 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP.)";

// "0.2s", "200ms" or "0.2" (seconds), from 1 ms to an hour.
double parse_min_time(const std::string& text) {
    const std::string_view view(text);
    double value = 0;
    const auto [end, error] = std::from_chars(view.data(), view.data() + view.size(), value);
    const std::string_view unit(end, static_cast<std::size_t>(view.data() + view.size() - end));
    const double scale = unit == "ms" ? 1e-3 : (unit == "s" || unit.empty()) ? 1.0 : 0.0;
    const double seconds = value * scale;
    if (error != std::errc() || scale == 0 || !(seconds >= 1e-3 && seconds <= 3600)) {
        throw ConfigError(fmt::format("--min-time {}: must be a duration from 1ms to 3600s, such as 0.2s or 200ms",
                                      text));
    }
    return seconds;
}

#ifdef NDEBUG
constexpr bool check_by_default = false;
#else
constexpr bool check_by_default = true;  // a Debug build is for finding bugs, not for timing
#endif

// Most repetitions (timed or warm-up) one point may ask for: a guard against typos.
constexpr std::uint64_t max_repetitions = 1000000;

// Most shards of one grid: far beyond any fleet, a guard against typos.
constexpr std::size_t max_shards = 10000;

// Keeps the points of plan.shard, and the weights the split used, for the shard's message.
void keep_shard_points(SweepPlan& plan) {
    plan.n_grid_points = plan.grid.points.size();
    if (!plan.shard) return;
    const Shard& shard = *plan.shard;
    if (shard.count > plan.n_grid_points) {
        throw ConfigError(fmt::format("--shard {}: the grid has {} points, so {} of the {} shards would be empty: use "
                                      "at most {} shards (--shard K/{})",
                                      shard_label(shard), plan.n_grid_points, shard.count - plan.n_grid_points,
                                      shard.count, plan.n_grid_points, plan.n_grid_points));
    }
    const std::vector<double> weights = shard_weights(plan.grid.points, plan.run);
    std::vector<GridPoint> kept;
    for (const std::size_t i : shard_point_indices(weights, shard)) {
        kept.push_back(plan.grid.points[i]);
        plan.shard_weight_seconds += weights[i];
    }
    for (const double weight : weights) plan.grid_weight_seconds += weight;
    plan.grid.points = std::move(kept);
}

}  // namespace

Shard parse_shard(const std::string& text) {
    const std::size_t slash = text.find('/');
    const auto number = [&](std::string_view digits, std::size_t& value) {
        const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
        return !digits.empty() && error == std::errc() && end == digits.data() + digits.size();
    };
    Shard shard;
    const std::string_view view(text);
    if (slash == std::string::npos || !number(view.substr(0, slash), shard.index) ||
        !number(view.substr(slash + 1), shard.count)) {
        throw ConfigError(fmt::format("--shard {}: write K/N, shard K of N counted from 1 (e.g. --shard 2/4)", text));
    }
    if (shard.count < 1 || shard.count > max_shards || shard.index < 1 || shard.index > shard.count) {
        throw ConfigError(fmt::format("--shard {}: K must be from 1 to N, and N from 1 to {} (the shards of four "
                                      "are 1/4, 2/4, 3/4 and 4/4)",
                                      text, max_shards));
    }
    return shard;
}

bool resumable_output(const OutputPlan& out) {
    return out.file && (out.format == OutputFormat::csv || out.format == OutputFormat::json ||
                        out.format == OutputFormat::jsonl);
}

CLI::App* add_sweep_command(CLI::App& app, SweepCliOptions& options) {
    CLI::App* sweep = app.add_subcommand("sweep", "Measure the cached and uncached decode step over a grid");
    sweep->footer(sweep_examples);

    list_option(*sweep, "-n,--seq", options.seq,
                "Context lengths N: positions attended, the new token's included");
    list_option(*sweep, "-b,--batch", options.batch, "Batch sizes B");
    add_ragged_options(*sweep, options.ragged);
    add_shared_prefix_option(*sweep, options.shared_prefix, "the shortest context N");
    list_option(*sweep, "-d,--dim", options.dim, "Model dimensions D");
    list_option(*sweep, "--heads", options.heads, "Query heads H (each must divide D, unless --head-dim is given)");
    list_option(*sweep, "--head-dim", options.head_dim, "Head dimensions dh, when not D/H (Gemma-7B: 256 at D=3072)");
    list_option(*sweep, "-g,--kv-heads", options.kv_heads,
                "KV heads G (each must divide H): G=H is MHA, G=1 MQA, between GQA");
    list_option(*sweep, "-l,--layers", options.layers, "Stacked layers L (attention blocks or full layers, --block)");
    list_option(*sweep, "--kv-dtype", options.kv_dtype, kv_dtype_help);
    list_option(*sweep, "--kv-block", options.kv_block, kv_block_help);
    add_attention_options(*sweep, options.attention);
    add_layer_options(*sweep, options.layer);
    add_latent_options(*sweep, options.latent);
    add_model_options(*sweep, options.dim, options.heads, options.kv_heads, options.layers, options.head_dim,
                      options.model_note, options.model, &options.latent.model);
    list_option(*sweep, "-t,--threads", options.threads,
                "Compute threads T (default: $OMP_NUM_THREADS if set, else all cores)");
    list_option(*sweep, "--paths", options.paths, "Decode paths to time: cached, uncached or both");
    sweep->add_option("-r,--reps", options.n_reps,
                      "Timed repetitions per point and path, exactly (default: adaptive, see --min-time)")
        ->type_name("N");
    sweep->add_option("--min-time", options.min_time,
                      "Without --reps, time each path of a point for at least this long (e.g. 0.5s, 200ms), "
                      "evictions included, with 5 to 1000 repetitions; warm-up then stops after one "
                      "repetition once it has taken half of it")
        ->type_name("TIME")
        ->capture_default_str()
        ->excludes("--reps");
    sweep->add_option("-w,--warmup", options.n_warmup, "Untimed repetitions before timing (at most, without --reps)")
        ->type_name("N")
        ->capture_default_str();
    sweep->add_flag("--interleave", options.interleave,
                    "Measure in rounds: every point once per round, in a shuffled order (from --seed), so a "
                    "host's drift hits every point alike. Points stay allocated between rounds while they fit "
                    "in the memory budget (--max-memory, else available memory); past it, the least recently "
                    "used are freed and rebuilt (prefill, warm-up) at their next turn. With a warm cache, each "
                    "timed repetition follows an untimed one of the same step");
    sweep->add_flag("--resume", options.resume,
                    "Read -o (csv, json or jsonl) and skip the points it already holds from this build with the same "
                    "settings (B, N, D, H, G, L, T, cache state, repetition policy); the file keeps every "
                    "finished point, so an interrupted sweep continues where it stopped");
    sweep->add_option("--cache-state", options.cache_state,
                      "cold: evict the last-level cache before each repetition; warm: do not")
        ->type_name("cold|warm")
        ->capture_default_str();
    sweep->add_option("--flush", options.flush,
                      "How cold is made cold: clflush evicts the step's own buffers from every cache "
                      "(default on x86-64); stream writes and reads a buffer of 4x the LLCs")
        ->type_name("clflush|stream");
    sweep->add_option("--seed", options.seed, "Seed of weights and inputs")->type_name("N")->capture_default_str();
    sweep->add_flag("--verify", options.verify,
                    "Check at every point that the cached step equals the uncached forward (relative error below 1e-4)");
    sweep->add_flag("--check", options.check,
                    "Before timing a point, compare each fast kernel with its naive twin on the point's data "
                    "(always on in Debug builds)");
    sweep->add_flag("--dry-run", options.dry_run,
                    "List the grid with FLOPs, KV bytes, peak memory and estimated time; run nothing. "
                    "With -o or -f, the list in that format (csv, json, ...) for scripts");
    sweep->add_flag("-y,--yes", options.yes,
                    "Run a grid of more than 200 points or an estimated hour (refused without it)");
    add_output_options(sweep, options.out, all_output_formats());
    add_verbose_option(sweep, options.out);
    add_database_options(sweep, options.out);
    sweep->add_option("--max-memory", options.max_memory,
                      "Refuse points needing more than this: 8GiB or 8G = 8·2^30 bytes (IEC), 8GB = 8·10^9 "
                      "(SI) (default: available memory)")
        ->type_name("SIZE");
    add_roofline_options(*sweep, options.roofline, options.measure_roofline, options.no_roofline,
                         "the saved one for the thread count, measured quickly on the first run",
                         "no roofline %, no first-run measurement, no bandwidth drift check");
    sweep->add_option("--progress", options.progress,
                      "Progress on stderr: bar (one line), jsonl (one JSON object per event: point_started, "
                      "point_finished, point_failed, sweep_finished), none; auto: bar on a terminal, else none")
        ->type_name("auto|bar|jsonl|none")
        ->capture_default_str();
    sweep->add_option("--shard", options.shard,
                      "Run shard K of N: a share of the grid balanced by estimated time, the same on every "
                      "machine, so N machines run the whole grid; `kvbench merge` joins their reports "
                      "(docs/sharding.md)")
        ->type_name("K/N");
    sweep->add_option("--time-unit", options.time_unit,
                      "Unit of the tables' times: auto (per column, from its values), ns, us, ms or s")
        ->type_name("UNIT")
        ->capture_default_str();
    return sweep;
}

namespace {

// The cached path's own axes, swept with --paths uncached alone: the uncached forward keeps no
// cache and takes one new token, so each value would time the same forward again.
void refuse_cached_path_axes(const SweepSpec& spec, const SweepCliOptions& options) {
    const auto refuse = [](std::string_view option, std::string_view text, std::string_view what) {
        throw ConfigError(fmt::format("{} {}: --paths uncached measures no {} (the uncached forward keeps no cache "
                                      "and takes one new token); add cached to --paths or leave {} out",
                                      option, text, what, option));
    };
    if (spec.kv_dtypes != std::vector<KvDtypePair>{KvDtype::f32}) refuse("--kv-dtype", options.kv_dtype, "cache type");
    if (spec.kv_blocks != std::vector<std::size_t>{0}) refuse("--kv-block", options.kv_block, "paged cache");
    if (spec.query_tokens != std::vector<std::size_t>{1}) {
        refuse("--query-tokens", options.ragged.query_tokens.value_or(""), "multi-token query");
    }
    if (spec.shared_prefixes != std::vector<SharedPrefixLength>{SharedPrefixLength{}}) {
        refuse("--shared-prefix", options.shared_prefix.value_or(""), "shared prefix");
    }
}

}  // namespace

SweepPlan to_sweep_plan(const SweepCliOptions& options) {
    SweepSpec spec;
    spec.seq = parse_value_list(options.seq, "--seq");
    spec.batch = parse_value_list(options.batch, "--batch");
    spec.dim = parse_value_list(options.dim, "--dim");
    spec.heads = parse_value_list(options.heads, "--heads");
    if (options.head_dim) spec.head_dim = parse_value_list(*options.head_dim, "--head-dim");
    spec.kv_heads = parse_value_list(options.kv_heads, "--kv-heads");
    spec.layers = parse_value_list(options.layers, "--layers", max_layers);
    spec.kv_dtypes = parse_stored_kv_dtypes(options.kv_dtype);
    spec.kv_blocks = parse_kv_blocks(options.kv_block);
    apply_layer_options(options.layer, options.model, spec);
    apply_attention_options(options.attention, spec);
    const std::optional<std::string> latent_note = apply_latent_options(options.latent, spec);
    spec.threads = options.threads ? parse_value_list(*options.threads, "--threads", 1024)
                                   : std::vector<std::size_t>{default_thread_count()};
    // 0: --reps not given, the count adapts to --min-time.
    const std::uint64_t n_reps = options.n_reps ? parse_whole_number(*options.n_reps, "--reps", 1, max_repetitions) : 0;
    const std::uint64_t n_warmup = parse_whole_number(options.n_warmup, "--warmup", 0, max_repetitions);
    const std::uint64_t seed = parse_whole_number(options.seed, "--seed", 0, ~std::uint64_t{0});
    apply_ragged_options(options.ragged, seed, spec);
    if (options.shared_prefix) spec.shared_prefixes = parse_shared_prefixes(*options.shared_prefix);
    std::optional<std::uint64_t> max_memory;
    if (options.max_memory) max_memory = parse_byte_size(*options.max_memory, "--max-memory");

    SweepPlan plan;
    plan.grid = expand(spec);
    const DecodePaths paths = parse_paths(options.paths, "--paths");
    if (!paths.cached) refuse_cached_path_axes(spec, options);
    plan.run.run_cached = paths.cached;
    plan.run.run_uncached = paths.uncached;
    plan.yes = options.yes;
    plan.likely_intent = likely_grid_intent({{"-n", options.seq}, {"-b", options.batch}, {"-d", options.dim},
                                             {"--heads", options.heads}, {"-g", options.kv_heads},
                                             {"-l", options.layers}, {"-t", options.threads.value_or("")}});
    if (n_reps > 0) {
        plan.run.n_reps = static_cast<std::size_t>(n_reps);
        plan.run.min_time_s = 0;
    } else {
        plan.run.min_time_s = parse_min_time(options.min_time);
    }
    plan.run.n_warmup = static_cast<std::size_t>(n_warmup);
    plan.run.cold_cache = parse_choice(options.cache_state, "--cache-state", {"cold", "warm"}) == "cold";
    const std::string flush = options.flush.empty() ? "" : parse_choice(options.flush, "--flush", {"clflush", "stream"});
    if (!flush.empty() && !plan.run.cold_cache) {
        throw ConfigError(fmt::format("--flush {}: a warm cache is never flushed; give --flush only with "
                                      "--cache-state cold (the default)",
                                      flush));
    }
    if (flush == "clflush" && !clflush_supported()) {
        throw ConfigError("--flush clflush needs an x86-64 CPU; use --flush stream");
    }
    plan.flush = flush == "stream" || !clflush_supported() ? FlushMethod::stream : FlushMethod::clflush;
    if (options.model_note) plan.notes.push_back(*options.model_note);
    if (latent_note) plan.notes.push_back(*latent_note);
    plan.run.verify = options.verify;
    plan.run.check = options.check || check_by_default;
    plan.run.seed = seed;
    plan.max_memory_bytes = max_memory;
    plan.measure_roofline = options.measure_roofline;
    plan.no_roofline = options.no_roofline;
    plan.dry_run = options.dry_run;
    plan.progress = parse_progress_mode(parse_choice(options.progress, "--progress", {"auto", "bar", "jsonl", "none"}));
    plan.interleave = options.interleave;
    plan.resume = options.resume;
    plan.table.time_unit = parse_time_unit(parse_choice(options.time_unit, "--time-unit", {"auto", "ns", "us", "ms", "s"}));
    if (options.shard) plan.shard = parse_shard(*options.shard);
    keep_shard_points(plan);
    // The files last: every check before them is free, and the output checks create (and remove) a file.
    if (options.roofline) plan.roofline = load_given_roofline(*options.roofline);
    plan.out = to_output_plan(options.out, all_output_formats());
    if (plan.resume && !resumable_output(plan.out)) {
        throw ConfigError("--resume needs -o FILE in csv, json or jsonl: it reads the finished points back "
                          "from that file");
    }
    return plan;
}

}  // namespace kvbench
