// A generation's rows: one per step, path and configuration, with the step columns (docs/generate.md#the-csv-and-json).
#pragma once

#include "kvbench/measure/generation.hpp"
#include "kvbench/measure/roofline.hpp"
#include "kvbench/report/export_manager.hpp"

#include <vector>

namespace kvbench {

// One finished path of one configuration: its steps, in order.
struct GenerationPath {
    GridPoint point;
    DecodePath path = DecodePath::cached;
    std::vector<GenerationStep> steps;
};

// The rows of one configuration's finished paths: reps = 1 and the step's own latency as its
// median; the prefill costs a full forward, whichever path runs it; each row's speedup is the
// uncached latency of the same step over its own; the extra columns are step, phase, prompt and
// new_tokens. `verify_errors`: one per step both paths finished, when --verify ran.
ReportRows generation_rows(const std::vector<GenerationPath>& paths, const GenerationOptions& options,
                           const std::vector<double>& verify_errors, const Roofline* roofline, const Environment& env);

// Appends `more` to `rows`, row by row and column by column, and gives its rows the speedup
// of the uncached steps `rows` holds (another cache type's configuration ran the forward).
// Requires: both have the same extra columns, or `rows` has none and no rows yet.
void append_rows(ReportRows& rows, const ReportRows& more);

}  // namespace kvbench
