// Parses kvbench's own CSV (RFC 4180) and JSON (nlohmann-json) reports back into rows, column by column.
#include "kvbench/report/read_report.hpp"

#include "kvbench/report/columns.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <charconv>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>

namespace kvbench {

namespace {

// One row's cells by column name; absent and empty cells read as std::nullopt.
using CellReader = std::function<std::optional<std::string>(const std::string& name)>;

[[noreturn]] void bad_cell(const std::string& column, const std::string& value, const char* expected) {
    throw std::runtime_error(fmt::format("column {}: '{}' is not {}", column, value, expected));
}

std::string required(const CellReader& cell, const std::string& name) {
    std::optional<std::string> value = cell(name);
    if (!value) throw std::runtime_error(fmt::format("column {} is missing or empty", name));
    return *value;
}

template <typename Number>
Number parse_number(const std::string& column, const std::string& text) {
    Number value{};
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size()) bad_cell(column, text, "a number");
    return value;
}

std::size_t count_of(const CellReader& cell, const std::string& name) {
    return parse_number<std::size_t>(name, required(cell, name));
}

double real_of(const CellReader& cell, const std::string& name) {
    return parse_number<double>(name, required(cell, name));
}

std::optional<double> optional_real(const CellReader& cell, const std::string& name) {
    const std::optional<std::string> text = cell(name);
    if (!text) return std::nullopt;
    return parse_number<double>(name, *text);
}

bool bool_of(const CellReader& cell, const std::string& name) {
    const std::string text = required(cell, name);
    if (text == "true") return true;
    if (text == "false") return false;
    bad_cell(name, text, "true or false");
}

// Rebuilds a row from its columns. The cost is recomputed from the configuration (the
// build that wrote it is the same one, or the row is not reused) and checked against the file.
SavedRow read_row(const CellReader& cell) {
    SavedRow saved;
    ResultRow& row = saved.row;
    const std::string path = required(cell, "path");
    if (path != "cached" && path != "uncached") bad_cell("path", path, "cached or uncached");
    row.path = path == "cached" ? DecodePath::cached : DecodePath::uncached;
    row.config.n_batch = count_of(cell, "batch");
    row.config.seq_len = count_of(cell, "seq");
    row.config.model_dim = count_of(cell, "dim");
    row.config.n_heads = count_of(cell, "heads");
    row.config.n_kv_heads = count_of(cell, "kv_heads");
    row.config.n_layers = count_of(cell, "layers");
    // Explicit only where it differs from D/H, as --head-dim would have made it.
    const std::size_t head_dim = count_of(cell, "head_dim");
    if (head_dim == 0) bad_cell("head_dim", "0", "a positive number");
    const bool is_d_over_h = row.config.n_heads != 0 && row.config.model_dim % row.config.n_heads == 0 &&
                             row.config.model_dim / row.config.n_heads == head_dim;
    row.config.explicit_head_dim = is_d_over_h ? 0 : head_dim;
    row.kv_dtype = required(cell, "kv_dtype");
    const std::optional<KvDtype> kv_dtype = find_kv_dtype(row.kv_dtype);
    if (!kv_dtype) bad_cell("kv_dtype", row.kv_dtype, "f32, f16, bf16 or int8");
    row.config.kv_dtype = *kv_dtype;
    validate(row.config);
    row.n_threads = count_of(cell, "threads");
    row.cache_state = required(cell, "cache_state");
    row.cost = step_cost(row.config, row.path);
    if (count_of(cell, "flops") != row.cost.flops || count_of(cell, "bytes") != row.cost.bytes) {
        throw std::runtime_error("columns flops and bytes disagree with the configuration");
    }
    row.stats.n_samples = count_of(cell, "reps");
    row.stats.median_ns = 1000 * real_of(cell, "latency_us_median");
    row.stats.min_ns = 1000 * real_of(cell, "latency_us_min");
    row.stats.max_ns = 1000 * real_of(cell, "latency_us_max");
    row.stats.p90_ns = 1000 * real_of(cell, "latency_us_p90");
    row.stats.mean_ns = 1000 * real_of(cell, "latency_us_mean");
    // Schema 1 wrote these as fractions under other names (docs/csv.md#schema-version).
    row.stats.cv = cell("latency_cv_pct") ? real_of(cell, "latency_cv_pct") / 100 : real_of(cell, "latency_cv");
    row.stats.mdape =
        cell("latency_mdape_pct") ? real_of(cell, "latency_mdape_pct") / 100 : real_of(cell, "latency_mdape");
    row.stats.stddev_ns = row.stats.cv * row.stats.mean_ns;
    row.gflops = real_of(cell, "gflops");
    row.gbps = real_of(cell, cell("gb_per_s") ? "gb_per_s" : "gbps");
    row.roofline_pct = optional_real(cell, "roofline_pct");
    row.speedup = optional_real(cell, "speedup");
    row.verify_rel_error = optional_real(cell, "verify_rel_error");
    if (cell("kv_rel_error")) row.kv_rel_error = optional_real(cell, "kv_rel_error");
    row.fits_in_llc = bool_of(cell, "fits_in_llc");
    if (const std::optional<std::string> executed = cell("flops_executed")) {
        row.flops_executed = parse_number<std::uint64_t>("flops_executed", *executed);
    }
    row.noisy = bool_of(cell, "noisy");
    row.reps_policy = required(cell, "reps_policy");
    // The reproducibility columns are new in schema 2: a file without them keeps the defaults.
    if (cell("seed")) row.seed = parse_number<std::uint64_t>("seed", required(cell, "seed"));
    if (cell("warmup")) row.n_warmup = count_of(cell, "warmup");
    row.roofline_peak_gflops = optional_real(cell, "roofline_peak_gflops");
    row.roofline_peak_gbps = optional_real(cell, "roofline_peak_gb_per_s");
    row.roofline_source = cell("roofline_source").value_or(row.roofline_pct ? "unknown" : "none");
    return saved;
}

template <typename Read>
SavedRow read_numbered_row(std::size_t number, Read&& read) {
    try {
        return read();
    } catch (const std::exception& error) {
        throw std::runtime_error(fmt::format("row {}: {}", number, error.what()));
    }
}

}  // namespace

std::vector<std::vector<std::string>> parse_csv_records(const std::string& text) {
    std::vector<std::vector<std::string>> records;
    std::vector<std::string> record;
    std::string field;
    bool quoted = false;
    bool record_open = false;  // something of the current record was read
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (quoted) {
            if (c != '"') {
                field += c;
            } else if (i + 1 < text.size() && text[i + 1] == '"') {
                field += '"';
                ++i;
            } else {
                quoted = false;
            }
            continue;
        }
        if (c == '"') {
            quoted = true;
            record_open = true;
        } else if (c == ',') {
            record.push_back(std::move(field));
            field.clear();
            record_open = true;
        } else if (c == '\n' || (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n')) {
            if (c == '\r') ++i;
            record.push_back(std::move(field));
            field.clear();
            records.push_back(std::move(record));
            record.clear();
            record_open = false;
        } else {
            field += c;
            record_open = true;
        }
    }
    if (quoted) throw std::runtime_error("a quoted field is not closed");
    if (record_open) {  // a last record without its line break
        record.push_back(std::move(field));
        records.push_back(std::move(record));
    }
    return records;
}

std::vector<SavedRow> read_csv_report(std::istream& in) {
    std::ostringstream text;
    text << in.rdbuf();
    const std::vector<std::vector<std::string>> records = parse_csv_records(text.str());
    if (records.empty()) throw std::runtime_error("no CSV header");
    std::map<std::string, std::size_t> index;
    for (std::size_t i = 0; i < records.front().size(); ++i) index[records.front()[i]] = i;
    if (!index.contains("path") || !index.contains("git_commit")) {
        throw std::runtime_error("the header is not kvbench's (no path or git_commit column)");
    }
    std::vector<SavedRow> rows;
    for (std::size_t r = 1; r < records.size(); ++r) {
        const std::vector<std::string>& record = records[r];
        if (record.size() != records.front().size()) {
            throw std::runtime_error(fmt::format("row {}: {} fields, the header has {}", r, record.size(),
                                                 records.front().size()));
        }
        const CellReader cell = [&](const std::string& name) -> std::optional<std::string> {
            const auto found = index.find(name);
            if (found == index.end() || record[found->second].empty()) return std::nullopt;
            return record[found->second];
        };
        SavedRow saved = read_numbered_row(r, [&] { return read_row(cell); });
        saved.tool_version = cell("tool_version").value_or("");
        saved.git_commit = cell("git_commit").value_or("");
        rows.push_back(std::move(saved));
    }
    return rows;
}

namespace {

// A JSON or JSON Lines report this build can read: schema 1 or 2 (docs/csv.md#schema-version).
void check_schema_version(const nlohmann::json& object) {
    const auto found = object.find("schema_version");
    if (found == object.end()) throw std::runtime_error("no schema_version");
    const int version = found->get<int>();
    if (version < 1 || version > report_schema_version) {
        throw std::runtime_error(fmt::format("schema_version {} is not one this kvbench reads (1 to {})", version,
                                             report_schema_version));
    }
}

// A row of a JSON or JSON Lines report: its cells back to the CSV's text, so every format
// shares one row parser; the samples give the statistics exactly as they were computed,
// without the rounding of a trip through microseconds.
SavedRow read_json_row(const nlohmann::json& json_row) {
    const CellReader cell = [&](const std::string& name) -> std::optional<std::string> {
        const auto found = json_row.find(name);
        if (found == json_row.end() || found->is_null()) return std::nullopt;
        if (found->is_string()) return found->get<std::string>();
        if (found->is_number_float()) return fmt::format("{}", found->get<double>());
        return found->dump();
    };
    SavedRow saved = read_row(cell);
    saved.row.samples_ns = json_row.at("samples_ns").get<std::vector<std::int64_t>>();
    if (!saved.row.samples_ns.empty()) saved.row.stats = summarize(saved.row.samples_ns);
    return saved;
}

}  // namespace

std::vector<SavedRow> read_json_report(std::istream& in) {
    const nlohmann::json report = nlohmann::json::parse(in);  // throws nlohmann::json::parse_error
    check_schema_version(report);
    const nlohmann::json& environment = report.at("environment");
    const std::string tool_version = environment.at("tool_version").get<std::string>();
    const std::string git_commit = environment.at("git_commit").get<std::string>();
    std::vector<SavedRow> rows;
    std::size_t number = 0;
    for (const nlohmann::json& json_row : report.at("rows")) {
        ++number;
        SavedRow saved = read_numbered_row(number, [&] { return read_json_row(json_row); });
        saved.tool_version = tool_version;
        saved.git_commit = git_commit;
        rows.push_back(std::move(saved));
    }
    return rows;
}

std::vector<SavedRow> read_jsonl_report(std::istream& in) {
    std::vector<SavedRow> rows;
    std::string line;
    std::size_t number = 0;
    while (std::getline(in, line)) {
        // A last line without its line break was cut short (a crash, a full disk): the rows
        // before it are whole, and it is dropped (docs/csv.md#jsonl).
        if (in.eof()) break;
        ++number;
        if (line.empty()) continue;
        SavedRow saved = read_numbered_row(number, [&] {
            const nlohmann::json object = nlohmann::json::parse(line);
            check_schema_version(object);
            SavedRow read = read_json_row(object);
            read.tool_version = object.at("tool_version").get<std::string>();
            read.git_commit = object.at("git_commit").get<std::string>();
            return read;
        });
        rows.push_back(std::move(saved));
    }
    return rows;
}

std::vector<SavedRow> read_report_file(const std::filesystem::path& path, OutputFormat format) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(fmt::format("cannot read {}", path.string()));
    try {
        if (format == OutputFormat::csv) return read_csv_report(in);
        if (format == OutputFormat::json) return read_json_report(in);
        if (format == OutputFormat::jsonl) return read_jsonl_report(in);
    } catch (const std::exception& error) {
        throw std::runtime_error(fmt::format("{} is not a kvbench report: {}", path.string(), error.what()));
    }
    throw std::invalid_argument("read_report_file: only csv, json and jsonl reports can be read back");
}

}  // namespace kvbench
