// Registration of `kvbench sweep`'s flags and the checks that turn them into a SweepPlan.
#include "cli/sweep_options.hpp"

#include "kvbench/engine/blas.hpp"
#include "kvbench/measure/roofline.hpp"
#include "cli/value_list.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string_view>

#include <fcntl.h>
#include <unistd.h>

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

// Refuses an -o target that would fail only after the measurement, or that must not be
// replaced. The report is written beside its file and renamed over it (report/atomic_file.hpp),
// so a device such as /dev/full or /dev/null would be replaced by a regular file.
void check_output_file(const std::string& output) {
    namespace fs = std::filesystem;
    if (output.empty()) throw ConfigError("-o: the file name is empty (name the report file, e.g. -o sweep.csv)");
    std::error_code ignored;
    const fs::file_status status = fs::status(output, ignored);
    if (fs::is_directory(status)) {
        throw ConfigError(fmt::format("-o {}: is a directory (name a file inside it, e.g. {}/sweep.csv)",
                                      output, fs::path(output).lexically_normal().string()));
    }
    if (fs::exists(status) && !fs::is_regular_file(status)) {
        throw ConfigError(fmt::format("-o {}: is not a regular file (the report replaces its file by a "
                                      "rename; name a file in a writable directory)",
                                      output));
    }
    const fs::path parent = fs::absolute(output, ignored).parent_path();
    const fs::file_status parent_status = fs::status(parent, ignored);
    if (fs::exists(parent_status) && !fs::is_directory(parent_status)) {
        throw ConfigError(fmt::format("-o {}: {} is not a directory", output, parent.string()));
    }
    if (!fs::is_directory(parent_status)) {
        throw ConfigError(fmt::format("-o {}: directory {} does not exist", output, parent.string()));
    }
    // Creating a file is the one check that sees everything that can forbid it: permissions,
    // a read-only or pseudo filesystem, root's privileges. The probe is removed at once.
    const std::string probe = output + fmt::format(".tmp-check-{}", ::getpid());
    const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
        throw ConfigError(fmt::format("-o {}: cannot create a file in {}: {}", output, parent.string(),
                                      std::strerror(errno)));
    }
    ::close(fd);
    ::unlink(probe.c_str());
}

// Reads the --roofline file now, so that a missing, corrupt or foreign file is a usage error
// before the first point rather than a failure after the sweep.
void check_roofline_file(const std::string& path) {
    if (path.empty()) throw ConfigError("--roofline: the file name is empty (give a file saved by `kvbench roofline`)");
    if (std::error_code ignored; std::filesystem::is_directory(path, ignored)) {
        throw ConfigError(fmt::format("--roofline {}: is a directory (give a file saved by `kvbench roofline`)", path));
    }
    try {
        static_cast<void>(load_roofline(path));
    } catch (const std::runtime_error& error) {
        throw ConfigError(fmt::format("--roofline: {}", error.what()));
    }
}

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
    sweep->add_option("-r,--reps", options.n_reps,
                      "Timed repetitions per point and path, exactly (default: adaptive, see --min-time)")
        ->type_name("N");
    sweep->add_option("--min-time", options.min_time,
                      "Without --reps, time each path of a point for at least this long (e.g. 0.5s, 200ms), "
                      "evictions included, with 5 to 1000 repetitions; warm-up then stops after one "
                      "repetition once it has taken half of it")
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
                    "Read -o (csv or json) and skip the points it already holds from this build with the same "
                    "settings (B, N, D, H, G, L, T, cache state, repetition policy); the file keeps every "
                    "finished point, so an interrupted sweep continues where it stopped");
    sweep->add_option("--cache-state", options.cache_state,
                      "cold: evict the last-level cache before each repetition; warm: do not")
        ->check(CLI::IsMember({"cold", "warm"}))
        ->capture_default_str();
    sweep->add_option("--flush", options.flush,
                      "How cold is made cold: clflush evicts the step's own buffers from every cache "
                      "(default on x86-64); stream writes and reads a buffer of 4x the LLCs")
        ->check(CLI::IsMember({"clflush", "stream"}));
    sweep->add_option("--seed", options.seed, "Seed of weights and inputs")->type_name("N")->capture_default_str();
    sweep->add_flag("--verify", options.verify,
                    "Check at every point that the cached step equals the uncached forward (relative error below 1e-4)");
    sweep->add_flag("--check", options.check,
                    "Before timing a point, compare each fast kernel with its naive twin on the point's data "
                    "(always on in Debug builds)");
    sweep->add_flag("--dry-run", options.dry_run,
                    "List the grid with FLOPs, KV bytes, peak memory and estimated time; run nothing");
    sweep->add_option("-f,--format", options.format, "Output format: table, csv, json or md")
        ->check(CLI::IsMember({"table", "csv", "json", "md"}))
        ->capture_default_str();
    sweep->add_option("-o,--output", options.output,
                      "Write the report to FILE (whole or not at all); the terminal still shows tables")
        ->type_name("FILE");
    sweep->add_option("--max-memory", options.max_memory,
                      "Refuse points needing more than this (e.g. 8GiB; default: available memory)")
        ->type_name("SIZE");
    sweep->add_option("--roofline", options.roofline,
                      "Roofline JSON from `kvbench roofline` (default: the saved one for the thread count, "
                      "measured quickly on the first run)")
        ->type_name("FILE");
    sweep->add_flag("--measure-roofline", options.measure_roofline,
                    "Measure the roofline first (a few seconds per thread count) and save it: "
                    "on a shared machine, bandwidth drifts")
        ->excludes("--roofline");
    sweep->add_option("--progress", options.progress,
                      "Progress on stderr: bar (one line), jsonl (one JSON object per event: point_started, "
                      "point_finished, point_failed, sweep_finished), none; auto: bar on a terminal, else none")
        ->check(CLI::IsMember({"auto", "bar", "jsonl", "none"}))
        ->capture_default_str();
    sweep->add_flag("--no-roofline", options.no_roofline,
                    "Run without a roofline: no roofline %, no first-run measurement, no bandwidth drift check")
        ->excludes("--roofline")
        ->excludes("--measure-roofline");
    sweep->add_option("--time-unit", options.time_unit,
                      "Unit of the tables' times: auto (per column, from its values), ns, us, ms or s")
        ->check(CLI::IsMember({"auto", "ns", "us", "ms", "s"}))
        ->capture_default_str();
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
    spec.threads = options.threads ? parse_value_list(*options.threads, "--threads", 1024)
                                   : std::vector<std::size_t>{available_cores()};
    // 0: --reps not given, the count adapts to --min-time.
    const std::uint64_t n_reps = options.n_reps ? parse_whole_number(*options.n_reps, "--reps", 1, max_repetitions) : 0;
    const std::uint64_t n_warmup = parse_whole_number(options.n_warmup, "--warmup", 0, max_repetitions);
    const std::uint64_t seed = parse_whole_number(options.seed, "--seed", 0, ~std::uint64_t{0});
    std::optional<std::uint64_t> max_memory;
    if (options.max_memory) max_memory = parse_byte_size(*options.max_memory, "--max-memory");

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
    if (n_reps > 0) {
        plan.run.n_reps = static_cast<std::size_t>(n_reps);
        plan.run.min_time_s = 0;
    } else {
        plan.run.min_time_s = parse_min_time(options.min_time);
    }
    plan.run.n_warmup = static_cast<std::size_t>(n_warmup);
    plan.run.cold_cache = options.cache_state == "cold";
    if (options.flush == "clflush" && !clflush_supported()) {
        throw ConfigError("--flush clflush needs an x86-64 CPU; use --flush stream");
    }
    plan.flush = options.flush == "stream" || !clflush_supported() ? FlushMethod::stream : FlushMethod::clflush;
    plan.run.verify = options.verify;
    plan.run.check = options.check || check_by_default;
    plan.run.seed = seed;
    const std::map<std::string, OutputFormat> formats{{"table", OutputFormat::table},
                                                      {"csv", OutputFormat::csv},
                                                      {"json", OutputFormat::json},
                                                      {"md", OutputFormat::md}};
    plan.format = formats.at(options.format);
    plan.output = options.output;
    plan.max_memory_bytes = max_memory;
    plan.roofline = options.roofline;
    plan.measure_roofline = options.measure_roofline;
    plan.no_roofline = options.no_roofline;
    plan.dry_run = options.dry_run;
    plan.progress = parse_progress_mode(options.progress);
    plan.interleave = options.interleave;
    plan.resume = options.resume;
    plan.table.time_unit = parse_time_unit(options.time_unit);
    if (plan.resume && (!plan.output || (plan.format != OutputFormat::csv && plan.format != OutputFormat::json))) {
        throw ConfigError("--resume needs -o FILE with --format csv or json: it reads the finished points back "
                          "from that file");
    }
    // The files last: every check before them is free, and the -o check creates (and removes) a file.
    if (options.roofline) check_roofline_file(*options.roofline);
    if (options.output) check_output_file(*options.output);
    return plan;
}

}  // namespace kvbench
