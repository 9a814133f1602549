// `kvbench generate` on the command line: raw options, their registration, and the checked plan.
#pragma once

#include "cli/attention_options.hpp"
#include "cli/layer_options.hpp"
#include "cli/latent_options.hpp"
#include "cli/output_options.hpp"
#include "kvbench/measure/generation.hpp"
#include "kvbench/measure/run_context.hpp"
#include "kvbench/measure/sweep.hpp"
#include "kvbench/report/report.hpp"
#include "kvbench/report/summary_tables.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kvbench {

// What the user typed. Model axes stay text until to_generate_plan parses them, as the sweep's do,
// so one run can compare groupings (-g 16,4,1), shapes or thread counts.
struct GenerateCliOptions {
    std::string prompt = "512";  // P
    std::string n_new = "128";   // T
    std::optional<std::string> prompt_lens;  // --prompt-lens: a ragged batch's prompts, a pattern over the batch
    std::string batch = "1";
    std::string dim = "1024";
    std::string heads = "16";
    std::optional<std::string> head_dim;  // --head-dim; unset: D/H
    std::optional<std::string> model_note;  // what --model leaves out (its latent attention), set by the parse
    std::string kv_heads = "16,4,1";
    std::string layers = "1";
    std::string kv_dtype = "f32";  // --kv-dtype: the cached path's element types
    std::string kv_block = "0";    // --kv-block: positions per block of a paged cache; 0 contiguous
    std::optional<std::string> shared_prefix;  // --shared-prefix: positions or percentages of P
    AttentionCliOptions attention;  // --window, --window-layers, --sinks
    LayerCliOptions layer;  // --block, --ffn-dim, --weight-dtype, the experts
    std::optional<ModelConfig> model;  // --model or --model-config: the rest of its layer, set by the parse
    LatentCliOptions latent;  // --kv-lora-rank and the widths of latent attention (MLA)
    std::optional<std::string> threads;  // unset: default_thread_count()
    std::string paths = "both";
    std::string cache_state = "cold";
    std::string seed = "1";
    bool verify = false;
    OutputCliOptions out;      // -o, -f, --export, -q, -v (output_options.hpp)
    std::optional<std::string> fit_from;  // fit the growth law over N >= this; unset: every step
    bool yes = false;                     // --yes: run a grid above the bounds of grid_guard.hpp
    bool dry_run = false;                 // --dry-run: the configurations and their cost, nothing run
    std::optional<std::string> roofline;  // --roofline FILE; unset: the saved measurement, if any
    bool measure_roofline = false;        // measure the roofline first, in this run
    bool no_roofline = false;             // --no-roofline: no roofline %, no measurement
    std::string time_unit = "auto";  // --time-unit of the human tables: auto, ns, us, ms or s
};

struct GeneratePlan {
    Grid grid;  // one point per model shape and thread count; each point's seq_len is P + T
    GenerationOptions generation;
    std::vector<std::size_t> prompt_lens;  // --prompt-lens' pattern; empty: every prompt is P
    OutputPlan out;
    std::size_t fit_from = 0;
    bool yes = false;
    bool dry_run = false;
    std::optional<GivenRoofline> roofline;  // --roofline FILE, read once when the options are checked
    bool measure_roofline = false;
    bool no_roofline = false;
    std::optional<std::string> likely_intent;  // e.g. "-g 1-64*2", for a grid refused without --yes
    TableOptions table;  // how the human tables render (--time-unit)
};

CLI::App* add_generate_command(CLI::App& app, GenerateCliOptions& options);

// Parses the lists and applies the cross-flag rules. Throws ConfigError naming the flag.
GeneratePlan to_generate_plan(const GenerateCliOptions& options);

}  // namespace kvbench
