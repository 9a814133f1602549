// The dry runs of sweep and generate: every point with its counts, memory and estimated time, for
// the terminal and for files (-o, -f), nothing measured.
#pragma once

#include "cli/generate_options.hpp"
#include "cli/plan_sheet.hpp"
#include "cli/sweep_options.hpp"
#include "kvbench/measure/run_context.hpp"

#include <cstddef>

namespace kvbench {

// The terminal shows this many points at most; the files hold every one.
inline constexpr std::size_t dry_run_table_rows = 50;

// One row per point of the grid that fits: its axes, FLOPs and bytes per step of each path it
// times, the KV cache, its memory by owner and its estimated time; the notes total them and
// say what a real run of this grid needs (--yes, and the likely intent of a mistyped range).
Sheet sweep_dry_run_sheet(const SweepPlan& plan, const RunContext& context);

// One row per configuration: its axes, the FLOPs of the whole generation on each path, the KV
// cache at its end, its memory, its steps and estimated time.
Sheet generate_dry_run_sheet(const GeneratePlan& plan, const RunContext& context);

// Writes the plan through emit_sheet to every target but a results database, which a plan is
// not a run for (-o run.sqlite or -f sql: the terminal instead), after refusing (ConfigError)
// to replace a file that holds anything but an earlier plan of the same format: `-o run.csv
// --dry-run` must not overwrite results. Returns exit_ok.
int emit_dry_run(const Sheet& sheet, const OutputPlan& out);

}  // namespace kvbench
