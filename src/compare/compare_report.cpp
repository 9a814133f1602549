// The three formats of a comparison, from one list of cells per row.
#include "kvbench/compare/compare_report.hpp"

#include "kvbench/report/summary_tables.hpp"
#include "three_figures.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace kvbench {

namespace {

std::string evidence(const ComparedRow& row) {
    switch (row.test) {
    case Test::u_test: return fmt::format("p={:.3g}", *row.p_value);
    // From the ranges themselves: an unclear row's overlap with medians apart, not its verdict.
    case Test::overlap: return row.other.min > row.base.max || row.other.max < row.base.min ? "ranges apart" : "ranges overlap";
    case Test::none: return row.verdict == Verdict::unknown ? "1 sample" : "-";
    }
    return "-";
}

std::string confidence_label(const Comparison& comparison) { return fmt::format("{:g} %", 100 * (1 - comparison.alpha)); }

// "[+8.0, +15.3] %": the Hodges–Lehmann interval in percent of BASE's median; "-" without samples.
// Too few samples cannot reach the header's confidence: the cell then says the one it reached,
// "[-169.3, +169.3] % at 81 %", rather than let the header claim 95 %.
std::string interval_cell(const ComparedRow& row) {
    if (!row.shift) return "-";
    const std::string interval =
        fmt::format("[{:+.1f}, {:+.1f}] %", row.percent_of_base(row.shift->low), row.percent_of_base(row.shift->high));
    if (row.shift->achieved + 1e-9 >= row.shift->confidence) return interval;
    return fmt::format("{} at {:.0f} %", interval, 100 * row.shift->achieved);
}

// `unit_break` goes before each unit: '\n' puts it on the terminal table's second header line.
std::vector<std::string> header(const Comparison& comparison, char unit_break = ' ') {
    const char* unit = metric_unit(comparison.metric);
    return {"row",
            fmt::format("base {}{}{}", metric_name(comparison.metric), unit_break, unit),
            fmt::format("new {}{}{}", metric_name(comparison.metric), unit_break, unit),
            "change",
            fmt::format("shift,{}{} interval", unit_break, confidence_label(comparison)),
            "test",
            "verdict"};
}

std::vector<std::string> cells(const ComparedRow& row) {
    std::string verdict = verdict_name(row.verdict);
    if (!row.counts_note.empty()) verdict += " (" + row.counts_note + ")";
    return {row.label,     three_figures(row.base.median), three_figures(row.other.median), fmt::format("{:+.1f} %", row.change_pct),
            interval_cell(row), evidence(row),   verdict};
}

std::string summary(const Comparison& comparison) {
    std::string line = fmt::format("{} rows: {} faster, {} same, {} slower, {} slower by more than {:g} %{}, {} with other counts",
                                   comparison.rows.size(), count_verdicts(comparison, Verdict::faster),
                                   count_verdicts(comparison, Verdict::same), count_verdicts(comparison, Verdict::slower),
                                   count_verdicts(comparison, Verdict::regression), comparison.threshold_pct,
                                   comparison.require_interval ? fmt::format(" with {} confidence", confidence_label(comparison)) : "",
                                   count_verdicts(comparison, Verdict::counts_differ));
    if (const std::size_t unknown = count_verdicts(comparison, Verdict::unknown)) {
        line += fmt::format(", {} unknown (one sample)", unknown);
    }
    if (const std::size_t unclear = count_verdicts(comparison, Verdict::unclear)) {
        line += fmt::format(", {} unclear (ranges overlap, medians {:g} % or more apart)", unclear, comparison.threshold_pct);
    }
    return line;
}

std::string geomean_line(const Comparison& comparison) {
    if (!comparison.geomean_ratio) return "geometric mean: no rows to compare";
    return fmt::format("geometric mean of new / base {}: {:.4f} ({:+.1f} %)", metric_name(comparison.metric),
                       *comparison.geomean_ratio, 100 * (*comparison.geomean_ratio - 1));
}

std::vector<std::string> notes(const Comparison& comparison) {
    std::vector<std::string> lines;
    if (!comparison.only_in_base.empty()) {
        lines.push_back(fmt::format("only in BASE ({}): {}", comparison.only_in_base.size(),
                                    fmt::join(comparison.only_in_base, "; ")));
    }
    if (!comparison.only_in_new.empty()) {
        lines.push_back(fmt::format("only in NEW ({}): {}", comparison.only_in_new.size(),
                                    fmt::join(comparison.only_in_new, "; ")));
    }
    if (comparison.n_without_metric > 0) {
        lines.push_back(fmt::format("{} matched rows have no {} (docs/compare.md#metrics)", comparison.n_without_metric,
                                    metric_name(comparison.metric)));
    }
    if (comparison.n_without_samples > 0) {
        lines.push_back(fmt::format(
            "{} of {} rows carry no samples (a CSV keeps none): they are judged by whether their [min, max] ranges "
            "overlap, which one wild repetition hides a change of any size behind, and have no interval; compare "
            "JSON or JSON Lines reports (-o run.json keeps every repetition) for a U test and an interval",
            comparison.n_without_samples, comparison.rows.size()));
        if (comparison.require_interval) {
            lines.push_back("--require-interval: a row without an interval is never SLOWER");
        }
    }
    lines.push_back(summary(comparison));
    lines.push_back(geomean_line(comparison));
    return lines;
}

void write_table(std::ostream& out, const Comparison& comparison, std::size_t width) {
    TextTable table;
    table.header = header(comparison, '\n');  // units on a second line keep the figure columns narrow
    // The row names each line; figures and the verdict align on the right, so that a part of a
    // table split for a narrow terminal repeats the row column only.
    table.align.assign(table.header.size(), Align::right);
    table.align.front() = Align::left;
    for (const ComparedRow& row : comparison.rows) table.lines.push_back(cells(row));
    out << wrap_text(comparison.provenance_note, 0, 2, width) << '\n';
    write_text_table(out, table, width);
    for (const std::string& line : notes(comparison)) out << wrap_text(line, 0, 2, width) << '\n';
}

void write_markdown(std::ostream& out, const Comparison& comparison) {
    out << "**" << comparison.provenance_note << "**\n\n";
    out << "| " << fmt::format("{}", fmt::join(header(comparison), " | ")) << " |\n";
    out << "| --- | ---: | ---: | ---: | ---: | --- | --- |\n";
    for (const ComparedRow& row : comparison.rows) out << "| " << fmt::format("{}", fmt::join(cells(row), " | ")) << " |\n";
    out << '\n';
    for (const std::string& line : notes(comparison)) out << line << "  \n";
}

void write_json(std::ostream& out, const Comparison& comparison) {
    nlohmann::ordered_json j;
    j["provenance"] = comparison.provenance_note;
    j["metric"] = metric_name(comparison.metric);
    j["unit"] = metric_unit(comparison.metric);
    j["threshold_pct"] = comparison.threshold_pct;
    j["alpha"] = comparison.alpha;
    j["require_interval"] = comparison.require_interval;
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const ComparedRow& row : comparison.rows) {
        nlohmann::ordered_json r;
        r["row"] = row.label;
        r["base_median"] = row.base.median;
        r["new_median"] = row.other.median;
        r["change_pct"] = row.change_pct;
        r["test"] = row.test == Test::u_test ? "u_test" : row.test == Test::overlap ? "overlap" : "none";
        r["p_value"] = row.p_value ? nlohmann::ordered_json(*row.p_value) : nlohmann::ordered_json(nullptr);
        if (row.shift) {
            r["shift"] = {{"estimate", row.shift->shift},         {"low", row.shift->low},
                          {"high", row.shift->high},              {"estimate_pct", row.percent_of_base(row.shift->shift)},
                          {"low_pct", row.percent_of_base(row.shift->low)}, {"high_pct", row.percent_of_base(row.shift->high)},
                          {"confidence", row.shift->achieved},    {"exact", row.shift->exact}};
        } else {
            r["shift"] = nullptr;
        }
        r["verdict"] = verdict_name(row.verdict);
        r["counts"] = row.counts_note.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(row.counts_note);
        rows.push_back(std::move(r));
    }
    j["rows"] = std::move(rows);
    j["only_in_base"] = comparison.only_in_base;
    j["only_in_new"] = comparison.only_in_new;
    j["rows_without_metric"] = comparison.n_without_metric;
    j["rows_without_samples"] = comparison.n_without_samples;
    j["geomean_ratio"] = comparison.geomean_ratio ? nlohmann::ordered_json(*comparison.geomean_ratio)
                                                  : nlohmann::ordered_json(nullptr);
    out << j.dump(2) << '\n';
}

}  // namespace

void write_comparison(std::ostream& out, const Comparison& comparison, CompareFormat format, std::size_t width) {
    switch (format) {
    case CompareFormat::table: write_table(out, comparison, width); return;
    case CompareFormat::md: write_markdown(out, comparison); return;
    case CompareFormat::json: write_json(out, comparison); return;
    }
}

}  // namespace kvbench
