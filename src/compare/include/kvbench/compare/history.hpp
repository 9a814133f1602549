// A metric of chosen points across the runs of a results database, commit after commit and machine beside machine.
#pragma once

#include "kvbench/compare/comparison.hpp"
#include "kvbench/report/database.hpp"
#include "kvbench/report/report.hpp"

#include <map>
#include <ostream>
#include <set>
#include <string>
#include <vector>

namespace kvbench {

// Which rows of which runs: every filter that is not empty must hold (docs/database.md#history).
struct HistoryQuery {
    Metric metric = Metric::latency;
    std::map<std::string, std::set<std::string>> axes;  // key column -> the values kept, as the cells hold them
    std::vector<std::string> commits;                   // a run of any of them (commit_matches)
    std::vector<std::string> machines;                  // a run on any of them (machine_matches)
};

// One point's metric in one run.
struct HistoryLine {
    StoredRun run;
    std::string point;              // the row's label, as compare names rows
    std::vector<std::string> key;   // one value per History::key_columns
    MetricValues values;
};

struct History {
    Metric metric = Metric::latency;
    std::vector<std::string> key_columns;
    std::vector<HistoryLine> lines;  // point by point (in the order the points first appear), run after run
    std::size_t n_runs_read = 0;     // sweep runs that passed the commit and machine filters
};

// The history of the sweep runs of `database` that `query` picks, oldest run first within each
// point. A generation's runs are left out: their rows are steps, not points.
History read_history(const ResultsDatabase& database, const HistoryQuery& query);

// table: one block per point, a line per run, with the change from the previous run on the same
// machine; csv and json: one record per line with every key column (plots/kvbench_plot.py's
// history figure reads the csv). Requires: format is table, csv or json.
void write_history(std::ostream& out, const History& history, OutputFormat format);

}  // namespace kvbench
