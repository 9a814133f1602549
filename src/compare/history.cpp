// History: the chosen rows of every matching run with their metric, and its three formats.
#include "kvbench/compare/history.hpp"

#include "kvbench/compare/run_selection.hpp"
#include "kvbench/report/report.hpp"
#include "three_figures.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <stdexcept>

namespace kvbench {

namespace {

bool any_matches(const std::vector<std::string>& wanted, const auto& matches) {
    return wanted.empty() || std::any_of(wanted.begin(), wanted.end(), matches);
}

bool row_kept(const ResultEntry& entry, const HistoryQuery& query) {
    for (const auto& [column, values] : query.axes) {
        const std::optional<std::string> cell = entry.cell(column);
        if (!cell || !values.contains(*cell)) return false;
    }
    return true;
}

// "2026-12-04 01:06" from "2026-12-04T01:06:33Z".
std::string started(const StoredRun& run) {
    std::string time = run.record.env.timestamp.substr(0, 16);
    std::replace(time.begin(), time.end(), 'T', ' ');
    return time;
}

const std::vector<std::string>& record_columns() {
    static const std::vector<std::string> columns = {"run_id", "started_at", "git_commit", "tool_version", "machine_id",
                                                     "machine_class", "cpu_model", "shard", "point"};
    return columns;
}

std::vector<std::string> record_values(const HistoryLine& line) {
    const Environment& env = line.run.record.env;
    return {fmt::format("{}", line.run.id), env.timestamp, env.git_commit, env.tool_version,
            fmt::format("{}", line.run.machine_id), machine_class(env), env.cpu_model, env.shard, line.point};
}

void write_csv_history(std::ostream& out, const History& history) {
    std::vector<std::string> header = record_columns();
    header.insert(header.end(), history.key_columns.begin(), history.key_columns.end());
    for (const char* column : {"metric", "unit", "median", "min", "max", "reps"}) header.emplace_back(column);
    out << fmt::format("{}\n", fmt::join(header, ","));
    for (const HistoryLine& line : history.lines) {
        std::vector<std::string> fields;
        for (const std::string& value : record_values(line)) fields.push_back(csv_quote_field(value));
        for (const std::string& value : line.key) fields.push_back(csv_quote_field(value));
        fields.insert(fields.end(), {metric_name(history.metric), metric_unit(history.metric),
                                     fmt::format("{}", line.values.median), fmt::format("{}", line.values.min),
                                     fmt::format("{}", line.values.max), fmt::format("{}", line.values.reps)});
        out << fmt::format("{}\n", fmt::join(fields, ","));
    }
}

// A configuration's cell as a sweep's JSON writes it: a whole number as a number ("batch": 1),
// anything else ("f32", a ragged batch's "4 1") as text.
nlohmann::ordered_json key_value(const std::string& cell) {
    std::uint64_t number = 0;
    const auto [end, error] = std::from_chars(cell.data(), cell.data() + cell.size(), number);
    if (!cell.empty() && error == std::errc() && end == cell.data() + cell.size()) return number;
    return cell;
}

void write_json_history(std::ostream& out, const History& history) {
    nlohmann::ordered_json lines = nlohmann::ordered_json::array();
    for (const HistoryLine& line : history.lines) {
        nlohmann::ordered_json record;
        const std::vector<std::string> values = record_values(line);
        for (std::size_t i = 0; i < values.size(); ++i) record[record_columns()[i]] = values[i];
        record["run_id"] = line.run.id;
        record["machine_id"] = line.run.machine_id;
        for (std::size_t i = 0; i < line.key.size(); ++i) record[history.key_columns[i]] = key_value(line.key[i]);
        record["metric"] = metric_name(history.metric);
        record["unit"] = metric_unit(history.metric);
        record["median"] = line.values.median;
        record["min"] = line.values.min;
        record["max"] = line.values.max;
        record["reps"] = line.values.reps;
        lines.push_back(std::move(record));
    }
    out << lines.dump(2) << '\n';
}

void write_table_history(std::ostream& out, const History& history) {
    // Two lines: one would pass 80 columns.
    out << fmt::format("History of {} ({}): each run's median\n  change: from the previous run on the same machine\n",
                       metric_name(history.metric), metric_unit(history.metric));
    if (history.lines.empty()) {
        out << fmt::format("no row matches ({} sweep runs read)\n", history.n_runs_read);
        return;
    }
    std::map<std::int64_t, std::string> machines;
    for (const HistoryLine& line : history.lines) {
        machines[line.run.machine_id] = fmt::format("m{}: {} ({})", line.run.machine_id, line.run.record.env.cpu_model,
                                                    machine_class(line.run.record.env));
    }
    for (const auto& [id, description] : machines) out << description << '\n';
    std::size_t commit_width = 6;
    for (const HistoryLine& line : history.lines) commit_width = std::max(commit_width, line.run.record.env.git_commit.size());
    const std::string header = fmt::format("  {:>4}  {:<16}  {:<{}}  {:<7}  {:>9}  {:>5}  {:>8}", "run", "started",
                                           "commit", commit_width, "machine", "median", "reps", "change");
    std::string point;
    std::map<std::int64_t, double> previous;  // by machine: the last median of this point
    for (const HistoryLine& line : history.lines) {
        if (line.point != point) {
            point = line.point;
            previous.clear();
            out << '\n' << point << '\n' << header << '\n';
        }
        const auto before = previous.find(line.run.machine_id);
        const std::string change = before == previous.end() || before->second == 0
                                       ? ""
                                       : fmt::format("{:+.1f} %", 100 * (line.values.median - before->second) / before->second);
        previous[line.run.machine_id] = line.values.median;
        out << fmt::format("  {:>4}  {:<16}  {:<{}}  {:<7}  {:>9}  {:>5}  {:>8}", line.run.id, started(line.run),
                           line.run.record.env.git_commit, commit_width, fmt::format("m{}", line.run.machine_id),
                           three_figures(line.values.median), line.values.reps, change)
            << '\n';
    }
}

}  // namespace

History read_history(const ResultsDatabase& database, const HistoryQuery& query) {
    History history;
    history.metric = query.metric;
    std::vector<HistoryLine> lines;
    // What --commit and --machine could have named, for a filter that names nothing.
    std::set<std::string> commits_seen, machines_seen;
    for (const StoredRun& run : database.runs()) {
        if (run.record.command != "sweep" || run.n_rows == 0) continue;
        commits_seen.insert(run.record.env.git_commit);
        machines_seen.insert(fmt::format("m{} ({})", run.machine_id, machine_class(run.record.env)));
        if (!any_matches(query.commits, [&](const std::string& c) { return commit_matches(run.record.env.git_commit, c); }) ||
            !any_matches(query.machines, [&](const std::string& m) { return machine_matches(run, m); })) {
            continue;
        }
        ++history.n_runs_read;
        const ResultFile file =
            result_file_of_cells(database.run_cells(run.id), "kvbench database", fmt::format("run {}", run.id));
        if (history.key_columns.empty()) history.key_columns = file.key_columns;
        if (file.key_columns != history.key_columns) continue;  // a sweep of another layout (not expected)
        const std::vector<std::optional<MetricValues>> values = metric_of_rows(file, query.metric);
        for (std::size_t i = 0; i < file.rows.size(); ++i) {
            if (!values[i] || !row_kept(file.rows[i], query)) continue;
            lines.push_back(HistoryLine{run, "", file.rows[i].key, *values[i]});
        }
    }
    // A --commit or --machine that picks no run is a typo's likelier than an empty history: said,
    // as compare says a selector that matches nothing.
    if (history.n_runs_read == 0 && !commits_seen.empty() && !(query.commits.empty() && query.machines.empty())) {
        std::vector<std::string> filters, known;
        if (!query.commits.empty()) {
            filters.push_back(fmt::format("--commit {}", fmt::join(query.commits, ",")));
            known.push_back(fmt::format("commits {}", fmt::join(commits_seen, ", ")));
        }
        if (!query.machines.empty()) {
            filters.push_back(fmt::format("--machine {}", fmt::join(query.machines, ",")));
            known.push_back(fmt::format("machines {}", fmt::join(machines_seen, ", ")));
        }
        throw ConfigError(fmt::format("{}: no sweep run matches; the database's sweeps have {}",
                                      fmt::join(filters, " "), fmt::join(known, "; ")));
    }
    std::vector<std::vector<std::string>> keys;
    for (const HistoryLine& line : lines) keys.push_back(line.key);
    const std::vector<std::string> labels = row_labels(history.key_columns, keys);
    std::map<std::vector<std::string>, std::size_t> first_seen;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        lines[i].point = labels[i];
        first_seen.try_emplace(lines[i].key, first_seen.size());
    }
    std::stable_sort(lines.begin(), lines.end(), [&](const HistoryLine& a, const HistoryLine& b) {
        return first_seen.at(a.key) < first_seen.at(b.key);
    });
    history.lines = std::move(lines);
    return history;
}

void write_history(std::ostream& out, const History& history, OutputFormat format) {
    switch (format) {
    case OutputFormat::table: write_table_history(out, history); return;
    case OutputFormat::csv: write_csv_history(out, history); return;
    case OutputFormat::json: write_json_history(out, history); return;
    default: break;
    }
    throw std::invalid_argument("write_history: table, csv or json only");
}

}  // namespace kvbench
