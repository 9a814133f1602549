// The `kvbench compare` subcommand: options, reading both sides (files or runs of a results database), the comparison, its exit status.
#include "cli/compare_command.hpp"

#include "cli/exit_status.hpp"
#include "cli/output_options.hpp"
#include "cli/output_streams.hpp"
#include "kvbench/compare/compare_report.hpp"
#include "kvbench/compare/comparison.hpp"
#include "kvbench/compare/result_file.hpp"
#include "kvbench/compare/run_selection.hpp"
#include "kvbench/engine/config.hpp"
#include "kvbench/files/input_file.hpp"
#include "kvbench/report/database.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>

#include <unistd.h>  // STDOUT_FILENO

namespace kvbench {

namespace {

constexpr const char* footer = R"(BASE and NEW: result files (sweep/generate CSV, JSON or JSON Lines; Google
Benchmark JSON), or runs of the results database --db names: run:12,
commit:abc1234, machine:epyc, or terms joined by commas (commit:abc1234,
machine:epyc); runs that share a configuration give the latest run's row.

Verdicts: a Mann-Whitney U test on every repetition (JSON reports, Google
Benchmark JSON, the database), alpha 0.05, and the shift of NEW against BASE
with its 95 % interval (Hodges-Lehmann); CSV reports keep no samples, so a
change counts there only when the [min, max] ranges do not overlap. SLOWER =
significantly worse by more than --threshold (with --require-interval: the
whole interval worse by more); COUNTS DIFFER = flops, bytes or kv_bytes differ
(the rows did different work).

Examples:
  kvbench compare results/reference-sweep-2026-12-01.csv new.csv
  kvbench compare old.json new.json --metric speedup --threshold 25% -f md
  kvbench compare --db results.sqlite --base commit:abc1234 --new commit:def5678
  scripts/bench-gate.sh    the CI gate: a short sweep against results/gate/

Exit status: 0 no failing row; 1 a SLOWER or COUNTS DIFFER row; 2 bad usage;
3 NEW does not cover BASE: no row in common, or BASE rows missing from NEW
(--allow-missing lists them instead).)";

// The results database selectors read from: --db, else $KVBENCH_DB.
std::string database_for(const CompareCliOptions& options, const std::string& side, const std::string& selector) {
    if (options.db) return *options.db;
    if (const std::optional<std::string> configured = default_database()) return *configured;
    throw ConfigError(fmt::format("{} {}: names runs of a results database: give --db FILE (or set ${})", side,
                                  selector, database_variable));
}

ResultFile read_side(const CompareCliOptions& options, const std::string& text, const std::string& side) {
    if (is_run_selector(text)) {
        const RunSelector selector = parse_run_selector(text, side);
        const std::string path = database_for(options, side, text);
        try {
            return read_selected_runs(ResultsDatabase::open_for_reading(path), selector);
        } catch (const std::runtime_error& error) {
            throw ConfigError(database_read_error(path, error.what()));
        }
    }
    // Not std::filesystem::exists(text): it throws on a symlink loop, which read_result_file names.
    if (!input_path_exists(text)) {
        throw ConfigError(fmt::format("{} {}: no such file (or name runs of --db: run:12, commit:abc1234, machine:epyc)",
                                      side, text));
    }
    if (is_sqlite_file(text)) {
        throw ConfigError(fmt::format("{} {}: a results database: name its runs, e.g. kvbench compare --db {} run:1 "
                                      "run:2 (kvbench history --db {} lists them)",
                                      side, text, text, text));
    }
    return read_result_file(text);
}

// Two selectors that share a run of the database compare that run's rows with themselves: each
// side takes a configuration's row from its latest run, so machine:m1 against run:3, its latest,
// is run 3 against run 3, all "same", p = 1, a verdict where nothing was compared. Whatever their
// words, selections that share a run are refused.
void refuse_shared_runs(const CompareCliOptions& options, const ResultFile& base, const ResultFile& other) {
    std::vector<std::int64_t> shared;
    std::set_intersection(base.run_ids.begin(), base.run_ids.end(), other.run_ids.begin(), other.run_ids.end(),
                          std::back_inserter(shared));
    if (shared.empty()) return;
    throw ConfigError(fmt::format("--base {} and --new {} share {} {}: {} rows would be compared with themselves; "
                                  "give the sides runs apart (another commit, machine or run:ID)",
                                  options.base_path, options.new_path, shared.size() == 1 ? "run" : "runs",
                                  fmt::join(shared, ", "), shared.size() == 1 ? "its" : "their"));
}

// --alpha from 0.0001 to 0.5. Not CLI::Range: NaN fails none of its comparisons, and an alpha of
// NaN turned every row's test off (a 200 % slowdown judged "same", exit 0).
CLI::Validator alpha_range() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            double alpha = 0;
            const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), alpha);
            if (error == std::errc() && end == text.data() + text.size() && alpha >= 0.0001 && alpha <= 0.5) return "";
            return fmt::format("Value {} not in range 0.0001 to 0.5", text);  // parse_errors.cpp words it
        },
        "0.0001-0.5");
}

}  // namespace

double parse_threshold(const std::string& text) {
    std::string digits = text;
    const bool percent = !digits.empty() && digits.back() == '%';
    if (percent) digits.pop_back();
    double value = -1;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    // !(0 <= value <= 1000) also refuses nan and inf, which from_chars reads.
    if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() || !(value >= 0 && value <= 1000)) {
        throw ConfigError(fmt::format("--threshold '{}': must be a percentage from 0 to 1000 (e.g. 5%)", text));
    }
    if (!percent && value > 0 && value < 1) {
        throw ConfigError(fmt::format("--threshold {0}: a bare number is a percentage, so this is {0} %, not {1:g} %; "
                                      "write {1:g}% for {1:g} percent, or {0}% if you mean {0} %",
                                      text, 100 * value));
    }
    return value;
}

CLI::App* add_compare_command(CLI::App& app, CompareCliOptions& options) {
    CLI::App* command = app.add_subcommand(
        "compare", "Compare two result files, or two runs of the results database, row by row: faster, slower or "
                   "the same, and by how much");
    command->add_option("BASE,--base", options.base_path, "The reference: a result file, or runs of --db (run:12, commit:abc1234)")
        ->type_name("FILE|RUNS")
        ->required();
    command->add_option("NEW,--new", options.new_path, "What to judge against BASE: a result file, or runs of --db")
        ->type_name("FILE|RUNS")
        ->required();
    command->add_option("--db", options.db,
                        fmt::format("The results database BASE and NEW name runs of (default: ${})", database_variable))
        ->type_name("FILE");
    command->add_option("--threshold", options.threshold,
                        "A row fails when significantly worse by more than this percentage (5% or 5; 0.05 is "
                        "refused as ambiguous)")
        ->type_name("PCT")
        ->capture_default_str();
    command->add_flag("--require-interval", options.require_interval,
                      "A row fails only when its whole 95 % interval is worse by more than --threshold: the "
                      "slowdown exceeds it with 95 % confidence (1 - --alpha); rows without samples never fail");
    command->add_option("--metric", options.metric,
                        "What to compare: latency (the row's own time), or the ratios speedup (uncached / cached), "
                        "mha_ratio (MHA's time / this grouping's), roofline_pct, gflops")
        ->type_name("NAME")
        ->transform(CLI::IsMember({"latency", "speedup", "roofline_pct", "gflops", "mha_ratio"}, CLI::ignore_case))
        ->capture_default_str();
    command->add_option("-f,--format", options.format, "Output format: table, md or json")
        ->type_name("FORMAT")
        ->transform(CLI::IsMember({"table", "md", "json"}, CLI::ignore_case))
        ->capture_default_str();
    command->add_option("--fail-on", options.fail_on,
                        "slower: exit 1 on SLOWER or COUNTS DIFFER rows; counts: only on COUNTS DIFFER "
                        "(timings shown, never gated)")
        ->type_name("slower|counts")
        ->transform(CLI::IsMember({"slower", "counts"}, CLI::ignore_case))
        ->capture_default_str();
    command->add_flag("--allow-missing", options.allow_missing,
                      "Rows of BASE that NEW lacks are listed, not a failure (exit 3 without it)");
    command->add_option("--alpha", options.alpha, "Significance level of the U test; the interval is at 1 - alpha")
        ->check(alpha_range())
        ->capture_default_str();
    command->footer(footer);
    return command;
}

int run_compare_command(const CompareCliOptions& options) {
    static const std::map<std::string, Metric> metrics = {{"latency", Metric::latency},
                                                          {"speedup", Metric::speedup},
                                                          {"roofline_pct", Metric::roofline_pct},
                                                          {"gflops", Metric::gflops},
                                                          {"mha_ratio", Metric::mha_ratio}};
    static const std::map<std::string, CompareFormat> formats = {
        {"table", CompareFormat::table}, {"md", CompareFormat::md}, {"json", CompareFormat::json}};
    CompareOptions compare_options;
    compare_options.metric = metrics.at(options.metric);
    compare_options.threshold_pct = parse_threshold(options.threshold);
    compare_options.alpha = options.alpha;
    compare_options.require_interval = options.require_interval;

    const ResultFile base = read_side(options, options.base_path, "BASE");
    const ResultFile other = read_side(options, options.new_path, "NEW");
    refuse_shared_runs(options, base, other);
    const Comparison comparison = compare_results(base, other, compare_options);
    write_comparison(std::cout, comparison, formats.at(options.format), table_width_for(STDOUT_FILENO));
    std::cout.flush();  // the table first, then any failure line on stderr, in a log that merges both

    if (base.rows.empty() || other.rows.empty()) {
        fmt::print(stderr, "kvbench: compare: {} holds no rows (a header only, or an empty \"rows\"): nothing was compared; exit {}\n",
                   base.rows.empty() ? options.base_path : options.new_path, exit_incomplete);
        return exit_incomplete;
    }
    if (comparison.rows.empty() && comparison.n_without_metric == 0) {
        fmt::print(stderr,
                   "kvbench: compare: {} and {} have no row in common: nothing was compared (they measured "
                   "different grids, or one is empty); exit {}\n",
                   options.base_path, options.new_path, exit_incomplete);
        return exit_incomplete;
    }
    const std::size_t n_counts = count_verdicts(comparison, Verdict::counts_differ);
    const std::size_t n_slower = count_verdicts(comparison, Verdict::regression);
    const bool fail = n_counts > 0 || (options.fail_on == "slower" && n_slower > 0);
    if (fail) {
        std::vector<std::string> failed;
        for (const ComparedRow& row : comparison.rows) {
            if (row.verdict == Verdict::counts_differ || (options.fail_on == "slower" && row.verdict == Verdict::regression)) {
                failed.push_back(fmt::format("{} ({})", row.label, verdict_name(row.verdict)));
            }
        }
        // One line for a CI log: the first rows by name, the rest counted (the table lists them all).
        constexpr std::size_t rows_named = 3;
        const std::size_t n_failed = failed.size();
        if (n_failed > rows_named) failed.resize(rows_named);
        const std::string more = n_failed > rows_named ? fmt::format("; and {} more", n_failed - rows_named) : "";
        fmt::print(stderr, "kvbench: compare: {} failed on {} (threshold {}{}), {} row{}: {}{}\n", options.new_path,
                   metric_name(compare_options.metric), options.threshold,
                   options.require_interval ? ", whole interval" : "", n_failed, n_failed == 1 ? "" : "s",
                   fmt::join(failed, "; "), more);
    }
    const bool incomplete = !comparison.only_in_base.empty() && !options.allow_missing;
    if (incomplete) {
        fmt::print(stderr,
                   "kvbench: compare: {} lacks {} of the {} rows of {} (listed under \"only in BASE\"): a run that "
                   "stopped early, or another grid? --allow-missing compares the rows there are\n",
                   options.new_path, comparison.only_in_base.size(), comparison.n_base_rows, options.base_path);
    }
    return fail ? exit_failure : incomplete ? exit_incomplete : exit_ok;
}

}  // namespace kvbench
