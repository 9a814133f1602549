// --resume: the rows of a sweep's own report that this build measured with these settings, matched to the grid.
#pragma once

#include "kvbench/measure/run_context.hpp"
#include "kvbench/measure/runner.hpp"
#include "kvbench/measure/sweep.hpp"
#include "kvbench/report/grid_rows.hpp"
#include "kvbench/report/read_report.hpp"

#include <string>
#include <vector>

namespace kvbench {

// Whether a saved row measured `point` on `path` the way `options` would: same configuration,
// threads, cache state and repetition policy (and a verification when options ask for one).
bool row_matches(const ResultRow& row, const GridPoint& point, DecodePath path, const RunOptions& options);

// The saved rows by grid point: a point whose every planned path has a matching row of this
// build keeps them and is not measured again; rows of another build are dropped, with a warning;
// rows of points outside the grid are kept as they are. Throws ConfigError, naming how, when a
// row of this build measured a grid point otherwise (another repetition policy or cache state,
// without a --verify this run asks for, a path this run leaves out): resuming would replace it.
GridRows match_saved_rows(const std::vector<SavedRow>& saved, const std::vector<GridPoint>& points,
                          const RunOptions& options, const Environment& env, const RunMessages& messages,
                          const std::string& file);

// Reads `file` (a missing file resumes nothing) and matches its rows, saying on stderr what it
// keeps and drops. Throws ConfigError ("--resume: ...") when the file is not a kvbench report.
GridRows resume_rows(const std::string& file, OutputFormat format, const std::vector<GridPoint>& points,
                     const RunOptions& options, const Environment& env, const RunMessages& messages);

}  // namespace kvbench
