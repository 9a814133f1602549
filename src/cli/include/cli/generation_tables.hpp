// The tables of `kvbench generate`: the summary per configuration and path, the growth law, and -v's lines.
#pragma once

#include "cli/generate_options.hpp"
#include "cli/output_streams.hpp"
#include "kvbench/measure/run_context.hpp"
#include "kvbench/report/generation_rows.hpp"
#include "kvbench/report/summary_tables.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace kvbench {

// "B=1 D=1024 H=16 G=4 L=1 T=2 kv=f16": a configuration as generate's lines name it. The uncached
// path keeps no cache, so its lines name no cache type (it runs with f32 K and V).
std::string shape_label(const GridPoint& point, DecodePath path = DecodePath::cached);

// One line per configuration and path, named by what varies between them (the rest in the
// caption): first token, per token and p90, total, tokens/s, the decode steps' median roofline %
// where the run has a roofline for its thread count, FLOPs, the KV cache at the end, and the
// uncached/cached ratio of total times.
SummaryTable generation_summary_table(const std::vector<GenerationPath>& results, const GeneratePlan& plan,
                                      const Rooflines& rooflines);

// The growth law a·N^k of each configuration and path over its decode steps, beside the exponent
// the cost model predicts on this machine's roofline (the assumed one without).
SummaryTable generation_growth_table(const std::vector<GenerationPath>& results, const GeneratePlan& plan,
                                     const Rooflines& rooflines);

// -v: one line per configuration and path from `first` on, with what the summary table shows.
void print_generation_details(const std::vector<GenerationPath>& results, std::size_t first,
                              const OutputStreams& streams);

}  // namespace kvbench
