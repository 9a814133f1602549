// The export manager: incremental saves, the unwritable files, the final write and the stdout report.
#include "kvbench/report/export_manager.hpp"

#include "kvbench/files/atomic_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <stdexcept>

namespace kvbench {

void write_rows(std::ostream& out, OutputFormat format, const ReportRows& rows, const Environment& env,
                const TableOptions& table) {
    switch (format) {
    case OutputFormat::table: write_table(out, rows.rows, env, table); return;
    case OutputFormat::md: write_markdown(out, rows.rows, env, table); return;
    case OutputFormat::csv: write_csv_with_extra(out, rows.rows, rows.extra, env); return;
    case OutputFormat::json: write_json_with_extra(out, rows.rows, rows.extra, env); return;
    case OutputFormat::jsonl: write_jsonl_with_extra(out, rows.rows, rows.extra, env); return;
    case OutputFormat::sql:
    case OutputFormat::sqlite: break;  // a run's record, with its key: ExportManager writes them
    }
    throw std::invalid_argument("write_rows: sql and sqlite are written by the export manager");
}

std::vector<std::string> ExportResult::written_paths() const {
    std::vector<std::string> paths;
    for (const OutputTarget& target : written) paths.push_back(target.path);
    return paths;
}

std::string ExportResult::holder() const {
    if (!written.empty()) return fmt::format("{}", fmt::join(written_paths(), " and "));
    return stdout_report ? "the report on standard output" : "the report above";
}

std::string ExportResult::csv_to_plot() const {
    const auto csv = std::find_if(written.begin(), written.end(),
                                  [](const OutputTarget& target) { return target.format == OutputFormat::csv; });
    return csv == written.end() ? std::string() : csv->path;
}

ExportManager::ExportManager(ExportPlan plan, const Environment& env, RunMessages messages, std::ostream& report_out)
    : plan_(std::move(plan)), env_(env), messages_(std::move(messages)), report_out_(report_out),
      run_key_(new_run_key()) {
    for (const OutputTarget& target : plan_.files) {
        if (target.format == OutputFormat::sqlite) databases_.push_back({target.path, std::nullopt, {}, 0});
    }
}

void ExportManager::start(const ReportRows& rows) {
    for (const OutputTarget& target : plan_.files) {
        if (target.format == OutputFormat::sqlite) continue;
        try {
            write_whole(target, rows);
        } catch (const std::exception& error) {
            note_unwritable(target.path, error);
        }
    }
    for (DatabaseTarget& database : databases_) {
        try {
            store_pending(database);
        } catch (const std::exception& error) {
            note_unwritable(database.path, error);
        }
    }
    started_ = true;
}

void ExportManager::save_point(const ReportRows& point_rows, const ReportRows& all_rows) {
    std::ostringstream lines;
    write_jsonl_with_extra(lines, point_rows.rows, point_rows.extra, env_);
    for (const OutputTarget& target : plan_.files) {
        try {
            if (target.format == OutputFormat::jsonl) {
                append_to_file(target.path, lines.str());
            } else if (target.format != OutputFormat::sqlite) {
                write_whole(target, all_rows);
            }
        } catch (const std::exception& error) {
            note_unwritable(target.path, error);
        }
    }
    for (DatabaseTarget& database : databases_) {
        std::vector<StoredRow> rows = stored_rows(point_rows.rows, point_rows.extra);
        database.pending.insert(database.pending.end(), std::make_move_iterator(rows.begin()),
                                std::make_move_iterator(rows.end()));
        try {
            store_pending(database);
        } catch (const std::exception& error) {
            note_unwritable(database.path, error);
        }
    }
    if (plan_.stdout_format == OutputFormat::jsonl) {
        report_out_ << lines.str();
        report_out_.flush();
    }
}

ExportResult ExportManager::finish(const ReportRows& all_rows, RunStatus status) {
    ExportResult result;
    result.stdout_report = plan_.stdout_format.has_value();
    for (const OutputTarget& target : plan_.files) {
        const bool appended = target.format == OutputFormat::jsonl && started_ && !is_unwritable(target.path);
        try {
            if (target.format == OutputFormat::sqlite) {
                DatabaseTarget& database = *std::find_if(databases_.begin(), databases_.end(),
                                                         [&](const DatabaseTarget& d) { return d.path == target.path; });
                // A run that measured nothing (every point resumed) adds no run to the database.
                if (!database.database && database.pending.empty()) continue;
                store_pending(database);
                database.database->end_run(run_key_, status);
            } else if (!appended) {
                write_whole(target, all_rows, status);
            }
            result.written.push_back(target);
        } catch (const std::exception& error) {
            messages_.failure(fmt::format("{}; {} are in the tables below", error.what(), plan_.tables_hold));
            result.failed.push_back(target.path);
        }
    }
    if (plan_.stdout_format == OutputFormat::sql) {
        write_sql(report_out_, all_rows, status);
    } else if (plan_.stdout_format && *plan_.stdout_format != OutputFormat::jsonl) {
        write_rows(report_out_, *plan_.stdout_format, all_rows, env_, plan_.table);  // --time-unit applies
    }
    return result;
}

void check_report_stream(std::ostream& out) {
    out.flush();
    if (!out || std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
        throw std::runtime_error("cannot write the report to standard output (disk full, or the pipe closed?)");
    }
}

void ExportManager::check_report_stream() const { kvbench::check_report_stream(report_out_); }

void ExportManager::write_whole(const OutputTarget& target, const ReportRows& rows, RunStatus status) {
    write_file_atomically(target.path, [&](std::ostream& out) {
        if (target.format == OutputFormat::sql) {
            write_sql(out, rows, status);
        } else {
            write_rows(out, target.format, rows, env_);
        }
    });
}

// The whole run as one script, under the run's one key: loading a newer rewrite of the file
// into a database that holds an older one is refused, never a second copy of the run.
// Only the rows this run measured, as a database gets them: a row --resume kept is another run's.
void ExportManager::write_sql(std::ostream& out, const ReportRows& rows, RunStatus status) const {
    RunRecord run{run_key_, plan_.command, status, "", "", env_};
    if (status != RunStatus::running) run.finished_at = utc_timestamp_now();
    ReportRows measured{{}, rows.extra};
    for (ExtraColumn& column : measured.extra) column.values.clear();
    for (std::size_t i = 0; i < rows.rows.size(); ++i) {
        if (!rows.rows[i].provenance.empty()) continue;
        measured.rows.push_back(rows.rows[i]);
        for (std::size_t c = 0; c < rows.extra.size(); ++c) measured.extra[c].values.push_back(rows.extra[c].values[i]);
    }
    const std::pair<RunRecord, std::vector<StoredRow>> script[] = {{run, stored_rows(measured.rows, measured.extra)}};
    write_sql_script(out, script);
}

void ExportManager::store_pending(DatabaseTarget& target) {
    if (!target.database) {
        ResultsDatabase database = ResultsDatabase::open_for_writing(target.path);
        database.add_run(RunRecord{run_key_, plan_.command, RunStatus::running, "", "", env_});
        target.database = std::move(database);
    }
    if (target.pending.empty()) return;
    target.database->add_rows(run_key_, target.n_stored, target.pending);
    target.n_stored += target.pending.size();
    target.pending.clear();
}

bool ExportManager::is_unwritable(const std::string& path) const {
    return std::find(unwritable_.begin(), unwritable_.end(), path) != unwritable_.end();
}

// Says once per file that it cannot be written now; finish() tries it again.
void ExportManager::note_unwritable(const std::string& path, const std::exception& error) {
    if (is_unwritable(path)) return;
    unwritable_.push_back(path);
    messages_.warning(fmt::format("{}; the {} goes on and tries again at the end", error.what(), plan_.run_name));
}

}  // namespace kvbench
