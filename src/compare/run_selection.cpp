// Run selectors: parsing, matching commits and machines, and the rows of the chosen runs, the latest winning.
#include "kvbench/compare/run_selection.hpp"

#include "kvbench/engine/ascii_case.hpp"
#include "kvbench/engine/config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

namespace kvbench {

namespace {

// A prefix this short names too many commits to be meant.

// The hash of `git describe --always --dirty`'s name: after the last "-g", without "-dirty".
std::string commit_hash(std::string name) {
    if (name.ends_with("-dirty")) name.resize(name.size() - 6);
    const std::size_t g = name.rfind("-g");
    return g == std::string::npos ? name : name.substr(g + 2);
}

std::optional<std::int64_t> whole_number(std::string_view text) {
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
    return value;
}

std::string list_runs(const std::vector<StoredRun>& runs) {
    if (runs.empty()) return "it holds no run";
    std::vector<std::string> lines;
    const std::size_t shown = std::min<std::size_t>(runs.size(), 8);
    for (std::size_t i = runs.size() - shown; i < runs.size(); ++i) lines.push_back(describe_run(runs[i]));
    return fmt::format("{} run{}{}: {}", runs.size(), runs.size() == 1 ? "" : "s",
                       runs.size() > shown ? fmt::format(", the last {}", shown) : "", fmt::join(lines, "; "));
}

}  // namespace

bool is_run_selector(const std::string& text) {
    return text.starts_with("run:") || text.starts_with("commit:") || text.starts_with("machine:");
}

RunSelector parse_run_selector(const std::string& text, const std::string& option) {
    RunSelector selector;
    selector.text = text;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        const std::string term = text.substr(start, comma - start);
        start = comma + 1;
        const std::size_t colon = term.find(':');
        const std::string kind = term.substr(0, colon);
        const std::string value = colon == std::string::npos ? "" : term.substr(colon + 1);
        const auto bad = [&](const std::string& rule) {
            throw ConfigError(fmt::format("{} {}: '{}' {} (e.g. run:12, commit:abc1234, machine:epyc, or "
                                          "commit:abc1234,machine:epyc)",
                                          option, text, term, rule));
        };
        if (colon == std::string::npos || value.empty()) bad("is not KIND:VALUE");
        if (kind == "run") {
            const std::optional<std::int64_t> id = whole_number(value);
            if (!id) bad("names no run id (a whole number)");
            if (selector.run_id && *selector.run_id != *id) bad("is a second run id: a run has one");
            selector.run_id = id;
        } else if (kind == "commit") {
            if (value.size() < min_commit_prefix) bad(fmt::format("is shorter than {} characters", min_commit_prefix));
            selector.commits.push_back(value);
        } else if (kind == "machine") {
            selector.machines.push_back(value);
        } else {
            bad("is not one of run:, commit: or machine:");
        }
    }
    return selector;
}

bool commit_matches(const std::string& git_commit, const std::string& wanted) {
    if (git_commit == wanted) return true;
    const std::string hash = lowercase(commit_hash(git_commit));
    const std::string want = lowercase(commit_hash(wanted));
    if (want.size() < min_commit_prefix || hash.size() < min_commit_prefix) return false;
    return hash.starts_with(want) || want.starts_with(hash);
}

bool machine_matches(const StoredRun& run, const std::string& wanted) {
    const std::string want = lowercase(wanted);
    if (want == fmt::format("m{}", run.machine_id) || want == fmt::format("{}", run.machine_id)) return true;
    return lowercase(run.record.env.cpu_model).find(want) != std::string::npos ||
           lowercase(machine_class(run.record.env)).find(want) != std::string::npos;
}

bool selects(const RunSelector& selector, const StoredRun& run) {
    if (selector.run_id && *selector.run_id != run.id) return false;
    for (const std::string& commit : selector.commits) {
        if (!commit_matches(run.record.env.git_commit, commit)) return false;
    }
    for (const std::string& machine : selector.machines) {
        if (!machine_matches(run, machine)) return false;
    }
    return true;
}

std::string describe_run(const StoredRun& run) {
    const Environment& env = run.record.env;
    return fmt::format("run {} ({}, commit {}, m{} {} {}, {}, {} row{}{})", run.id, run.record.command, env.git_commit,
                       run.machine_id, env.cpu_model, machine_class(env), env.timestamp, run.n_rows,
                       run.n_rows == 1 ? "" : "s", env.shard.empty() ? "" : ", shard " + env.shard);
}

ResultFile read_selected_runs(const ResultsDatabase& database, const RunSelector& selector) {
    const std::vector<StoredRun> runs = database.runs();
    std::vector<const StoredRun*> chosen;
    for (const StoredRun& run : runs) {
        if (selects(selector, run)) chosen.push_back(&run);
    }
    if (chosen.empty()) {
        throw ConfigError(fmt::format("{}: no run of {} matches; {}", selector.text, database.path(), list_runs(runs)));
    }
    std::set<std::string> commands;
    for (const StoredRun* run : chosen) commands.insert(run->record.command);
    if (commands.size() > 1) {
        throw ConfigError(fmt::format("{}: the runs it picks measured {}: add run:ID, or a commit or machine that "
                                      "picks one kind",
                                      selector.text, fmt::join(commands, " and ")));
    }
    ResultFile combined;
    std::vector<std::string> ids;
    std::set<std::vector<std::string>> seen;
    // Latest first: a configuration measured again replaces its earlier row.
    for (auto run = chosen.rbegin(); run != chosen.rend(); ++run) {
        const std::string name = fmt::format("{} run {}", database.path(), (*run)->id);
        ResultFile file = result_file_of_cells(database.run_cells((*run)->id), "kvbench database", name);
        if (combined.key_columns.empty()) {
            combined.key_columns = file.key_columns;
            combined.provenance = file.provenance;
        } else if (file.key_columns != combined.key_columns && !file.rows.empty()) {
            throw ConfigError(fmt::format("{}: its runs have rows of different kinds ({} and {})", selector.text,
                                          fmt::join(combined.key_columns, ","), fmt::join(file.key_columns, ",")));
        }
        for (ResultEntry& entry : file.rows) {
            if (seen.insert(entry.key).second) combined.rows.push_back(std::move(entry));
        }
        ids.push_back(fmt::format("{}", (*run)->id));
        combined.run_ids.push_back((*run)->id);
    }
    std::reverse(ids.begin(), ids.end());
    std::sort(combined.run_ids.begin(), combined.run_ids.end());
    combined.kind = fmt::format("kvbench database, run{} {}", ids.size() == 1 ? "" : "s", fmt::join(ids, ", "));
    return combined;
}

}  // namespace kvbench
