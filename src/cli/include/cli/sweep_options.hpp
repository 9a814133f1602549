// `kvbench sweep` on the command line: raw options, their registration, and the checked plan.
#pragma once

#include "cli/attention_options.hpp"
#include "cli/ragged_options.hpp"
#include "cli/shared_prefix_option.hpp"
#include "cli/layer_options.hpp"
#include "cli/latent_options.hpp"
#include "cli/output_options.hpp"
#include "cli/progress.hpp"
#include "kvbench/measure/cache_flush.hpp"
#include "kvbench/measure/run_context.hpp"
#include "kvbench/report/report.hpp"
#include "kvbench/report/summary_tables.hpp"
#include "kvbench/measure/runner.hpp"
#include "kvbench/measure/shard.hpp"
#include "kvbench/measure/sweep.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kvbench {

// What the user typed. Numbers and lists stay text until to_sweep_plan parses them, so their
// errors name the flag and the offending text, in kvbench's words rather than the parser's.
struct SweepCliOptions {
    std::string seq = "128-4096*2";
    std::string batch = "1";
    std::string dim = "1024";
    std::string heads = "16";
    std::optional<std::string> head_dim;  // --head-dim; unset: D/H
    std::optional<std::string> model_note;  // what --model leaves out (its latent attention), set by the parse
    std::string kv_heads = "16,4,1";
    std::string layers = "1";
    std::string kv_dtype = "f32";  // --kv-dtype: the cached path's element types
    std::string kv_block = "0";    // --kv-block: positions per block of a paged cache, 0 contiguous
    AttentionCliOptions attention;  // --window, --window-layers, --sinks
    RaggedCliOptions ragged;        // --seq-lens, --seq-dist
    std::optional<std::string> shared_prefix;  // --shared-prefix P1,P2,... (positions or N%)
    LayerCliOptions layer;  // --block, --ffn-dim, --weight-dtype, the experts
    std::optional<ModelConfig> model;  // --model or --model-config: the rest of its layer, set by the parse
    LatentCliOptions latent;  // --kv-lora-rank and the widths of latent attention (MLA)
    std::optional<std::string> threads;  // unset: default_thread_count()
    std::string paths = "both";
    std::optional<std::string> n_reps;  // --reps; unset: the count adapts to --min-time
    std::string n_warmup = "3";
    std::string min_time = "0.1s";   // --min-time: wall time per path and point
    bool interleave = false;
    bool resume = false;
    std::string cache_state = "cold";
    std::string flush;  // --flush clflush|stream; empty: clflush where the CPU has it
    std::string seed = "1";
    bool verify = false;
    bool check = false;
    bool dry_run = false;
    bool yes = false;  // --yes: run a grid above the point or time bound of grid_guard.hpp
    OutputCliOptions out;                   // -o, -f, --export, -q, -v (output_options.hpp)
    std::optional<std::string> max_memory;  // e.g. "8GiB"; unset: what the machine has available now
    std::optional<std::string> roofline;    // --roofline FILE; unset: the saved measurement, if any
    bool measure_roofline = false;  // measure the roofline first, in this run
    std::string progress = "auto";  // auto, bar, jsonl or none
    bool no_roofline = false;       // --no-roofline: no roofline %, no measurement, no drift check
    std::string time_unit = "auto";  // --time-unit of the human tables: auto, ns, us, ms or s
    std::optional<std::string> shard;  // --shard K/N: this machine's share of the grid
};

struct SweepPlan {
    Grid grid;
    RunOptions run;
    OutputPlan out;
    std::optional<std::uint64_t> max_memory_bytes;  // --max-memory; unset: the memory available now
    FlushMethod flush = FlushMethod::clflush;  // how a cold repetition is made cold
    std::optional<GivenRoofline> roofline;  // --roofline FILE, read once when the options are checked
    bool measure_roofline = false;
    bool no_roofline = false;
    bool dry_run = false;
    bool yes = false;
    std::optional<std::string> likely_intent;  // e.g. "-n 128-4096*2", for a grid refused without --yes
    ProgressMode progress = ProgressMode::auto_detect;
    bool interleave = false;  // rounds over the whole grid (run_interleaved) instead of point after point
    bool resume = false;      // keep the rows of -o measured by this build with these settings
    TableOptions table;       // how the human tables render (--time-unit)
    // --shard K/N: grid.points holds only this shard's points (docs/sharding.md).
    std::optional<Shard> shard;
    std::size_t n_grid_points = 0;      // of the whole grid, every shard's
    double grid_weight_seconds = 0;     // the whole grid's shard weights (shard.hpp), and this shard's
    double shard_weight_seconds = 0;
    std::vector<std::string> notes;  // said once on stderr before the run (what --model leaves out)
};

// "K/N": shard K of N, 1 <= K <= N <= 10000. Throws ConfigError naming --shard.
Shard parse_shard(const std::string& text);
// Whether --resume can read this run's -o back: a csv, json or jsonl file.
bool resumable_output(const OutputPlan& out);

CLI::App* add_sweep_command(CLI::App& app, SweepCliOptions& options);

// Parses every value and applies the cross-flag rules; checks, before anything is measured,
// that every output file can be created and that the --roofline file can be read. Throws
// ConfigError naming the flag and the rule it broke; creates no file.
SweepPlan to_sweep_plan(const SweepCliOptions& options);

}  // namespace kvbench
