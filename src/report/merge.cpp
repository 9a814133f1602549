// kvbench merge: reading every input's runs, the checks that they are shards of one grid, the rows in configuration order, the writers.
#include "kvbench/report/merge.hpp"

#include "cell_json.hpp"
#include "kvbench/engine/config.hpp"
#include "kvbench/files/input_file.hpp"
#include "kvbench/report/columns.hpp"
#include "kvbench/report/database_schema.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

namespace kvbench {

namespace {

// The columns that name a configuration (and a generation's step): two runs holding the same
// values overlap, and the merged report would hold that row twice.
const std::vector<std::string>& configuration_columns() {
    static const std::vector<std::string> columns = {"path",      "batch",       "seq",   "dim",   "heads",
                                                     "kv_heads",  "head_dim",    "layers", "threads", "kv_dtype",
                                                     "cache_state", "step",      "phase", "prompt", "new_tokens"};
    return columns;
}

// What must be equal for shards to form one measurement: the build, and the settings a row records.
const std::vector<std::string>& build_columns_to_match() {
    static const std::vector<std::string> columns = {"tool_version", "git_commit", "build_type", "compiler"};
    return columns;
}
const std::vector<std::string>& settings_to_match() {
    static const std::vector<std::string> columns = {"reps_policy", "seed", "warmup", "cache_state"};
    return columns;
}

// generate's step columns, after the row columns and before the provenance in a report.
const std::vector<std::string>& generation_columns() {
    static const std::vector<std::string> columns = {"step", "phase", "prompt", "new_tokens"};
    return columns;
}

std::string read_text(const std::filesystem::path& path) {
    try {
        return read_input_file(path);
    } catch (const InputFileError& error) {
        throw ConfigError(fmt::format("{}: {}", path.string(), error.what()));
    }
}

// A row's provenance cell: its own (CSV, JSON Lines), else its run's.
std::string provenance_of(const MergeRun& run, const ReportCellRow& row, const std::string& column) {
    if (std::optional<std::string> own = row.cell(column)) return *own;
    const std::map<std::string, std::string> cells = environment_cells(run.record.env);
    const auto found = cells.find(column);
    return found == cells.end() ? "" : found->second;
}

std::uint64_t number_or_zero(const ReportCellRow& row, const char* column) {
    const std::optional<std::string> text = row.cell(column);
    std::uint64_t value = 0;
    if (text) std::from_chars(text->data(), text->data() + text->size(), value);
    return value;
}

// The default grid's order, reconstructed from a row: expand() puts the model shape outermost,
// MHA (the most KV heads) first; then batch, seq, threads, kv_dtype; a point's cached row first.
auto configuration_order(const ReportCellRow& row) {
    const std::optional<KvDtype> dtype = find_kv_dtype(row.cell("kv_dtype").value_or("f32"));
    const std::uint64_t kv_heads = number_or_zero(row, "kv_heads");
    return std::make_tuple(number_or_zero(row, "dim"), number_or_zero(row, "heads"), number_or_zero(row, "head_dim"),
                           ~kv_heads, number_or_zero(row, "layers"), number_or_zero(row, "prompt"),
                           number_or_zero(row, "new_tokens"), number_or_zero(row, "batch"), number_or_zero(row, "seq"),
                           number_or_zero(row, "threads"), dtype ? static_cast<int>(*dtype) : 99,
                           row.cell("path").value_or("") != "cached", number_or_zero(row, "step"));
}

std::string describe_values(const std::vector<std::string>& columns, const std::vector<std::string>& values) {
    std::vector<std::string> parts;
    for (std::size_t i = 0; i < columns.size(); ++i) parts.push_back(fmt::format("{} '{}'", columns[i], values[i]));
    return fmt::format("{}", fmt::join(parts, ", "));
}

// Refuses rows whose `columns` differ between runs, naming the first source of each variant.
void require_same(const std::vector<MergeRun>& runs, const std::vector<std::string>& columns, const std::string& what,
                  const std::string& hint) {
    std::map<std::vector<std::string>, std::string> variants;
    for (const MergeRun& run : runs) {
        for (const ReportCellRow& row : run.rows) {
            std::vector<std::string> values;
            for (const std::string& column : columns) values.push_back(provenance_of(run, row, column));
            variants.try_emplace(values, run.source);
        }
    }
    if (variants.size() <= 1) return;
    std::vector<std::string> lines;
    for (const auto& [values, source] : variants) lines.push_back(fmt::format("{}: {}", source, describe_values(columns, values)));
    throw ConfigError(fmt::format("the inputs come from different {}: {}; {}", what, fmt::join(lines, "; "), hint));
}

void check_shards(const std::vector<MergeRun>& runs, std::vector<std::string>& warnings) {
    std::map<std::size_t, std::string> by_index;
    std::set<std::size_t> counts;
    std::size_t unsharded = 0;
    for (const MergeRun& run : runs) {
        const std::string& label = run.record.env.shard;
        std::size_t index = 0;
        std::size_t count = 0;
        const std::size_t slash = label.find('/');
        if (label.empty() || slash == std::string::npos ||
            std::from_chars(label.data(), label.data() + slash, index).ec != std::errc() ||
            std::from_chars(label.data() + slash + 1, label.data() + label.size(), count).ec != std::errc()) {
            ++unsharded;
            continue;
        }
        counts.insert(count);
        const auto [found, inserted] = by_index.try_emplace(index, run.source);
        if (!inserted) {
            throw ConfigError(fmt::format("{} and {} are both shard {}: a shard run twice (merge one of them)",
                                          found->second, run.source, label));
        }
    }
    if (counts.size() > 1) {
        throw ConfigError(fmt::format("the inputs are shards of splits into {} shards: every shard of one grid "
                                      "is --shard K/N with the same N",
                                      fmt::join(counts, ", ")));
    }
    if (counts.empty() || unsharded > 0) return;
    std::vector<std::string> missing;
    for (std::size_t k = 1; k <= *counts.begin(); ++k) {
        if (!by_index.contains(k)) missing.push_back(fmt::format("{}/{}", k, *counts.begin()));
    }
    if (!missing.empty()) {
        warnings.push_back(fmt::format("shard{} {} missing: the merged report lacks {} points",
                                       missing.size() == 1 ? "" : "s", fmt::join(missing, ", "),
                                       missing.size() == 1 ? "its" : "their"));
    }
}

// Two environments that may be one machine: no field both record differs. A CSV records no cores
// or caches (0 here), so its shard is not a machine of its own for lacking them.
bool may_be_one_machine(const Environment& a, const Environment& b) {
    const auto same_or_unknown = [](std::size_t x, std::size_t y) { return x == 0 || y == 0 || x == y; };
    return a.cpu_model == b.cpu_model && a.kernel_isa == b.kernel_isa && same_or_unknown(a.n_cores, b.n_cores) &&
           same_or_unknown(a.llc_bytes, b.llc_bytes);
}

void check_machines(const std::vector<MergeRun>& runs, std::vector<std::string>& warnings) {
    struct Machine {
        const Environment* env;
        std::vector<std::string> sources;
    };
    std::vector<Machine> machines;
    for (const MergeRun& run : runs) {
        if (run.rows.empty()) continue;
        const auto same = std::find_if(machines.begin(), machines.end(), [&](const Machine& machine) {
            return may_be_one_machine(*machine.env, run.record.env);
        });
        if (same == machines.end()) {
            machines.push_back({&run.record.env, {run.source}});
        } else {
            same->sources.push_back(run.source);
        }
    }
    if (machines.size() <= 1) return;
    std::vector<std::string> parts;
    for (const Machine& machine : machines) {
        parts.push_back(fmt::format("{} on {} ({})", fmt::join(machine.sources, ", "), machine_class(*machine.env),
                                    machine.env->cpu_model));
    }
    warnings.push_back(fmt::format("the shards ran on {} machine classes: {}; their times compare the machines as "
                                   "much as the points (docs/sharding.md#machines)",
                                   machines.size(), fmt::join(parts, "; ")));
}

void check_overlap(const std::vector<MergeRun>& runs) {
    std::map<std::vector<std::string>, std::string> seen;
    for (const MergeRun& run : runs) {
        for (const ReportCellRow& row : run.rows) {
            std::vector<std::string> key;
            for (const std::string& column : configuration_columns()) key.push_back(row.cell(column).value_or(""));
            const auto [found, inserted] = seen.try_emplace(key, run.source);
            if (!inserted) {
                std::vector<std::string> named;
                for (std::size_t c = 0; c < key.size(); ++c) {
                    if (!key[c].empty()) named.push_back(fmt::format("{}={}", configuration_columns()[c], key[c]));
                }
                throw ConfigError(fmt::format("{} and {} both hold the row {}: the inputs overlap (run each --shard "
                                              "K/N of one grid once)",
                                              found->second, run.source, fmt::join(named, " ")));
            }
        }
    }
}

// A cell's typed value: a points column by its type, any other (provenance) as text. A row
// leaves out empty cells, so an absent text column is the empty text a sweep writes, not null.
CellValue typed(const std::string& column, const std::optional<std::string>& text) {
    const std::optional<ColumnType> type = point_column_type(column);
    if (!text) return type == ColumnType::text ? CellValue{std::string{}} : CellValue{};
    return type ? cell_of_type(*type, column, *text) : CellValue{*text};
}

std::vector<std::string> present_generation_columns(const MergedReport& merged) {
    std::vector<std::string> present;
    for (const std::string& column : generation_columns()) {
        for (const auto& [run, row] : merged.order) {
            if (merged.runs[run].rows[row].cell(column)) {
                present.push_back(column);
                break;
            }
        }
    }
    return present;
}

std::vector<std::string> provenance_columns() {
    std::vector<std::string> columns;
    for (const EnvironmentColumn& column : environment_columns()) columns.emplace_back(column.name);
    return columns;
}

std::string provenance_cell(const MergeRun& run, const ReportCellRow& row, const std::string& column) {
    if (column == "schema_version") return std::to_string(report_schema_version);
    return provenance_of(run, row, column);
}

void write_merged_csv(std::ostream& out, const MergedReport& merged) {
    std::vector<std::string> columns;
    for (const RowColumn& column : row_columns()) columns.emplace_back(column.name);
    const std::vector<std::string> generation = present_generation_columns(merged);
    columns.insert(columns.end(), generation.begin(), generation.end());
    const std::size_t n_measured = columns.size();
    const std::vector<std::string> provenance = provenance_columns();
    columns.insert(columns.end(), provenance.begin(), provenance.end());
    const auto write_record = [&](const std::vector<std::string>& fields) {
        for (std::size_t i = 0; i < fields.size(); ++i) out << (i > 0 ? "," : "") << csv_quote_field(fields[i]);
        out << '\n';
    };
    write_record(columns);
    for (const auto& [r, i] : merged.order) {
        const MergeRun& run = merged.runs[r];
        const ReportCellRow& row = run.rows[i];
        std::vector<std::string> fields;
        for (std::size_t c = 0; c < columns.size(); ++c) {
            fields.push_back(c < n_measured ? csv_cell_text(typed(columns[c], row.cell(columns[c])))
                                            : provenance_cell(run, row, columns[c]));
        }
        write_record(fields);
    }
}

Json measured_json(const ReportCellRow& row, const std::vector<std::string>& generation) {
    Json j;
    for (const RowColumn& column : row_columns()) j[column.name] = cell_json(typed(column.name, row.cell(column.name)));
    for (const std::string& column : generation) j[column] = cell_json(typed(column, row.cell(column)));
    return j;
}

Json samples_json(const ReportCellRow& row) {
    Json samples = Json::array();
    for (const double ns : row.samples_ns) samples.push_back(std::llround(ns));
    return samples;
}

void write_merged_jsonl(std::ostream& out, const MergedReport& merged) {
    const std::vector<std::string> generation = present_generation_columns(merged);
    for (const auto& [r, i] : merged.order) {
        const MergeRun& run = merged.runs[r];
        const ReportCellRow& row = run.rows[i];
        Json j;
        j["schema_version"] = report_schema_version;
        j.update(measured_json(row, generation));
        for (const std::string& column : provenance_columns()) {
            if (column != "schema_version") j[column] = provenance_cell(run, row, column);
        }
        j["samples_ns"] = samples_json(row);
        out << j.dump() << '\n';
    }
}

void write_merged_json(std::ostream& out, const MergedReport& merged) {
    const std::vector<std::string> generation = present_generation_columns(merged);
    const Environment& first = merged.runs.front().record.env;
    const std::map<std::string, std::string> block = environment_cells(first);
    Json report;
    report["schema_version"] = report_schema_version;
    report["environment"] = environment_json(first);
    Json rows = Json::array();
    for (const auto& [r, i] : merged.order) {
        const MergeRun& run = merged.runs[r];
        const ReportCellRow& row = run.rows[i];
        Json j = measured_json(row, generation);
        // A row of another run: the provenance that differs from the environment block, which a
        // reader takes from the row before the block (schema.hpp's ReportCells::provenance).
        for (const auto& [column, value] : environment_cells(run.record.env)) {
            const std::string own = provenance_of(run, row, column);
            if (own != block.at(column)) j[column] = own;
        }
        j["samples_ns"] = samples_json(row);
        rows.push_back(std::move(j));
    }
    report["rows"] = std::move(rows);
    out << report.dump(2) << '\n';
}

std::vector<std::pair<RunRecord, std::vector<StoredRow>>> stored_runs(const MergedReport& merged) {
    std::vector<std::pair<RunRecord, std::vector<StoredRow>>> runs;
    for (const MergeRun& run : merged.runs) runs.emplace_back(run.record, std::vector<StoredRow>{});
    for (const auto& [r, i] : merged.order) runs[r].second.push_back(stored_row(merged.runs[r].rows[i]));
    return runs;
}

}  // namespace

std::vector<MergeRun> read_merge_input(const std::filesystem::path& path) {
    if (const std::optional<std::string> problem = input_file_problem(path)) {
        throw ConfigError(fmt::format("{}: {}", path.string(), *problem));
    }
    std::vector<MergeRun> runs;
    if (is_sqlite_file(path)) {
        try {
            const ResultsDatabase database = ResultsDatabase::open_for_reading(path);
            const std::vector<StoredRun> stored = database.runs();
            if (stored.empty()) {
                throw ConfigError(fmt::format("{} holds no runs: a database that measured nothing; leave it out of "
                                              "the merge",
                                              path.string()));
            }
            for (const StoredRun& run : stored) {
                const std::string source = fmt::format("{} run {}", path.string(), run.id);
                ReportCells cells = database.run_cells(run.id);
                // As an empty report: a run stopped before its first point would leave its points
                // (its shard's) out of the merge without a word.
                if (cells.rows.empty()) {
                    throw ConfigError(fmt::format("{} holds no rows (its status: {}): a shard that measured "
                                                  "nothing; run that shard again, or leave this database out of "
                                                  "the merge",
                                                  source, run_status_name(run.record.status)));
                }
                // As a file's rows: a TEXT seq or a negative latency is no row to copy.
                try {
                    check_report_rows(cells);
                } catch (const std::runtime_error& error) {
                    throw ConfigError(fmt::format("{}: {}", source, error.what()));
                }
                MergeRun& merged = runs.emplace_back(MergeRun{source, run.record, std::move(cells.rows)});
                if (merged.record.source.empty()) merged.record.source = path.string();
            }
        } catch (const std::runtime_error& error) {
            throw ConfigError(error.what());
        }
        return runs;
    }
    const std::string text = read_text(path);
    ReportCells report;
    OutputFormat format = OutputFormat::csv;
    try {
        format = report_text_format(text);
        report = read_report_cells(text, format);
    } catch (const std::runtime_error& error) {
        throw ConfigError(fmt::format("{} is not a kvbench report: {}", path.string(), error.what()));
    }
    // Every contract column, as compare asks: a merged row without its N or its latency would be
    // a row no reader can place or compare.
    std::vector<std::string> required = contract_columns();
    required.emplace_back("git_commit");
    for (const std::string& column : required) {
        const bool present = std::find(report.columns.begin(), report.columns.end(), column) != report.columns.end() ||
                             report.environment.contains(column);
        if (!present && !(report.rows.empty() && format != OutputFormat::csv)) {  // an empty JSON names no column
            throw ConfigError(fmt::format("{} is not a kvbench sweep or generate report (no column {})", path.string(),
                                          column));
        }
    }
    // A shard stopped before its first point, or a report emptied by hand: merging it would
    // add nothing and say nothing of the points it was to hold.
    if (report.rows.empty()) {
        throw ConfigError(fmt::format("{} holds no rows (a header only, or an empty \"rows\"): a shard that measured "
                                      "nothing; finish it (sweep ... --resume) or leave it out of the merge",
                                      path.string()));
    }
    MergeRun run;
    run.source = path.string();
    run.record.key = new_run_key();
    run.record.status = RunStatus::finished;
    run.record.source = path.string();
    run.record.env = environment_of_cells(!report.environment.empty() ? report.environment : report.rows.front().cells);
    const bool generation = std::find(report.columns.begin(), report.columns.end(), "step") != report.columns.end();
    run.record.command = generation ? "generate" : "sweep";
    run.rows = std::move(report.rows);
    run.cut_line = report.cut_line;
    runs.push_back(std::move(run));
    return runs;
}

MergedReport merge_runs(std::vector<MergeRun> runs) {
    if (runs.empty()) throw ConfigError("nothing to merge: name the shard reports or databases");
    std::set<std::string> commands;
    for (const MergeRun& run : runs) {
        if (!run.rows.empty()) commands.insert(run.record.command);
    }
    if (commands.size() > 1) {
        throw ConfigError("the inputs hold a sweep's rows and a generation's: merge reports of one command");
    }
    require_same(runs, build_columns_to_match(), "builds",
                 "merge only shards of one build: build the same commit with the same settings everywhere");
    require_same(runs, settings_to_match(), "settings",
                 "every shard of a grid runs the same command but for --shard (the same --reps or --min-time, "
                 "--warmup, --seed, --cache-state)");
    MergedReport merged;
    // Dropped as --resume drops it (a sweep killed while writing its last point), but a merge
    // is the grid's report: it says which point it lacks.
    for (const MergeRun& run : runs) {
        if (run.cut_line == 0) continue;
        const bool generation = run.record.command == "generate";
        merged.warnings.push_back(fmt::format(
            "{}: its last line (line {}) is cut short, with no line break (a {} stopped while writing it): the row "
            "it held is missing from the merged report; {}",
            run.source, run.cut_line, generation ? "generate" : "sweep",
            generation ? "run the shard again and merge again"
                       : "finish the shard with sweep ... --resume and merge again"));
    }
    check_shards(runs, merged.warnings);
    check_overlap(runs);
    check_machines(runs, merged.warnings);
    for (std::size_t r = 0; r < runs.size(); ++r) {
        for (std::size_t i = 0; i < runs[r].rows.size(); ++i) merged.order.emplace_back(r, i);
    }
    std::stable_sort(merged.order.begin(), merged.order.end(), [&](const auto& a, const auto& b) {
        return configuration_order(runs[a.first].rows[a.second]) < configuration_order(runs[b.first].rows[b.second]);
    });
    merged.runs = std::move(runs);
    return merged;
}

void write_merged(std::ostream& out, OutputFormat format, const MergedReport& merged) {
    switch (format) {
    case OutputFormat::csv: write_merged_csv(out, merged); return;
    case OutputFormat::json: write_merged_json(out, merged); return;
    case OutputFormat::jsonl: write_merged_jsonl(out, merged); return;
    case OutputFormat::sql: {
        const auto runs = stored_runs(merged);
        write_sql_script(out, runs);
        return;
    }
    case OutputFormat::table:
    case OutputFormat::md:
    case OutputFormat::sqlite: break;
    }
    throw std::invalid_argument("write_merged: csv, json, jsonl or sql only");
}

std::size_t add_merged_runs(const std::filesystem::path& path, const MergedReport& merged,
                            std::vector<std::string>& skipped) {
    ResultsDatabase database = ResultsDatabase::open_for_writing(path);
    std::size_t added = 0;
    const auto runs = stored_runs(merged);
    for (std::size_t r = 0; r < runs.size(); ++r) {
        const auto& [record, rows] = runs[r];
        if (database.has_run(record.key)) {
            skipped.push_back(merged.runs[r].source);
            continue;
        }
        database.add_run(record, rows);
        ++added;
    }
    return added;
}

}  // namespace kvbench
