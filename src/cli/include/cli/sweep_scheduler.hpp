// The sweep's scheduler: each point measured, its rows built and judged, a failure said, every finished point saved; and the sweep's outcome.
#pragma once

#include "cli/output_streams.hpp"
#include "cli/progress.hpp"
#include "cli/sweep_options.hpp"
#include "kvbench/measure/budget.hpp"
#include "kvbench/measure/run_context.hpp"
#include "kvbench/measure/runner.hpp"
#include "kvbench/measure/verification.hpp"
#include "kvbench/report/export_manager.hpp"
#include "kvbench/report/grid_rows.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

namespace kvbench {

// "B=1 N=128 D=1024 H=16 G=4 L=1 T=2 (GQA-4)": a point as the sweep's messages name it.
std::string point_label(const GridPoint& point);

// The cold-cache flush buffer a sweep holds beside its points (0 for clflush or a warm cache).
std::uint64_t flush_buffer_bytes(const SweepPlan& plan, const Environment& env);
// A point's memory plus what the run holds beside it: the flush buffer, and the bandwidth probe
// (roofline, drift check), which runs while the last point's weights are held.
MemoryBudget sweep_point_memory(const GridPoint& point, const SweepPlan& plan, const Environment& env);

// What measuring hands on: every finished row, and what went wrong.
struct SweepOutcome {
    GridRows rows;
    std::size_t n_points = 0;            // points this run measures (those resumed excluded)
    std::size_t n_resumed = 0;           // points whose rows --resume kept
    std::size_t n_finished = 0;          // points measured in full, failed ones included
    std::vector<std::string> failures;   // one line per failed point: its configuration and why
    VerifyTally verified;                // --verify, over the points it passed or failed
    std::size_t n_checked = 0;           // --check
    double worst_check_error = 0;
    int stop_signal = 0;                 // the signal that stopped the sweep; 0 when it ran to the end
};

// hyperfine's Scheduler for a sweep. Points run one after another through a PointMeasurer (the
// machine's PointRunner, or a test's fake), or in interleaved rounds (run_interleaved, which
// drives the machine itself). Every point ends in finish_point, measured or failed: its rows are
// built, judged (--check, --verify), kept and saved before the point is announced, so a reader of
// the progress stream finds it in the file. A failing point is said and the sweep goes on.
class SweepScheduler {
public:
    // All four outlive the scheduler.
    SweepScheduler(const SweepPlan& plan, const RunContext& context, ExportManager& exporter,
                   const OutputStreams& streams, RunMessages messages);

    // Measures every point of context.points that `resumed` holds no rows for. Returns when every
    // point has finished or `stop` is set (the point then running is dropped).
    SweepOutcome run(GridRows resumed, PointMeasurer& runner, const Evict& evict, const std::atomic<bool>& stop);

private:
    void measure_in_order(const std::vector<std::size_t>& to_measure, PointMeasurer& runner,
                          const std::atomic<bool>& stop);
    void measure_interleaved(const std::vector<std::size_t>& to_measure, const Evict& evict,
                             const std::atomic<bool>& stop);
    void start_point(std::size_t i);
    void finish_point(std::size_t i, const PointMeasurement* measured, std::exception_ptr error);
    void judge(const GridPoint& point, const PointMeasurement& measured);
    void report_failure(std::size_t i, const std::string& reason);
    // What interleaving may keep allocated across rounds: what the pre-flight allows.
    std::uint64_t resident_budget_bytes() const;

    const SweepPlan& plan_;
    const RunContext& context_;
    ExportManager& exporter_;
    const OutputStreams& streams_;
    RunMessages messages_;
    SweepOutcome outcome_;
    Progress* progress_ = nullptr;  // the running sweep's, during run()
};

// The closing lines (verify, check, the files written, failed points, a stop) and the exit
// status: 0; 1 when a point failed or a file could not be written; 128 + the signal when stopped.
// Throws std::runtime_error when stdout could not be written.
int report_sweep_outcome(const SweepPlan& plan, const SweepOutcome& outcome, const ExportResult& exported,
                         const ExportManager& exporter, const OutputStreams& streams, const RunMessages& messages);

}  // namespace kvbench
