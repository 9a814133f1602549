// Edit distance by dynamic programming over rolling rows; names are short, so O(|a|·|b|) is nothing.
// The aliases are spellings of llama-bench, hyperfine and common habit whose meaning here is clear.
#include "cli/suggest.hpp"

#include "kvbench/engine/ascii_case.hpp"

#include <algorithm>
#include <array>
#include <numeric>

namespace kvbench {

namespace {

struct Alias {
    std::string_view typed;
    std::string_view command;     // the command it applies to; "" for every command
    std::string_view needs;       // the option the suggestion uses, which the command must have
    std::string_view suggestion;  // what follows "did you mean "
};

constexpr std::array aliases{
    Alias{"--csv", "", "--format", "--format csv"},
    Alias{"--json", "", "--format", "--format json"},
    Alias{"--md", "", "--format", "--format md"},
    Alias{"--markdown", "", "--format", "--format md"},
    Alias{"--export-csv", "", "--export", "--export csv:FILE"},
    Alias{"--export-json", "", "--export", "--export json:FILE"},
    Alias{"--export-markdown", "", "--export", "--export md:FILE"},
    Alias{"--export-jsonl", "", "--export", "--export jsonl:FILE"},
    Alias{"--silent", "", "--quiet", "-q (--quiet)"},
    Alias{"-p", "sweep", "--seq", "-n (context length)"},
    Alias{"--prompt", "sweep", "--seq", "-n (context length)"},
    Alias{"--n-prompt", "sweep", "--seq", "-n (context length)"},
    Alias{"-c", "sweep", "--seq", "-n (context length)"},
    Alias{"--ctx-size", "", "--seq", "-n (context length)"},
    Alias{"--context", "", "--seq", "-n (context length)"},
    Alias{"--n-ctx", "", "--seq", "-n (context length)"},
    Alias{"--seq-len", "", "--seq", "-n (context length)"},
    Alias{"-n", "generate", "--new", "--new (new tokens)"},
    Alias{"--n-gen", "generate", "--new", "--new (new tokens)"},
    Alias{"--n-prompt", "generate", "--prompt", "-p (prompt length)"},
    Alias{"--runs", "", "--reps", "--reps"},
    Alias{"--repetitions", "", "--reps", "--reps"},
    Alias{"--iterations", "", "--reps", "--reps"},
    Alias{"--batch-size", "", "--batch", "-b (batch size)"},
    Alias{"--n-heads", "", "--heads", "--heads"},
    Alias{"--num-heads", "", "--heads", "--heads"},
    Alias{"--n-kv-heads", "", "--kv-heads", "-g (KV heads)"},
    Alias{"--num-kv-heads", "", "--kv-heads", "-g (KV heads)"},
    Alias{"--n-layers", "", "--layers", "-l (layers)"},
    Alias{"--num-layers", "", "--layers", "-l (layers)"},
    Alias{"--n-threads", "", "--threads", "-t (threads)"},
    Alias{"-j", "", "--threads", "-t (threads)"},
    Alias{"--jobs", "", "--threads", "-t (threads)"},
    Alias{"--d-model", "", "--dim", "-d (model dimension)"},
    Alias{"--hidden-size", "", "--dim", "-d (model dimension)"},
    Alias{"-y", "", "--yes", "--yes"},
};

constexpr std::array command_aliases{
    std::array<std::string_view, 2>{"run", "sweep"},      std::array<std::string_view, 2>{"bench", "sweep"},
    std::array<std::string_view, 2>{"benchmark", "sweep"}, std::array<std::string_view, 2>{"gen", "generate"},
    std::array<std::string_view, 2>{"decode", "generate"}, std::array<std::string_view, 2>{"peak", "roofline"},
};

bool contains(const std::vector<std::string>& names, std::string_view name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

std::string_view without_dashes(std::string_view name) {
    while (!name.empty() && name.front() == '-') name.remove_prefix(1);
    return name;
}

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
    // Optimal string alignment: Levenshtein plus adjacent transpositions ("--sqe" is one
    // slip from "--seq"), over three rolling rows.
    std::vector<std::size_t> before(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
    std::iota(previous.begin(), previous.end(), std::size_t{0});
    for (std::size_t i = 1; i <= a.size(); ++i) {
        current[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
            current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
                current[j] = std::min(current[j], before[j - 2] + 1);
            }
        }
        std::swap(before, previous);
        std::swap(previous, current);
    }
    return previous[b.size()];
}

std::optional<std::string> closest_name(std::string_view typed, const std::vector<std::string>& candidates) {
    std::optional<std::string> best;
    std::size_t best_distance = 0;
    for (const std::string& candidate : candidates) {
        const std::size_t distance = edit_distance(typed, candidate);
        const std::size_t allowed = std::max<std::size_t>(1, std::max(typed.size(), candidate.size()) / 3);
        if (distance <= allowed && (!best || distance < best_distance)) {
            best = candidate;
            best_distance = distance;
        }
    }
    return best;
}

std::string or_list(const std::vector<std::string>& names) {
    std::string listed;
    for (std::size_t i = 0; i < names.size(); ++i) {
        listed += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
    }
    return listed;
}

std::optional<std::string> suggest_name(std::string_view typed, const std::vector<std::string>& candidates) {
    std::vector<std::string> extensions;
    if (!typed.empty()) {
        std::copy_if(candidates.begin(), candidates.end(), std::back_inserter(extensions),
                     [typed](const std::string& name) { return name.size() > typed.size() && name.starts_with(typed); });
    }
    // Too many to list says little (the name was cut too short): the nearest one may still be a typo's.
    if (!extensions.empty() && extensions.size() <= max_prefix_suggestions) return or_list(extensions);
    return closest_name(typed, candidates);
}

std::optional<std::string> suggest_option(std::string_view typed, std::string_view command,
                                          const std::vector<std::string>& known) {
    for (const Alias& alias : aliases) {
        if (alias.typed == typed && (alias.command.empty() || alias.command == command) &&
            contains(known, alias.needs)) {
            return std::string(alias.suggestion);
        }
    }
    // The same letters in another case or with other dashes: -L, -seq, --n, --SEQ.
    const std::string body = lowercase(without_dashes(typed));
    for (const std::string& name : known) {
        if (!body.empty() && lowercase(without_dashes(name)) == body) return name;
    }
    const bool is_short = typed.size() == 2 && typed[0] == '-' && typed[1] != '-';
    if (is_short) return std::nullopt;
    std::vector<std::string> long_names;
    std::copy_if(known.begin(), known.end(), std::back_inserter(long_names),
                 [](const std::string& name) { return name.starts_with("--"); });
    return suggest_name(lowercase(typed), long_names);
}

std::optional<std::string> suggest_command(std::string_view typed, const std::vector<std::string>& known) {
    for (const auto& [alias, command] : command_aliases) {
        if (alias == typed && contains(known, command)) return std::string(command);
    }
    return suggest_name(lowercase(typed), known);
}

}  // namespace kvbench
