// The `kvbench merge` subcommand: every input's runs read, checked and ordered as one grid, then written to each target.
#include "cli/merge_command.hpp"

#include "cli/exit_status.hpp"
#include "cli/output_streams.hpp"
#include "kvbench/files/atomic_file.hpp"
#include "kvbench/report/merge.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <system_error>

namespace kvbench {

namespace {

constexpr const char* merge_footer = R"(Joins the reports of a grid's shards (sweep --shard K/N on N machines) into
one report: kvbench CSV, JSON or JSON Lines files, or results databases (every
run of each). Refused: inputs of different builds (tool version, commit, build
type, compiler), of different settings (repetitions, warm-up, seed, cache
state), or that overlap (one configuration twice). Said, not refused: shards
on different machine classes, shards missing, a JSON Lines shard's last line
cut short (left out). The rows come out in the grid's order: model shape, MHA
first, then B, N, T, KV type; cached first.

Examples:
  kvbench merge shard-1.json shard-2.json shard-3.json shard-4.json -o grid.json
  kvbench merge shard-*.csv -o grid.csv
  kvbench merge shard-*.sqlite -o results.sqlite   every run, into one database

Exit status: 0 ok; 1 a file could not be written; 2 the inputs do not belong
together, or bad usage.)";

// A merge writes to a database only when -o or --export names one (never $KVBENCH_DB).
const OutputFormats& merge_formats() {
    static const OutputFormats formats{OutputFormat::csv, OutputFormat::json, OutputFormat::jsonl, OutputFormat::sql,
                                       OutputFormat::sqlite};
    return formats;
}

}  // namespace

CLI::App* add_merge_command(CLI::App& app, MergeCliOptions& options) {
    CLI::App* command = app.add_subcommand("merge", "Join the reports of a grid's shards into one report");
    command->add_option("INPUT", options.inputs, "Shard reports (csv, json, jsonl) or results databases")
        ->type_name("FILE")
        ->required();
    add_output_options(command, options.out, merge_formats(), false);
    command->footer(merge_footer);
    return command;
}

namespace {

// A report written over one of its own inputs would replace a shard with the merge, the shard's
// rows then only in the merged file; a database target only adds runs, so it may be an input.
void refuse_input_as_output(const OutputPlan& plan, const std::vector<std::string>& inputs) {
    for (const OutputTarget& target : plan.files()) {
        if (target.format == OutputFormat::sqlite) continue;
        for (const std::string& input : inputs) {
            std::error_code error;
            if (std::filesystem::equivalent(target.path, input, error)) {
                throw ConfigError(fmt::format("-o {}: it is the input {}; the merge would replace it (name a new file)",
                                              target.path, input));
            }
        }
    }
}

}  // namespace

int run_merge_command(const MergeCliOptions& options) {
    OutputCliOptions out = options.out;
    out.no_db = true;  // never $KVBENCH_DB: it may hold the shards' runs already
    const OutputPlan plan = to_output_plan(out, merge_formats());
    refuse_input_as_output(plan, options.inputs);
    const OutputStreams streams(plan);
    const RunMessages messages = cli_messages();

    std::vector<MergeRun> runs;
    for (const std::string& input : options.inputs) {
        std::vector<MergeRun> read = read_merge_input(input);
        runs.insert(runs.end(), std::make_move_iterator(read.begin()), std::make_move_iterator(read.end()));
    }
    const MergedReport merged = merge_runs(std::move(runs));
    for (const std::string& warning : merged.warnings) messages.warning(warning);

    bool failed = false;
    std::vector<std::string> written;
    std::vector<std::string> unchanged;  // databases that held every run already: nothing was merged into them
    for (const OutputTarget& target : plan.files()) {
        try {
            if (target.format == OutputFormat::sqlite) {
                std::vector<std::string> skipped;
                add_merged_runs(target.path, merged, skipped);
                for (const std::string& source : skipped) {
                    messages.notice(fmt::format("{} already holds the run of {}: not added again", target.path, source));
                }
                if (skipped.size() == merged.runs.size()) {
                    unchanged.push_back(target.path);
                    continue;
                }
            } else {
                write_file_atomically(target.path, [&](std::ostream& file) { write_merged(file, target.format, merged); });
            }
            written.push_back(target.path);
        } catch (const std::runtime_error& error) {
            messages.failure(error.what());
            failed = true;
        }
    }
    if (plan.stdout_is_report()) write_merged(streams.report(), plan.format, merged);
    if (!written.empty() || unchanged.empty() || plan.stdout_is_report()) {
        streams.message(fmt::format("merged {} row{} of {} run{}{}", merged.order.size(),
                                    merged.order.size() == 1 ? "" : "s", merged.runs.size(),
                                    merged.runs.size() == 1 ? "" : "s",
                                    written.empty() ? "" : fmt::format(" into {}", fmt::join(written, ", "))));
    }
    if (!unchanged.empty()) {
        streams.message(fmt::format("nothing added to {}: {} every run already", fmt::join(unchanged, ", "),
                                    unchanged.size() == 1 ? "it holds" : "they hold"));
    }
    check_report_stream(std::cout);
    return failed ? exit_failure : exit_ok;
}

}  // namespace kvbench
