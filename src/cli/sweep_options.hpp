// `kvbench sweep` on the command line: raw options, their registration, and the checked plan.
#pragma once

#include "cli/progress.hpp"
#include "kvbench/measure/cache_flush.hpp"
#include "kvbench/report/report.hpp"
#include "kvbench/measure/runner.hpp"
#include "kvbench/measure/sweep.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kvbench {

// What the user typed, typed but unchecked across flags. Axis lists stay text until
// to_sweep_plan parses them, so their errors name the flag and the offending item.
struct SweepCliOptions {
    static constexpr std::uint64_t not_given = ~std::uint64_t{0};
    std::string seq = "128-4096*2";
    std::string batch = "1";
    std::string dim = "1024";
    std::string heads = "16";
    std::string kv_heads = "16,4,1";
    std::string layers = "1";
    std::string threads;  // empty: all available cores
    std::vector<std::string> paths{"cached", "uncached"};
    std::size_t n_reps = 0;          // --reps; 0: not given, the count adapts to --min-time
    std::size_t n_warmup = 3;
    std::string min_time = "0.1s";   // --min-time: wall time per path and point
    bool interleave = false;
    bool resume = false;
    std::string cache_state = "cold";
    std::string flush;  // --flush clflush|stream; empty: clflush where the CPU has it
    std::uint64_t seed = 1;
    bool verify = false;
    bool check = false;
    bool dry_run = false;
    std::string format = "table";
    std::string output;             // -o FILE; empty: stdout only
    std::uint64_t max_memory = not_given;  // bytes; not_given: what the machine has available now
    std::string roofline;           // --roofline FILE; empty: the saved measurement, if any
    bool measure_roofline = false;  // measure the roofline first, in this run
    std::string progress = "auto";  // auto, bar, jsonl or none
    bool no_roofline = false;       // --no-roofline: no roofline %, no measurement, no drift check
};

struct SweepPlan {
    Grid grid;
    RunOptions run;
    OutputFormat format = OutputFormat::table;
    std::optional<std::string> output;
    std::optional<std::uint64_t> max_memory;
    FlushMethod flush = FlushMethod::clflush;  // how a cold repetition is made cold
    std::optional<std::string> roofline;
    bool measure_roofline = false;
    bool no_roofline = false;
    bool dry_run = false;
    ProgressMode progress = ProgressMode::auto_detect;
    bool interleave = false;  // rounds over the whole grid (run_interleaved) instead of point after point
    bool resume = false;      // keep the rows of -o measured by this build with these settings
};

CLI::App* add_sweep_command(CLI::App& app, SweepCliOptions& options);

// Parses the axis lists and applies the cross-flag rules. Throws ConfigError naming the flag.
SweepPlan to_sweep_plan(const SweepCliOptions& options);

}  // namespace kvbench
