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
    }
    throw std::invalid_argument("write_rows: unknown output format");
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
    : plan_(std::move(plan)), env_(env), messages_(std::move(messages)), report_out_(report_out) {}

void ExportManager::start(const ReportRows& rows) {
    for (const OutputTarget& target : plan_.files) {
        try {
            write_whole(target, rows);
        } catch (const std::exception& error) {
            note_unwritable(target.path, error);
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
            } else {
                write_whole(target, all_rows);
            }
        } catch (const std::exception& error) {
            note_unwritable(target.path, error);
        }
    }
    if (plan_.stdout_format == OutputFormat::jsonl) {
        report_out_ << lines.str();
        report_out_.flush();
    }
}

ExportResult ExportManager::finish(const ReportRows& all_rows) {
    ExportResult result;
    result.stdout_report = plan_.stdout_format.has_value();
    for (const OutputTarget& target : plan_.files) {
        const bool appended = target.format == OutputFormat::jsonl && started_ && !is_unwritable(target.path);
        try {
            if (!appended) write_whole(target, all_rows);
            result.written.push_back(target);
        } catch (const std::exception& error) {
            messages_.failure(fmt::format("{}; {} are in the tables below", error.what(), plan_.tables_hold));
            result.failed.push_back(target.path);
        }
    }
    if (plan_.stdout_format && *plan_.stdout_format != OutputFormat::jsonl) {
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

void ExportManager::write_whole(const OutputTarget& target, const ReportRows& rows) {
    write_file_atomically(target.path, [&](std::ostream& out) { write_rows(out, target.format, rows, env_); });
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
