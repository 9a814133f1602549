// The `kvbench history` subcommand: filters to a query, the database read, the history written in its formats.
#include "cli/history_command.hpp"

#include "cli/exit_status.hpp"
#include "cli/kv_dtype_option.hpp"
#include "cli/option_conventions.hpp"
#include "cli/output_streams.hpp"
#include "cli/value_list.hpp"
#include "kvbench/compare/history.hpp"
#include "kvbench/compare/run_selection.hpp"
#include "kvbench/engine/config.hpp"
#include "kvbench/files/atomic_file.hpp"

#include <fmt/format.h>

#include <iostream>

namespace kvbench {

namespace {

constexpr const char* history_footer = R"(Reads the sweep runs of a results database (--db, written by sweep --db or
-o run.sqlite) and lists one metric of each chosen point in every run that
measured it: commit after commit, machine beside machine. The point filters
take sweep's lists (-n 1024 -g 4,1); without them, every point.

Examples:
  kvbench history --db results.sqlite -n 1024 -g 4 --paths cached
  kvbench history --db results.sqlite --metric speedup --machine epyc
  kvbench history --db results.sqlite -n 1024 -f csv -o hist.csv
  /usr/bin/python3 plots/kvbench_plot.py hist.csv    its figure

Exit status: 0 ok; 1 a file could not be written; 2 bad usage.)";

const OutputFormats& history_formats() {
    static const OutputFormats formats{OutputFormat::table, OutputFormat::csv, OutputFormat::json};
    return formats;
}

std::set<std::string> as_texts(const std::vector<std::size_t>& values) {
    std::set<std::string> texts;
    for (const std::size_t value : values) texts.insert(fmt::format("{}", value));
    return texts;
}

// Repeatable and comma-separated: --commit a --commit b,c is a, b, c.
std::vector<std::string> split_all(const std::vector<std::string>& items) {
    std::vector<std::string> words;
    for (const std::string& item : items) {
        std::size_t start = 0;
        while (start <= item.size()) {
            const std::size_t comma = std::min(item.find(',', start), item.size());
            if (comma > start) words.push_back(item.substr(start, comma - start));
            start = comma + 1;
        }
    }
    return words;
}

HistoryQuery to_query(const HistoryCliOptions& options) {
    static const std::map<std::string, Metric> metrics = {{"latency", Metric::latency},
                                                          {"speedup", Metric::speedup},
                                                          {"roofline_pct", Metric::roofline_pct},
                                                          {"gflops", Metric::gflops},
                                                          {"mha_ratio", Metric::mha_ratio}};
    HistoryQuery query;
    query.metric = metrics.at(parse_choice(options.metric, "--metric",
                                           {"latency", "speedup", "roofline_pct", "gflops", "mha_ratio"}));
    const auto axis = [&](const std::optional<std::string>& text, const char* column, const char* option) {
        if (text) query.axes[column] = as_texts(parse_value_list(*text, option));
    };
    axis(options.seq, "seq", "--seq");
    axis(options.batch, "batch", "--batch");
    axis(options.dim, "dim", "--dim");
    axis(options.heads, "heads", "--heads");
    axis(options.kv_heads, "kv_heads", "--kv-heads");
    axis(options.layers, "layers", "--layers");
    axis(options.threads, "threads", "--threads");
    if (options.kv_dtype) {
        for (const KvDtypePair pair : parse_stored_kv_dtypes(*options.kv_dtype)) query.axes["kv_dtype"].insert(kv_dtype_name(pair.key, pair.value));
    }
    if (options.cache_state) {
        query.axes["cache_state"].insert(parse_choice(*options.cache_state, "--cache-state", {"cold", "warm"}));
    }
    const DecodePaths paths = parse_paths(options.paths, "--paths");
    if (!(paths.cached && paths.uncached)) query.axes["path"] = {paths.cached ? "cached" : "uncached"};
    query.commits = split_all(options.commits);
    for (const std::string& commit : query.commits) {
        // A shorter one would match no run, and the history would say only that it found none.
        if (commit.size() < min_commit_prefix) {
            throw ConfigError(fmt::format("--commit {}: shorter than {} characters (name a commit by {} or more "
                                          "characters of its hash)",
                                          commit, min_commit_prefix, min_commit_prefix));
        }
    }
    query.machines = split_all(options.machines);
    return query;
}

std::string database_path(const HistoryCliOptions& options) {
    if (options.db) return *options.db;
    if (const std::optional<std::string> configured = default_database()) return *configured;
    throw ConfigError(fmt::format("history reads a results database: give --db FILE (or set ${})", database_variable));
}

}  // namespace

CLI::App* add_history_command(CLI::App& app, HistoryCliOptions& options) {
    CLI::App* command =
        app.add_subcommand("history", "A metric of chosen points across the commits and machines of a results database");
    command->add_option("--db", options.db, fmt::format("The results database (default: ${})", database_variable))
        ->type_name("FILE");
    list_option(*command, "-n,--seq", options.seq, "Only these context lengths N");
    list_option(*command, "-b,--batch", options.batch, "Only these batch sizes B");
    list_option(*command, "-d,--dim", options.dim, "Only these model dimensions D");
    list_option(*command, "--heads", options.heads, "Only these query head counts H");
    list_option(*command, "-g,--kv-heads", options.kv_heads, "Only these KV head counts G");
    list_option(*command, "-l,--layers", options.layers, "Only these layer counts L");
    list_option(*command, "-t,--threads", options.threads, "Only these thread counts T");
    list_option(*command, "--kv-dtype", options.kv_dtype, "Only these KV-cache element types");
    command->add_option("--cache-state", options.cache_state, "Only cold or warm runs")->type_name("cold|warm");
    list_option(*command, "--paths", options.paths, "Decode paths: cached, uncached or both");
    command->add_option("--metric", options.metric,
                        "latency (the median step), speedup, mha_ratio, roofline_pct or gflops (docs/compare.md#metrics)")
        ->type_name("NAME")
        ->capture_default_str();
    command->add_option("--commit", options.commits, "Only runs of these commits (a prefix of 4 or more characters)")
        ->type_name("SHA");
    command->add_option("--machine", options.machines,
                        "Only runs on these machines: m3 (an id), or a part of the CPU model or class (epyc, avx512)")
        ->type_name("TEXT");
    add_output_options(command, options.out, history_formats(), false);
    command->footer(history_footer);
    return command;
}

int run_history_command(const HistoryCliOptions& options) {
    const HistoryQuery query = to_query(options);
    const OutputPlan plan = to_output_plan(options.out, history_formats(), false);
    const std::string path = database_path(options);
    History history;
    try {
        history = read_history(ResultsDatabase::open_for_reading(path), query);
    } catch (const std::runtime_error& error) {
        throw ConfigError(database_read_error(path, error.what()));
    }
    const OutputStreams streams(plan);
    std::vector<std::string> written;
    for (const OutputTarget& target : plan.files()) {
        write_file_atomically(target.path, [&](std::ostream& out) { write_history(out, history, target.format); });
        written.push_back(target.path);
    }
    if (plan.stdout_is_report()) {
        write_history(streams.report(), history, plan.format);
    } else if (!plan.quiet) {
        write_history(std::cout, history, OutputFormat::table);
    }
    if (!written.empty()) {
        streams.message(fmt::format("wrote {} line{} to {}", history.lines.size(), history.lines.size() == 1 ? "" : "s",
                                    fmt::join(written, ", ")));
        for (const OutputTarget& target : plan.files()) {
            if (target.format == OutputFormat::csv) {
                streams.message(plot_hint("plots/kvbench_plot.py", target.path));
            }
        }
    }
    check_report_stream(std::cout);
    return exit_ok;
}

}  // namespace kvbench
