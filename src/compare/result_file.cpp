// Reads kvbench CSV/JSON/JSON Lines reports (through the report schema) and Google Benchmark JSON into rows keyed by configuration, for compare.
#include "kvbench/compare/result_file.hpp"

#include "kvbench/engine/ascii_case.hpp"
#include "kvbench/engine/config.hpp"
#include "kvbench/files/input_file.hpp"
#include "kvbench/files/json_unique_keys.hpp"
#include "kvbench/report/schema.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace kvbench {

namespace {

[[noreturn]] void bad_file(const std::string& name, const std::string& why) {
    throw ConfigError(fmt::format("{} cannot be compared: {}", name, why));
}

// A report written for people (-f md, or the tables -o x.txt holds) rounds its numbers and lays
// them out for reading, so no row can be read back from it: "a Markdown report" or "a table
// report" when its name or its first lines say it is one. Asked only after the CSV reader
// failed, so that a kvbench CSV saved under another name is still read.
std::optional<std::string> report_for_people(const std::string& text, const std::string& name) {
    const std::string extension = lowercase(std::filesystem::path(name).extension().string());
    std::istringstream lines(text);
    std::string line;
    std::string first_line;
    bool has_table_row = false;
    while (std::getline(lines, line)) {
        const std::size_t start = line.find_first_not_of(" \t\r");
        if (start == std::string::npos) continue;
        if (first_line.empty()) first_line = line.substr(start);
        if (line[start] == '|') has_table_row = true;
    }
    if (extension == ".md" || extension == ".markdown" || first_line.starts_with('#') || has_table_row) {
        return "a Markdown report";
    }
    // "machine: ..." opens every report kvbench writes for people, the tables included; a .txt
    // whose first line has commas is more likely another tool's CSV, whose error says more.
    const bool first_line_is_csv = first_line.find(',') != std::string::npos;
    if ((extension == ".txt" && !first_line_is_csv) || first_line.starts_with("machine:")) return "a table report";
    return std::nullopt;
}

std::string join(const std::vector<std::string>& words) {
    return fmt::format("{}", fmt::join(words, ", "));
}

// A JSON scalar as the text the CSV would hold; null is an empty cell.
std::string json_text(const nlohmann::json& value) {
    if (value.is_null()) return "";
    if (value.is_string()) return value.get<std::string>();
    if (value.is_number_float()) return fmt::format("{}", value.get<double>());
    return value.dump();
}

void require_contract_columns(const std::set<std::string>& present, const std::string& name) {
    std::vector<std::string> missing;
    for (const std::string& column : contract_columns()) {
        if (!present.contains(column)) missing.push_back(column);
    }
    if (missing.empty()) return;
    bad_file(name, fmt::format("no column {} (not a kvbench sweep or generate report; docs/csv.md#contract-columns)",
                               join(missing)));
}

void set_key(ResultFile& file, const std::set<std::string>& present) {
    // A column that reports gained later holds its default in an older file's rows, so that an old
    // reference still matches a new run's rows.
    for (const std::string& column : report_key_columns()) {
        if (present.contains(column) || report_key_default(column)) file.key_columns.push_back(column);
    }
}

void fill_key(ResultEntry& entry, const std::vector<std::string>& key_columns) {
    for (const std::string& column : key_columns) {
        entry.key.push_back(entry.cell(column).value_or(report_key_default(column).value_or("")));
    }
}

ResultFile checked_unique(ResultFile file, const std::string& name) {
    std::set<std::vector<std::string>> seen;
    for (const ResultEntry& entry : file.rows) {
        if (!seen.insert(entry.key).second) {
            bad_file(name, fmt::format("two rows share the configuration {} (one run per file)", join(entry.key)));
        }
    }
    return file;
}

void take_provenance(ResultFile& file, const std::map<std::string, std::string>& cells) {
    for (const auto* group : {&machine_columns(), &blas_columns(), &build_columns()}) {
        for (const std::string& column : *group) {
            const auto found = cells.find(column);
            if (found != cells.end() && !found->second.empty()) file.provenance[column] = found->second;
        }
    }
    const auto commit = cells.find("git_commit");
    if (commit != cells.end()) file.provenance["git_commit"] = commit->second;
}

// A kvbench report of any schema, read through the report schema's reader: its cells are in
// the current schema whatever wrote them.
ResultFile parse_kvbench_report(const std::string& text, OutputFormat format, const std::string& name) {
    static const std::map<OutputFormat, std::string> kinds = {
        {OutputFormat::csv, "kvbench CSV"}, {OutputFormat::json, "kvbench JSON"}, {OutputFormat::jsonl, "kvbench JSON Lines"}};
    ReportCells report;
    try {
        report = read_report_cells(text, format);
    } catch (const std::runtime_error& error) {
        bad_file(name, error.what());
    }
    return result_file_of_cells(report, kinds.at(format), name);
}

// Nanoseconds per unit of Google Benchmark's time_unit.
double unit_ns(const std::string& unit, const std::string& name) {
    if (unit == "ns") return 1;
    if (unit == "us") return 1e3;
    if (unit == "ms") return 1e6;
    if (unit == "s") return 1e9;
    bad_file(name, fmt::format("unknown time_unit '{}'", unit));
}

// Google Benchmark's JSON: every repetition of a benchmark is one "iteration" entry with the
// same run_name; aggregates (mean, median, stddev) are recomputed here from them, so skipped.
ResultFile parse_gbench_json(const nlohmann::json& report, const std::string& name) {
    ResultFile file;
    file.kind = "Google Benchmark JSON";
    file.key_columns = {"benchmark"};
    std::map<std::string, std::size_t> index;
    for (const nlohmann::json& run : report.at("benchmarks")) {
        if (run.value("run_type", "iteration") != "iteration") continue;
        const std::string run_name = run.value("run_name", run.at("name").get<std::string>());
        // A repetition Google Benchmark marked failed has no time to compare.
        if (run.value("error_occurred", false)) {
            bad_file(name, fmt::format("{} failed ({}): rerun it", run_name, run.value("error_message", "no message")));
        }
        const double time_ns = run.at("real_time").get<double>() * unit_ns(run.value("time_unit", "ns"), name);
        if (!std::isfinite(time_ns) || time_ns <= 0) {
            bad_file(name, fmt::format("{}: real_time {} is not a positive time", run_name, run.at("real_time").dump()));
        }
        auto [found, inserted] = index.try_emplace(run_name, file.rows.size());
        if (inserted) {
            ResultEntry entry;
            entry.key = {run_name};
            entry.cells["benchmark"] = run_name;
            file.rows.push_back(std::move(entry));
        }
        file.rows[found->second].samples_ns.push_back(time_ns);
    }
    for (ResultEntry& entry : file.rows) {
        std::vector<double> sorted = entry.samples_ns;
        std::sort(sorted.begin(), sorted.end());
        const std::size_t n = sorted.size();
        const double median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
        entry.cells["reps"] = fmt::format("{}", n);
        entry.cells["latency_us_median"] = fmt::format("{}", median / 1e3);
        entry.cells["latency_us_min"] = fmt::format("{}", sorted.front() / 1e3);
        entry.cells["latency_us_max"] = fmt::format("{}", sorted.back() / 1e3);
    }
    std::map<std::string, std::string> context;
    if (const auto found = report.find("context"); found != report.end() && found->is_object()) {
        if (found->contains("num_cpus")) context["n_cores"] = json_text(found->at("num_cpus"));
        if (found->contains("host_name")) context["host_name"] = json_text(found->at("host_name"));
        if (found->contains("library_build_type")) context["build_type"] = json_text(found->at("library_build_type"));
    }
    take_provenance(file, context);
    return file;
}

}  // namespace

std::optional<std::string> ResultEntry::cell(const std::string& column) const {
    const auto found = cells.find(column);
    if (found == cells.end() || found->second.empty()) return std::nullopt;
    return found->second;
}

const std::vector<std::string>& machine_columns() {
    static const std::vector<std::string> columns = {"cpu_model", "kernel_isa", "n_cores", "host_name", "cache_sizes",
                                                            "transparent_hugepage"};
    return columns;
}

const std::vector<std::string>& blas_columns() {
    static const std::vector<std::string> columns = {"blas_library", "blas_threading", "openblas_coretype"};
    return columns;
}

const std::vector<std::string>& build_columns() {
    static const std::vector<std::string> columns = {"tool_version", "build_type", "compiler"};
    return columns;
}

// A JSON report's or a database run's provenance is its environment block; a CSV's or JSON Lines',
// the first row's columns.
ResultFile result_file_of_cells(const ReportCells& report, const std::string& kind, const std::string& name) {
    std::set<std::string> present(report.columns.begin(), report.columns.end());
    if (report.rows.empty() && report.format != OutputFormat::csv) {
        for (const std::string& column : contract_columns()) present.insert(column);  // nothing to refuse
    }
    require_contract_columns(present, name);
    // A database run's cells come here unchecked; a file's were checked as they were read.
    try {
        if (report.format == OutputFormat::sqlite) check_report_rows(report);
    } catch (const std::runtime_error& error) {
        bad_file(name, error.what());
    }
    ResultFile file;
    file.kind = kind;
    set_key(file, present);
    for (const ReportCellRow& row : report.rows) {
        ResultEntry entry;
        entry.cells = row.cells;
        entry.samples_ns = row.samples_ns;
        fill_key(entry, file.key_columns);
        file.rows.push_back(std::move(entry));
    }
    if (!report.environment.empty()) {
        take_provenance(file, report.environment);
    } else if (!file.rows.empty()) {
        take_provenance(file, file.rows.front().cells);
    }
    return checked_unique(std::move(file), name);
}

ResultFile parse_result_file(const std::string& text, const std::string& name) {
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos || text[first] != '{') {
        try {
            return parse_kvbench_report(text, OutputFormat::csv, name);
        } catch (const ConfigError&) {
            const std::optional<std::string> report = report_for_people(text, name);
            if (!report) throw;
            throw ConfigError(fmt::format("{} is {}; compare reads kvbench CSV, JSON or JSON Lines files, or runs of "
                                          "--db (write one with -f csv)",
                                          name, *report));
        }
    }
    try {
        check_json_depth(text);
    } catch (const std::runtime_error& error) {
        bad_file(name, error.what());
    }
    nlohmann::json report;
    try {
        // As merge, --resume and --calibrate read a report: a key named twice, or a number
        // past a double (1e400), is refused naming the key, in any JSON file compare reads.
        report = parse_json_unique_keys(text);
    } catch (const nlohmann::json::exception& error) {
        // More than one JSON value: JSON Lines, when its first line is an object.
        if (!starts_as_json_lines(text)) bad_file(name, fmt::format("not valid JSON ({})", error.what()));
        return parse_kvbench_report(text, OutputFormat::jsonl, name);
    } catch (const RefusedJson& error) {
        // In the first line of a JSON Lines file of more lines: its reader names the row.
        const std::size_t line_end = text.find('\n', first);
        const bool more_lines =
            line_end != std::string::npos && text.find_first_not_of(" \t\r\n", line_end) != std::string::npos;
        if (!more_lines || !starts_as_json_lines(text)) bad_file(name, error.what());
        return parse_kvbench_report(text, OutputFormat::jsonl, name);
    }
    try {
        if (report.contains("rows")) return parse_kvbench_report(text, OutputFormat::json, name);
        if (report.contains("benchmarks")) return checked_unique(parse_gbench_json(report, name), name);
        if (report.contains("path")) {  // a JSON Lines report of one row
            const std::string line = text.ends_with('\n') ? text : text + '\n';
            return parse_kvbench_report(line, OutputFormat::jsonl, name);
        }
    } catch (const nlohmann::json::exception& error) {
        bad_file(name, fmt::format("unexpected JSON layout ({})", error.what()));
    }
    bad_file(name, "a JSON object with neither \"rows\" (kvbench) nor \"benchmarks\" (Google Benchmark)");
}

ResultFile read_result_file(const std::filesystem::path& path) {
    std::string text;
    try {
        text = read_input_file(path);
    } catch (const InputFileError& error) {
        throw ConfigError(fmt::format("cannot read {}: it {}", path.string(), error.what()));
    }
    return parse_result_file(text, path.string());
}

}  // namespace kvbench
