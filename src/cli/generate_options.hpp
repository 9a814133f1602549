// `kvbench generate` on the command line: raw options, their registration, and the checked plan.
#pragma once

#include "kvbench/measure/generation.hpp"
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
    std::size_t prompt = 512;  // P
    std::size_t n_new = 128;   // T
    std::string batch = "1";
    std::string dim = "1024";
    std::string heads = "16";
    std::string kv_heads = "16,4,1";
    std::string layers = "1";
    std::string threads;  // empty: all available cores
    std::vector<std::string> paths{"cached", "uncached"};
    std::string cache_state = "cold";
    std::uint64_t seed = 1;
    bool verify = false;
    std::string format = "table";
    std::string output;        // -o FILE; empty: stdout only
    std::size_t fit_from = 0;  // fit the growth law over N >= this; 0: every step
    std::string time_unit = "auto";  // --time-unit of the human tables: auto, ns, us, ms or s
};

struct GeneratePlan {
    Grid grid;  // one point per model shape and thread count; each point's seq_len is P + T
    GenerationOptions generation;
    OutputFormat format = OutputFormat::table;
    std::optional<std::string> output;
    std::size_t fit_from = 0;
    TableOptions table;  // how the human tables render (--time-unit)
};

CLI::App* add_generate_command(CLI::App& app, GenerateCliOptions& options);

// Parses the lists and applies the cross-flag rules. Throws ConfigError naming the flag.
GeneratePlan to_generate_plan(const GenerateCliOptions& options);

}  // namespace kvbench
