// The `kvbench reload` subcommand: options, the tier's bandwidth, the measured prefills and the
// break-even sheet.
#include "cli/reload_command.hpp"

#include "cli/byte_units.hpp"
#include "cli/dry_run.hpp"
#include "cli/grid_guard.hpp"
#include "cli/model_options.hpp"
#include "cli/option_conventions.hpp"
#include "cli/plan_sheet.hpp"
#include "cli/value_list.hpp"
#include "kvbench/engine/config.hpp"
#include "kvbench/measure/budget.hpp"
#include "kvbench/measure/file_bandwidth.hpp"
#include "kvbench/measure/roofline.hpp"
#include "kvbench/measure/run_context.hpp"
#include "kvbench/measure/runner.hpp"
#include "kvbench/measure/stats.hpp"
#include "kvbench/plan/memory_plan.hpp"
#include "kvbench/plan/reload_plan.hpp"
#include "kvbench/report/units.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <system_error>

namespace kvbench {

namespace {

constexpr const char* reload_examples = R"(Examples:
  kvbench reload --model llama-3-8b --kv-dtype f16,int8 --tier-bw 2GB/s
      a prefix's cache on a 2 GB/s tier: reload it or recompute it?
  kvbench reload --model llama-3-8b,mistral-7b --tier-path /mnt/nvme \
      -n 1K,4K,16K
      the tier measured by writing and reading a 256 MiB file in /mnt/nvme
  kvbench reload --model llama-3-70b -n 32K,128K --tier-bw 2GB/s --dry-run
      what those prefills would cost to measure; nothing measured

Reload time is predicted: the prefix's KV bytes over the tier's bandwidth. The
prefill is measured here: the uncached forward of the model's full layer (norms,
RoPE, attention, MLP or experts; GPT-2's attention block) over the prefix, on
--layers layers scaled to the model's (docs/planning.md).

Exit status: 0 ok; 1 a write or a measurement failed; 2 bad usage.)";

constexpr std::uint64_t max_prefix_tokens = std::uint64_t{1} << 20;
// The prefill is timed on a sample of the layers and scaled to the model's, whose layers repeat
// one shape: more layers add run time and f32 weights (3.4 GB a layer for Llama-3-70B), little
// else. Eight still reach past DeepSeek's three dense first layers into its experts.
constexpr std::uint64_t max_measured_layers = 8;
constexpr std::uint64_t max_reps = 100;
constexpr const char* default_probe_size = "256MiB";

struct Tier {
    double bytes_per_s = 0;
    std::string note;
};

// The tier --tier-bw gives, if it does; refuses both --tier-bw and --tier-path.
std::optional<Tier> given_tier(const ReloadCliOptions& options) {
    if (options.tier_bw && options.tier_path) {
        throw ConfigError("--tier-bw, --tier-path: give one: the tier's bandwidth, or a path on it to measure");
    }
    if (!options.tier_bw) return std::nullopt;
    if (options.probe_size) {
        throw ConfigError(fmt::format("--probe-size {}: only with --tier-path; --tier-bw gives the bandwidth",
                                      *options.probe_size));
    }
    const double rate = parse_byte_rate(*options.tier_bw, "--tier-bw");
    return Tier{rate, fmt::format("Tier: {} GB/s, given by --tier-bw.", format_number(rate / 1e9))};
}

// Refuses (ConfigError) a --tier-path file shorter than the probe: read in a few requests, it
// times the tier's latency, not its bandwidth (357 B read in 1.6 ms is not a 0.0002 GB/s tier).
// A directory gets a probe file of probe_bytes; anything else the probe itself refuses.
void check_tier_file(const std::string& path, std::uint64_t probe_bytes, const std::string& probe_size) {
    std::error_code error;
    if (!std::filesystem::is_regular_file(path, error)) return;
    const std::uintmax_t file_bytes = std::filesystem::file_size(path, error);
    if (error || file_bytes >= probe_bytes) return;
    throw ConfigError(fmt::format("--tier-path {}: the file holds {}, less than --probe-size {}: a read that short "
                                  "times the tier's latency, not its bandwidth; name a file of at least {} or a "
                                  "directory on the tier (a probe file of --probe-size is written there), or lower "
                                  "--probe-size",
                                  path, format_bytes(file_bytes), probe_size, format_bytes(probe_bytes)));
}

Tier resolve_tier(const ReloadCliOptions& options) {
    if (std::optional<Tier> given = given_tier(options)) return *given;
    if (!options.tier_path) {
        throw ConfigError("--tier-bw or --tier-path: say where the cache sits: its bandwidth (--tier-bw 2GB/s) or a "
                          "directory or file on that tier to measure (--tier-path /mnt/nvme)");
    }
    const std::string probe_size = options.probe_size.value_or(default_probe_size);
    const std::uint64_t probe_bytes = parse_byte_size(probe_size, "--probe-size");
    check_tier_file(*options.tier_path, probe_bytes, probe_size);
    FileReadProbe probe;
    try {
        probe = probe_read_bandwidth(*options.tier_path, probe_bytes);
    } catch (const std::length_error& error) {
        throw ConfigError(fmt::format("--probe-size {}: {} (lower --probe-size, or name a file on the tier to read)",
                                      probe_size, error.what()));
    } catch (const std::system_error& error) {
        throw ConfigError(fmt::format("--tier-path {}: {} (name a directory you can write to, or a file you can read)",
                                      *options.tier_path, error.what()));
    } catch (const std::invalid_argument& error) {
        throw ConfigError(fmt::format("--tier-path {}: {}", *options.tier_path, error.what()));
    }
    return {probe.bytes_per_s(),
            fmt::format("Tier: {} GB/s, measured: {} of {} read once in {} s with {}.",
                        format_number(probe.bytes_per_s() / 1e9), format_bytes(probe.bytes), *options.tier_path,
                        format_number(probe.seconds), probe.method)};
}

// `n_layers` of the model's layers over the whole prefix, as the engine's uncached forward runs
// them: the full layer (norms, RoPE, attention, MLP or experts) where the preset names its MLP,
// else the attention block; every layer global, so a windowed model's prefill is not understated.
ModelConfig prefill_config(const ModelPreset& model, std::uint64_t prefix_tokens, std::uint64_t n_layers) {
    ModelConfig config = model_config_of(model);
    config.n_batch = 1;
    config.seq_len = prefix_tokens;
    config.n_layers = n_layers;
    config.moe.n_dense_layers = std::min<std::size_t>(config.moe.n_dense_layers, n_layers);  // the model's first layers
    config.layer_windows.clear();
    validate(config);
    return config;
}

// How a prefill is timed: the uncached forward alone, warm.
RunOptions prefill_run_options(std::size_t n_reps) {
    RunOptions run;
    run.run_cached = false;
    run.run_uncached = true;
    run.n_reps = n_reps;
    run.n_warmup = 1;
    // A prefill of many tokens reuses each weight over every row: it is compute-bound, and an
    // evicted cache would change little but the run's length.
    run.cold_cache = false;
    return run;
}

// The median uncached forward of `config`, in seconds.
double measure_prefill(PointRunner& runner, const ModelConfig& config, std::size_t n_threads, std::size_t n_reps) {
    const std::atomic<bool> stop{false};
    const PointMeasurement measured = runner.run(GridPoint{config, n_threads, true}, prefill_run_options(n_reps), stop);
    return summarize(measured.uncached->samples_ns).median_ns * 1e-9;
}

// Refuses (ConfigError) prefills estimated at more than an hour in all, unless confirmed: the
// uncached forward grows with P², and a --prefix of 1M tokens would run for days. The estimate
// is the sweep's (estimate_point_seconds), at the assumed peaks: reload reads no roofline.
// Measuring every model's prefill at every prefix, estimated at the assumed peaks.
double estimated_prefill_seconds(const std::vector<ModelPreset>& models, const std::vector<std::uint64_t>& prefixes,
                                 std::uint64_t n_layers, std::size_t n_threads, std::size_t n_reps) {
    double seconds = 0;
    for (const ModelPreset& model : models) {
        for (const std::uint64_t prefix : prefixes) {
            const GridPoint point{prefill_config(model, prefix, n_layers), n_threads, true};
            seconds += estimate_point_seconds(point, prefill_run_options(n_reps), nullptr, 0);
        }
    }
    return seconds;
}

void check_prefill_time(const std::vector<ModelPreset>& models, const std::vector<std::uint64_t>& prefixes,
                        std::uint64_t n_layers, std::size_t n_threads, std::size_t n_reps, bool confirmed) {
    if (confirmed) return;
    const double seconds = estimated_prefill_seconds(models, prefixes, n_layers, n_threads, n_reps);
    if (seconds <= max_unconfirmed_seconds) return;
    throw ConfigError(fmt::format("--prefix {}: measuring the prefills would take about {} (more than an hour; the "
                                  "forward grows with P^2): lower --prefix or --layers, or give --yes",
                                  prefixes.back(), format_run_time(seconds)));
}

// Refuses (ConfigError), before anything is measured, a prefill that needs more memory than the
// machine has free: the forward over P tokens holds activations of P rows, so a long --prefix
// would otherwise grow until the allocation fails or the machine swaps.
void check_prefill_memory(const ModelPreset& model, const ModelConfig& config, std::size_t n_threads, std::size_t n_reps) {
    const MemoryLimit limit = memory_limit(std::nullopt);
    if (!limit.bytes) return;
    const std::uint64_t needed = point_memory_bytes(GridPoint{config, n_threads, true}, prefill_run_options(n_reps));
    if (needed <= *limit.bytes) return;
    throw ConfigError(fmt::format("--prefix {}: the prefill of {} over {} tokens needs {}, more than {} ({}): lower "
                                  "--prefix or --layers",
                                  config.seq_len, model.name, config.seq_len, format_bytes(needed), limit.name,
                                  format_bytes(*limit.bytes)));
}


// --dry-run: each prefill a run would measure, with the memory it holds and its time estimated
// at half the roofline of the assumed peaks (reload reads no roofline), beside the reload that
// --tier-bw predicts. Nothing is measured and a --tier-path is not probed.
Sheet dry_run_sheet(const std::vector<ModelPreset>& models, const std::vector<std::uint64_t>& prefixes,
                    const std::vector<KvDtype>& cache_types, std::uint64_t n_layers, std::size_t n_threads,
                    std::uint64_t n_reps, const ReloadCliOptions& options) {
    const std::optional<Tier> tier = given_tier(options);
    std::string tier_note;
    if (tier) {
        tier_note = tier->note;
    } else if (options.tier_path) {
        const std::string probe_size = options.probe_size.value_or(default_probe_size);
        check_tier_file(*options.tier_path, parse_byte_size(probe_size, "--probe-size"), probe_size);
        tier_note = fmt::format("Tier: to be measured by reading {}, which a dry run does not do: no reload time.",
                                *options.tier_path);
    } else {
        tier_note = "Tier: neither --tier-bw nor --tier-path given (a run needs one): no reload time.";
    }
    Sheet sheet;
    sheet.title = "Recompute or reload, dry run: the prefills a run would measure";
    // The model names a line and the type and P place it, repeated in each part of a split table.
    const auto column = [&](std::string key, std::string header, Align align, SheetRole role = SheetRole::figure) {
        sheet.columns.push_back({std::move(key), std::move(header), align, true, role});
    };
    column("model", "model", Align::left, SheetRole::key);
    column("kv_dtype", "KV dtype", Align::left, SheetRole::axis);
    column("prefix_tokens", "P", Align::right, SheetRole::axis);
    column("kv_bytes", "KV bytes", Align::right);
    column("reload_s", "reload", Align::right);
    column("prefill_s", "prefill", Align::right);
    column("memory_bytes", "memory", Align::right);
    const auto seconds_cell = [](double seconds) { return SheetCell{seconds, format_run_time(seconds)}; };
    const MemoryLimit limit = memory_limit(std::nullopt);
    std::uint64_t most_memory = 0;
    const Roofline assumed = roofline_or_assumed(nullptr);
    const double run_seconds = estimated_prefill_seconds(models, prefixes, n_layers, n_threads, n_reps);
    for (const ModelPreset& model : models) {
        for (const std::uint64_t prefix : prefixes) {
            const ModelConfig config = prefill_config(model, prefix, n_layers);
            const double prefill_s = estimate_step_seconds(config, DecodePath::uncached, assumed) *
                                     static_cast<double>(model.n_layers) / static_cast<double>(n_layers);
            const std::uint64_t memory = point_memory_bytes(GridPoint{config, n_threads, true}, prefill_run_options(n_reps));
            most_memory = std::max(most_memory, memory);
            for (const KvDtype kv_dtype : cache_types) {
                const std::uint64_t kv_bytes = sequence_bill(model, prefix, CacheLayout{kv_dtype, 1}).kv_bytes;
                std::vector<SheetCell>& cells = sheet.rows.emplace_back();
                cells.push_back(text_cell(model.name));
                cells.push_back(text_cell(std::string(kv_dtype_info(kv_dtype).name)));
                cells.push_back(count_cell(prefix));
                cells.push_back({kv_bytes, format_bytes(kv_bytes)});
                cells.push_back(tier ? seconds_cell(reload_seconds(kv_bytes, tier->bytes_per_s)) : SheetCell{nullptr, "-"});
                cells.push_back(seconds_cell(prefill_s));
                cells.push_back({memory, format_bytes(memory)});
            }
        }
    }
    sheet.notes.push_back(tier_note);
    sheet.notes.push_back(
        "Reload predicted: the prefix's KV bytes (windows applied) over the tier's bandwidth. Prefill estimated: the "
        "model's uncached forward over P tokens at half the roofline of the assumed peaks (" +
        fmt::format("{} GFLOP/s, {} GB/s; reload reads no roofline). Memory: what measuring it holds.",
                    format_number(assumed.peak_gflops), format_number(assumed.peak_gbps)));
    sheet.notes.push_back(fmt::format("Measuring {} prefill{} on {} layer{} ({} thread{}, a warm-up and {} "
                                      "repetition{} each) would take about {}.",
                                      models.size() * prefixes.size(), models.size() * prefixes.size() == 1 ? "" : "s",
                                      n_layers, n_layers == 1 ? "" : "s", n_threads, n_threads == 1 ? "" : "s", n_reps,
                                      n_reps == 1 ? "" : "s", format_run_time(run_seconds)));
    // What the run would refuse, said here rather than found there.
    if (limit.bytes && most_memory > *limit.bytes) {
        sheet.notes.push_back(fmt::format("A run refuses a prefill that needs more than {} ({}): lower --prefix or "
                                          "--layers.",
                                          format_bytes(*limit.bytes), limit.name));
    }
    if (run_seconds > max_unconfirmed_seconds) {
        sheet.notes.push_back("A run of more than an hour needs --yes.");
    }
    return sheet;
}

}  // namespace

CLI::App* add_reload_command(CLI::App& app, ReloadCliOptions& options) {
    CLI::App* reload = app.add_subcommand(
        "reload", "Recompute or reload: a prefix's KV cache read back from a slower tier against its prefill "
                  "measured here, and the prefix length where they break even");
    reload->footer(reload_examples);
    reload->add_option("-m,--model", options.models, "Presets, comma-separated (see `kvbench models`)")
        ->delimiter(',')
        ->type_name("NAME");
    add_presets_option(*reload, options.presets);
    list_option(*reload, "-n,--prefix", options.prefix, "Prefix lengths P in tokens (4K = 4096)");
    reload->add_option("--kv-dtype", options.kv_dtype,
                       "Cache element types, comma-separated: f32, f16, bf16, fp8, int8, int4 (default f16)")
        ->type_name("TYPES");
    reload->add_option("--tier-bw", options.tier_bw, "The tier's read bandwidth: 2GB/s, 500MB/s, 7.5GB/s")
        ->type_name("RATE");
    reload->add_option("--tier-path", options.tier_path,
                       "Measure the tier instead: a directory (a file of --probe-size is written, read and "
                       "removed) or a file of at least --probe-size to read")
        ->type_name("PATH");
    reload->add_option("--probe-size", options.probe_size,
                       "Bytes the tier probe reads, with --tier-path (default 256MiB)")
        ->type_name("SIZE");
    reload->add_option("--layers", options.layers,
                       "Layers whose prefill is measured, scaled to the model's layer count (default 1, at most 8: "
                       "its layers repeat one shape)")
        ->type_name("N");
    reload->add_option("--reps", options.n_reps, "Timed prefills per point; the median is kept (default 3)")
        ->type_name("N");
    reload->add_option("-t,--threads", options.threads, "Compute threads (default: $OMP_NUM_THREADS, else all cores)")
        ->type_name("T");
    reload->add_flag("-y,--yes", options.yes, "Measure prefills estimated at more than an hour (refused without it)");
    reload->add_flag("--dry-run", options.dry_run,
                     "List the prefills with their memory and estimated time, and the reload --tier-bw predicts; "
                     "measure nothing. With -o or -f, the list in that format");
    add_output_options(reload, options.out, sheet_formats());
    return reload;
}

int run_reload_command(const ReloadCliOptions& options) {
    if (options.models.empty()) {
        throw ConfigError("--model: name the models (--model llama-3-8b; `kvbench models` lists them)");
    }
    const std::vector<ModelPreset> presets = load_presets(options.presets);
    const std::vector<ModelPreset> models = find_models(presets, options.models);
    std::vector<KvDtype> cache_types;
    std::string_view rest = options.kv_dtype;
    while (true) {
        const std::size_t comma = rest.find(',');
        const std::string_view name = rest.substr(0, comma);
        const std::optional<KvDtype> dtype = find_kv_dtype(name);
        if (!dtype) {
            throw ConfigError(fmt::format("--kv-dtype {}: \"{}\" is not an element type (f32, f16, bf16, fp8, int8 "
                                          "or int4)",
                                          options.kv_dtype, name));
        }
        cache_types.push_back(*dtype);
        if (comma == std::string_view::npos) break;
        rest = rest.substr(comma + 1);
    }
    std::vector<std::uint64_t> prefixes;
    for (const std::size_t p : parse_value_list(options.prefix, "--prefix", max_prefix_tokens)) prefixes.push_back(p);
    std::sort(prefixes.begin(), prefixes.end());
    prefixes.erase(std::unique(prefixes.begin(), prefixes.end()), prefixes.end());
    const std::uint64_t n_layers = parse_whole_number(options.layers, "--layers", 1, std::numeric_limits<std::uint64_t>::max());
    if (n_layers > max_measured_layers) {
        throw ConfigError(fmt::format("--layers: \"{}\" must be at most {}: the prefill is timed on a sample of "
                                      "layers and scaled to the model's, whose layers repeat one shape; more add run "
                                      "time and f32 weights, little else",
                                      options.layers, max_measured_layers));
    }
    const std::uint64_t n_reps = parse_whole_number(options.n_reps, "--reps", 1, max_reps);
    const std::size_t n_threads =
        options.threads ? parse_whole_number(*options.threads, "--threads", 1, 1024) : default_thread_count();
    std::vector<std::string> attention_only;  // models whose MLP kvbench does not run
    for (const ModelPreset& model : models) {
        if (n_layers > model.n_layers) {
            throw ConfigError(fmt::format("--layers {}: {} has only {} layers", n_layers, model.name, model.n_layers));
        }
        // Also refuses what cannot be measured, before measuring.
        if (prefill_config(model, prefixes.front(), n_layers).block != BlockKind::full) attention_only.push_back(model.name);
        // A dry run shows what the checks below would refuse.
        if (!options.dry_run) check_prefill_memory(model, prefill_config(model, prefixes.back(), n_layers), n_threads, n_reps);
    }
    const OutputPlan output = to_output_plan(options.out, sheet_formats());
    if (options.dry_run) {
        return emit_dry_run(dry_run_sheet(models, prefixes, cache_types, n_layers, n_threads, n_reps, options), output);
    }
    check_prefill_time(models, prefixes, n_layers, n_threads, n_reps, options.yes);
    const Tier tier = resolve_tier(options);

    Sheet sheet;
    sheet.title = "Recompute or reload a prefix's KV cache (B = 1)";
    sheet.plot_script = "plots/reload_plot.py";
    const auto column = [&](std::string key, std::string header, Align align, bool in_table,
                            SheetRole role = SheetRole::figure) {
        sheet.columns.push_back({std::move(key), std::move(header), align, in_table, role});
    };
    column("model", "model", Align::left, true, SheetRole::key);
    column("kv_dtype", "KV dtype", Align::left, true, SheetRole::axis);
    column("prefix_tokens", "P", Align::right, true, SheetRole::axis);
    column("kv_bytes", "KV bytes", Align::right, true);
    column("tier_gb_per_s", "tier GB/s", Align::right, false);
    column("reload_ms", "reload ms (predicted)", Align::right, true);
    column("prefill_ms", "prefill ms (measured)", Align::right, true);
    column("faster", "faster", Align::left, true);
    column("break_even_tokens", "break-even P", Align::right, true);
    column("break_even", "break-even", Align::left, false);
    column("threads", "threads", Align::right, false);
    column("measured_layers", "measured layers", Align::right, false);

    PointRunner runner(nullptr);
    for (const ModelPreset& model : models) {
        std::vector<double> prefill_s;
        for (const std::uint64_t prefix : prefixes) {
            if (!options.out.quiet) fmt::print(stderr, "measuring the prefill of {} at P={}\n", model.name, prefix);
            const double measured = measure_prefill(runner, prefill_config(model, prefix, n_layers), n_threads, n_reps);
            prefill_s.push_back(measured * static_cast<double>(model.n_layers) / static_cast<double>(n_layers));
        }
        for (const KvDtype kv_dtype : cache_types) {
            std::vector<ReloadPoint> points;
            std::vector<std::uint64_t> kv_bytes;
            for (std::size_t i = 0; i < prefixes.size(); ++i) {
                kv_bytes.push_back(sequence_bill(model, prefixes[i], CacheLayout{kv_dtype, 1}).kv_bytes);
                points.push_back({prefixes[i], reload_seconds(kv_bytes.back(), tier.bytes_per_s), prefill_s[i]});
            }
            const BreakEven even = find_break_even(points);
            for (std::size_t i = 0; i < points.size(); ++i) {
                std::vector<SheetCell>& cells = sheet.rows.emplace_back();
                cells.push_back(text_cell(model.name));
                cells.push_back(text_cell(std::string(kv_dtype_info(kv_dtype).name)));
                cells.push_back(count_cell(points[i].prefix_tokens));
                cells.push_back({kv_bytes[i], format_bytes(kv_bytes[i])});
                cells.push_back({tier.bytes_per_s / 1e9, format_number(tier.bytes_per_s / 1e9)});
                cells.push_back(ms_cell(points[i].reload_s));
                cells.push_back(ms_cell(points[i].prefill_s));
                cells.push_back(text_cell(points[i].reload_s < points[i].prefill_s ? "reload" : "recompute"));
                cells.push_back(even.tokens ? SheetCell{*even.tokens, fmt::format("{:.0f}", *even.tokens)}
                                            : SheetCell{nullptr, even.kind == BreakEven::Kind::reload_always
                                                                     ? fmt::format("< {}", prefixes.front())
                                                                     : fmt::format("> {}", prefixes.back())});
                cells.push_back(text_cell(break_even_label(even.kind)));
                cells.push_back(count_cell(n_threads));
                cells.push_back(count_cell(n_layers));
            }
        }
    }
    sheet.notes.push_back(tier.note);
    const std::string layer_kind =
        attention_only.empty()
            ? std::string("the model's full layer: norms, RoPE, attention, MLP or experts; no embeddings")
            : fmt::format("the model's full layer: norms, RoPE, attention, MLP or experts; no embeddings; for {}, whose "
                          "MLP kvbench does not run, the attention block alone",
                          fmt::join(attention_only, ", "));
    sheet.notes.push_back(fmt::format(
        "Prefill measured: the engine's uncached forward of one sequence over P tokens ({}) on {} layer{} with f32 "
        "weights, {} thread{}, median of {}, times the model's layers. Every layer attends to the whole prefix.",
        layer_kind, n_layers, n_layers == 1 ? "" : "s", n_threads, n_threads == 1 ? "" : "s", n_reps));
    sheet.notes.push_back("Reload is predicted: the prefix's KV bytes (windows applied) over the tier's bandwidth, no "
                          "latency per request. Break-even: between the last P where recomputing is no slower and the "
                          "next, interpolated (docs/planning.md).");
    emit_sheet(sheet, output);
    return 0;
}

}  // namespace kvbench
