// The shared output options: registration, format names and extensions, and every check on a target.
#include "cli/output_options.hpp"

#include "kvbench/engine/ascii_case.hpp"
#include "kvbench/engine/config.hpp"
#include "kvbench/files/atomic_file.hpp"
#include "kvbench/report/database.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <unistd.h>

namespace kvbench {

namespace {

namespace fs = std::filesystem;

// "table, csv, json or md"
std::string list_of(const OutputFormats& formats) {
    std::string text;
    for (std::size_t i = 0; i < formats.size(); ++i) {
        if (i > 0) text += i + 1 == formats.size() ? " or " : ", ";
        text += format_name(formats[i]);
    }
    return text;
}

bool writes(const OutputFormats& formats, OutputFormat format) {
    return std::find(formats.begin(), formats.end(), format) != formats.end();
}

// The formats a file can take: those of the command, less the table when it is terminal-only.
OutputFormats file_formats(const OutputFormats& formats, bool table_to_file) {
    OutputFormats kept;
    for (const OutputFormat format : formats) {
        if (format != OutputFormat::table || table_to_file) kept.push_back(format);
    }
    return kept;
}

// ".csv .json .jsonl .md .txt (table)": the extensions -o reads a format from.
std::string extension_list(const OutputFormats& to_file) {
    std::vector<std::string> extensions;
    for (const OutputFormat format : to_file) {
        extensions.push_back(format == OutputFormat::table ? ".txt (table)" : fmt::format(".{}", format_name(format)));
    }
    std::stable_partition(extensions.begin(), extensions.end(), [](const std::string& e) { return e != ".txt (table)"; });
    return fmt::format("{}", fmt::join(extensions, " "));
}

OutputFormat checked_format(const std::string& name, const std::string& flag, const OutputFormats& formats) {
    const std::optional<OutputFormat> format = parse_format_name(name);
    if (!format) throw ConfigError(fmt::format("{} {}: not a format (choose {})", flag, name, list_of(formats)));
    if (!writes(formats, *format)) {
        throw ConfigError(fmt::format("{} {}: this command writes {} only", flag, name, list_of(formats)));
    }
    return *format;
}

// `-o csv` as llama-bench's -o means a format: a bare format name is not taken for a file name.
void refuse_format_as_file(const std::string& path) {
    if (fs::path(path).has_parent_path() || !parse_format_name(path)) return;
    throw ConfigError(fmt::format("-o {0}: names a format, not a file: did you mean --format {1}? "
                                  "(a file named {0}: -o ./{0})",
                                  path, lowercase(path)));
}

// A database target: also a file kvbench can add a run to (database.hpp).
void check_database_target(const std::string& path, const std::string& flag) {
    check_output_file(path, flag, "runs.sqlite");
    try {
        check_database_file(path);
    } catch (const std::runtime_error& error) {
        throw ConfigError(fmt::format("{} {}: {}", flag, path, error.what()));
    }
}

void check_target(const OutputTarget& target, const std::string& flag) {
    if (target.format == OutputFormat::sqlite) {
        check_database_target(target.path, flag);
    } else {
        check_output_file(target.path, flag);
    }
}

// --db FILE, else $KVBENCH_DB when set and not empty, unless --no-db; with the flag that named it.
std::optional<std::pair<std::string, std::string>> database_option(const OutputCliOptions& options) {
    if (options.no_db) return std::nullopt;
    if (options.db) {
        if (options.db->empty()) {
            throw ConfigError("--db: the file name is empty (name the results database, e.g. --db results.sqlite; "
                              "--no-db for none)");
        }
        return std::pair{*options.db, std::string("--db")};
    }
    const std::optional<std::string> configured = default_database();
    if (!configured) return std::nullopt;
    return std::pair{*configured, fmt::format("${} (--no-db ignores it)", database_variable)};
}

// The file a target writes, as a key: a link and the file it leads to are one file.
std::string written_file_key(const std::string& path) {
    fs::path file = path;
    try {
        file = write_destination(path);
    } catch (const std::runtime_error&) {
        // a symlink loop: check_target refuses it by name
    }
    std::error_code ignored;
    return fs::absolute(file, ignored).lexically_normal().string();
}

OutputTarget parse_export(const std::string& spec, const OutputFormats& formats) {
    const std::string flag = "--export " + spec;
    const std::size_t colon = spec.find(':');
    if (colon == std::string::npos) {
        // A bare format ("--export md") wants a file name; a bare file name wants its format.
        if (const std::optional<OutputFormat> named = parse_format_name(spec)) {
            throw ConfigError(fmt::format("{}: write FORMAT:PATH, e.g. --export {}:results.{}", flag,
                                          format_name(*named), format_name(*named)));
        }
        const std::optional<OutputFormat> implied = format_of_extension(spec);
        throw ConfigError(fmt::format("{}: write FORMAT:PATH, e.g. --export {}:{}", flag,
                                      implied ? format_name(*implied) : "csv", spec.empty() ? "results.csv" : spec));
    }
    const std::string name = spec.substr(0, colon);
    OutputTarget target{checked_format(name, "--export", formats), spec.substr(colon + 1)};
    if (target.path.empty()) throw ConfigError(fmt::format("{}: the file name is empty (e.g. --export {}:results.{})",
                                                           flag, name, format_name(target.format)));
    if (target.path == "-") {
        throw ConfigError(fmt::format("{}: an export goes to a file; for stdout give -o - --format {}", flag,
                                      format_name(target.format)));
    }
    const std::optional<OutputFormat> implied = format_of_extension(target.path);
    if (implied && *implied != target.format) {
        throw ConfigError(fmt::format("{}: the extension says {}, not {} (write {}:{} or rename the file)", flag,
                                      format_name(*implied), format_name(target.format), format_name(*implied),
                                      target.path));
    }
    return target;
}

}  // namespace

std::optional<std::string> default_database() {
    const char* configured = std::getenv(database_variable);
    if (configured == nullptr || *configured == '\0') return std::nullopt;
    return std::string(configured);
}

std::string database_read_error(const std::string& path, const std::string& what) {
    if (what.starts_with(path + ":") || what.starts_with(path + " ")) return fmt::format("--db {}", what);
    return fmt::format("--db {}: {}", path, what);
}

std::vector<OutputTarget> OutputPlan::files() const {
    std::vector<OutputTarget> targets;
    if (file) targets.push_back({format, *file});
    targets.insert(targets.end(), exports.begin(), exports.end());
    return targets;
}

const OutputFormats& all_output_formats() {
    static const OutputFormats formats{OutputFormat::table, OutputFormat::csv,  OutputFormat::json,  OutputFormat::jsonl,
                                       OutputFormat::md,    OutputFormat::sql,  OutputFormat::sqlite};
    return formats;
}

const char* format_name(OutputFormat format) {
    switch (format) {
    case OutputFormat::table: return "table";
    case OutputFormat::csv: return "csv";
    case OutputFormat::json: return "json";
    case OutputFormat::jsonl: return "jsonl";
    case OutputFormat::md: return "md";
    case OutputFormat::sql: return "sql";
    case OutputFormat::sqlite: return "sqlite";
    }
    return "?";
}

std::optional<OutputFormat> parse_format_name(const std::string& name) {
    const std::string lower = lowercase(name);
    for (const OutputFormat format : all_output_formats()) {
        if (lower == format_name(format)) return format;
    }
    return std::nullopt;
}

std::optional<OutputFormat> format_of_extension(const std::string& path) {
    const std::string extension = lowercase(fs::path(path).extension().string());
    if (extension == ".txt") return OutputFormat::table;
    if (extension == ".db" || extension == ".sqlite3") return OutputFormat::sqlite;
    if (extension.size() < 2 || extension == ".table") return std::nullopt;
    return parse_format_name(extension.substr(1));
}

void add_output_options(CLI::App* command, OutputCliOptions& options, const OutputFormats& formats,
                        bool table_to_file) {
    const OutputFormats to_file = file_formats(formats, table_to_file);
    command->add_option("-f,--format", options.format,
                        fmt::format("Report format: {}\n(any case; default: from -o's\nextension, else {})",
                                    list_of(formats), format_name(formats.front())))
        ->type_name("FORMAT");
    const std::string database_note =
        writes(formats, OutputFormat::sqlite) ? "\n(.sqlite or .db: the run is added to\nthat database)" : "";
    command->add_option("-o,--output", options.output,
                        fmt::format("Write the report to FILE, whole or not at\nall; its extension gives the "
                                    "format:\n{}{}\n-o - writes it to stdout, the tables to\nstderr",
                                    extension_list(to_file), database_note))
        ->type_name("FILE");
    const std::string example = table_to_file ? "md:a.md" : "json:a.json";
    command->add_option("--export", options.exports,
                        fmt::format("Also write FORMAT to PATH (repeatable):\n--export csv:a.csv --export {}\n"
                                    "FORMAT: {}",
                                    example, list_of(to_file)))
        ->type_name("FORMAT:PATH");
    command->add_flag("-q,--quiet", options.quiet,
                                           "Print only the report and errors: no\nwarnings or messages; no tables when\n"
                                           "-o or -f sends the report elsewhere\n"
                                           "(without them the tables are the report)");
}

void add_verbose_option(CLI::App* command, OutputCliOptions& options) {
    command->add_flag("-v,--verbose", options.verbose, "One line per finished point on stderr")
        ->excludes(command->get_option("--quiet"));
}

void add_database_options(CLI::App* command, OutputCliOptions& options) {
    CLI::Option* db = command->add_option("--db", options.db,
                                          fmt::format("Add the run to the results database FILE\n(SQLite, created if "
                                                      "missing), point by\npoint (default: ${})",
                                                      database_variable))
                          ->type_name("FILE");
    command->add_flag("--no-db", options.no_db, fmt::format("Write no database, whatever ${} says", database_variable))
        ->excludes(db);
}

ExportPlan to_export_plan(const OutputPlan& out, const TableOptions& table, const std::string& run_name,
                          const std::string& tables_hold) {
    ExportPlan plan;
    plan.files = out.files();
    if (out.stdout_is_report()) plan.stdout_format = out.format;
    plan.table = table;
    plan.run_name = run_name;
    plan.tables_hold = tables_hold;
    return plan;
}

OutputPlan to_output_plan(const OutputCliOptions& options, const OutputFormats& formats, bool table_to_file) {
    OutputPlan plan;
    plan.quiet = options.quiet;
    plan.verbose = options.verbose;
    std::optional<OutputFormat> given;
    if (options.format) given = checked_format(*options.format, "--format", formats);
    plan.format = given.value_or(formats.front());

    if (options.output && *options.output != "-") {
        const std::string& path = *options.output;
        refuse_format_as_file(path);
        check_output_file(path, "-o");
        const std::optional<OutputFormat> implied = format_of_extension(path);
        if (given && implied && *given != *implied) {
            throw ConfigError(fmt::format("-o {}: the extension says {} but --format says {} (rename the file or "
                                          "drop --format)",
                                          path, format_name(*implied), format_name(*given)));
        }
        if (!given && !implied) {
            throw ConfigError(fmt::format("-o {}: cannot tell the format from the name: give --format or end it in "
                                          "{}",
                                          path, extension_list(file_formats(formats, table_to_file))));
        }
        plan.format = given ? *given : *implied;
        if (!writes(formats, plan.format)) {
            throw ConfigError(fmt::format("-o {}: this command writes {} only", path, list_of(formats)));
        }
        if (plan.format == OutputFormat::sqlite) check_database_target(path, "-o");
        if (plan.format == OutputFormat::table && !table_to_file) {
            throw ConfigError(fmt::format("-o {}: the tables go to the terminal only; write {} to a file (e.g. "
                                          "-o {}.csv)",
                                          path, list_of(file_formats(formats, false)),
                                          fs::path(path).replace_extension().string()));
        }
        plan.file = path;
    }

    if (!plan.file && plan.format == OutputFormat::sqlite) {
        throw ConfigError("--format sqlite: a database is a file, not a stream: give -o FILE.sqlite or --db FILE "
                          "(or --format sql for its SQL on stdout)");
    }

    std::vector<std::string> seen;
    if (plan.file) seen.push_back(written_file_key(*plan.file));
    for (const std::string& spec : options.exports) {
        OutputTarget target = parse_export(spec, file_formats(formats, table_to_file));
        const std::string key = written_file_key(target.path);
        if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
            throw ConfigError(fmt::format("--export {}: {} is already written by -o or another --export", spec,
                                          target.path));
        }
        seen.push_back(key);
        check_target(target, "--export " + spec);
        plan.exports.push_back(std::move(target));
    }
    if (const auto database = database_option(options); database && writes(formats, OutputFormat::sqlite)) {
        const auto& [path, flag] = *database;
        const OutputTarget target{OutputFormat::sqlite, path};
        const std::string key = written_file_key(path);
        const std::vector<OutputTarget> targets = plan.files();
        const auto same = std::find_if(targets.begin(), targets.end(),
                                       [&](const OutputTarget& t) { return written_file_key(t.path) == key; });
        if (same == targets.end()) {
            check_target(target, flag);
            plan.exports.push_back(target);
        } else if (same->format != OutputFormat::sqlite) {
            throw ConfigError(fmt::format("{} {}: -o or --export already writes {} there (name another file for the "
                                          "database)",
                                          flag, path, format_name(same->format)));
        }  // else -o or --export names the same database: the run goes there once
    }
    return plan;
}

void check_output_file(const std::string& output, const std::string& flag, const std::string& example) {
    if (output.empty()) {
        throw ConfigError(fmt::format("{}: the file name is empty (name the report file, e.g. {} {})", flag, flag,
                                      example));
    }
    // The report replaces the file a link leads to (files/atomic_file.hpp): its directory is the
    // one that must take a new file.
    fs::path destination;
    try {
        destination = write_destination(output);
    } catch (const std::runtime_error& error) {
        throw ConfigError(fmt::format("{} {}: {}", flag, output, error.what()));
    }
    std::error_code ignored;
    const fs::file_status status = fs::status(destination, ignored);
    if (fs::is_directory(status)) {
        throw ConfigError(fmt::format("{} {}: is a directory (name a file inside it, e.g. {}/{})", flag, output,
                                      (fs::path(output).lexically_normal() / "").parent_path().string(), example));
    }
    // The report is written beside its file and renamed over it (files/atomic_file.hpp), so
    // a device such as /dev/full or /dev/null would be replaced by a regular file.
    if (fs::exists(status) && !fs::is_regular_file(status)) {
        throw ConfigError(fmt::format("{} {}: is not a regular file (the report replaces its file by a "
                                      "rename; name a file in a writable directory)",
                                      flag, output));
    }
    const fs::path parent = fs::absolute(destination, ignored).parent_path();
    const fs::file_status parent_status = fs::status(parent, ignored);
    if (fs::exists(parent_status) && !fs::is_directory(parent_status)) {
        throw ConfigError(fmt::format("{} {}: {} is not a directory", flag, output, parent.string()));
    }
    if (!fs::is_directory(parent_status)) {
        throw ConfigError(fmt::format("{} {}: directory {} does not exist", flag, output, parent.string()));
    }
    // Creating a file is the one check that sees everything that can forbid it: permissions,
    // a read-only or pseudo filesystem, root's privileges. The probe is removed at once.
    const std::string probe = destination.string() + fmt::format(".tmp-check-{}", ::getpid());
    const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
        throw ConfigError(fmt::format("{} {}: cannot create a file in {}: {}", flag, output, parent.string(),
                                      std::strerror(errno)));
    }
    ::close(fd);
    ::unlink(probe.c_str());
}

}  // namespace kvbench
