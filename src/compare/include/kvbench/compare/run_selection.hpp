// Runs of a results database named on the command line (run:12, commit:abc123, machine:epyc), and their rows as one result file.
#pragma once

#include "kvbench/compare/result_file.hpp"
#include "kvbench/report/database.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kvbench {

// Terms joined by commas, every one of which a run must meet: run:ID, commit:SHA (a prefix of the
// commit, 4 characters at least, or `git describe`'s whole name), machine:TEXT (the machine's id
// as m3 or 3, or a part of its CPU model or class, any case). docs/database.md#choosing-runs.
struct RunSelector {
    std::string text;                   // as typed, for messages
    std::optional<std::int64_t> run_id;
    std::vector<std::string> commits;
    std::vector<std::string> machines;
};

// Whether `text` is a selector rather than a file name: it starts with run:, commit: or machine:.
bool is_run_selector(const std::string& text);
// Throws ConfigError naming `option` when a term is malformed.
RunSelector parse_run_selector(const std::string& text, const std::string& option);

// The shortest prefix of a hash that names a commit (git's own abbreviations are at least 4).
inline constexpr std::size_t min_commit_prefix = 4;

// A build's git_commit ("v0.1-12-gabc1234-dirty", "abc1234") against a wanted commit: a prefix of
// its hash of at least 4 characters, the hash a prefix of a longer wanted one, or the whole name.
bool commit_matches(const std::string& git_commit, const std::string& wanted);
// "m3" or "3" (the machine's id), or a part of its CPU model or machine class, in any case.
bool machine_matches(const StoredRun& run, const std::string& wanted);
bool selects(const RunSelector& selector, const StoredRun& run);

// "run 3 (sweep, commit 15e839bc2a2d, m1 AMD EPYC amd-avx512-2c-llc-unknown, 2026-12-04T01:06:33Z, 36 rows)"
std::string describe_run(const StoredRun& run);

// The rows of the runs `selector` picks, as one result file: where runs share a configuration,
// the latest run's row. Throws ConfigError when no run matches (listing those there are) or the
// runs measured different commands (a sweep and a generation).
ResultFile read_selected_runs(const ResultsDatabase& database, const RunSelector& selector);

}  // namespace kvbench
