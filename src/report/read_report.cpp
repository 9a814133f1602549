// Turns the cells of a report read back (schema.hpp) into ResultRows, column by column, for --resume.
#include "kvbench/report/read_report.hpp"

#include "kvbench/engine/config_variant.hpp"
#include "kvbench/files/input_file.hpp"
#include "kvbench/report/columns.hpp"
#include "kvbench/report/schema.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string_view>

namespace kvbench {

namespace {

// One row's cells by column name; absent and empty cells read as std::nullopt.
using CellReader = std::function<std::optional<std::string>(const std::string& name)>;

[[noreturn]] void bad_cell(const std::string& column, const std::string& value, const char* expected) {
    throw std::runtime_error(fmt::format("column {}: '{}' is not {}", column, printable(value), expected));
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
    // "K/V" where keys and values differ; k_dtype and v_dtype, newer columns, say the same apart
    // (a file without them has one type for both).
    const std::size_t slash = row.kv_dtype.find('/');
    const auto read_type = [&](const char* column, const std::string& name) {
        const std::optional<KvDtype> dtype = find_kv_dtype(name);
        if (!dtype) bad_cell(column, name, "f32, f16, bf16, int8, e4m3, e5m2, q8_0 or q4_0");
        return *dtype;
    };
    KvDtype key_dtype = read_type("kv_dtype", row.kv_dtype.substr(0, slash));
    KvDtype value_dtype = slash == std::string::npos ? key_dtype : read_type("kv_dtype", row.kv_dtype.substr(slash + 1));
    if (const std::optional<std::string> k = cell("k_dtype"); k && !k->empty()) key_dtype = read_type("k_dtype", *k);
    if (const std::optional<std::string> v = cell("v_dtype"); v && !v->empty()) value_dtype = read_type("v_dtype", *v);
    row.config.set_kv_dtypes(key_dtype, value_dtype);
    // The full layer's columns are new: a file without them holds attention blocks of f32 weights.
    if (const std::optional<std::string> block = cell("block")) {
        if (*block != "attn" && *block != "full") bad_cell("block", *block, "attn or full");
        row.config.block = *block == "full" ? BlockKind::full : BlockKind::attention;
    }
    if (cell("ffn_dim")) row.config.ffn_dim = count_of(cell, "ffn_dim");
    if (const std::optional<std::string> weight_dtype = cell("weight_dtype")) {
        const std::optional<WeightDtype> dtype = find_weight_dtype(*weight_dtype);
        if (!dtype) bad_cell("weight_dtype", *weight_dtype, "f32, bf16, f16 or int8");
        row.config.weight_dtype = *dtype;
    }
    if (const std::optional<std::string> experts = cell("experts_read"); experts && !experts->empty()) {
        row.experts_read = parse_number<std::uint64_t>("experts_read", *experts);
    }
    // Files written before the column hold attention blocks only.
    if (const std::optional<std::string> variant = cell("variant")) {
        try {
            apply_variant(row.config, *variant);
        } catch (const ConfigError& error) {
            throw std::runtime_error(fmt::format("column variant: {}", error.what()));
        }
    }
    if (cell("query_tokens")) row.config.n_query_tokens = count_of(cell, "query_tokens");
    // A file written before the column shares no prefix.
    if (cell("shared_prefix")) row.config.shared_prefix = count_of(cell, "shared_prefix");
    // A file written before the column holds contiguous caches.
    if (cell("kv_block")) row.config.kv_block = count_of(cell, "kv_block");
    // A file written before the columns holds uniform batches of one token a step.
    if (const std::optional<std::string> seq_lens = cell("seq_lens")) {
        try {
            row.config.seq_lens = parse_seq_lens(*seq_lens);
        } catch (const ConfigError& error) {
            throw std::runtime_error(fmt::format("column {}", error.what()));
        }
    }
    validate(row.config);
    // validate() bounds the widths, not N or B: a row of N = 2^64 - 1 would take as long to
    // count as to run (require_countable refuses it, as the grid does).
    require_countable(row.config);
    row.n_threads = count_of(cell, "threads");
    row.cache_state = required(cell, "cache_state");
    row.cost = step_cost(row.config, row.path, row.experts_read);
    if (count_of(cell, "flops") != row.cost.flops || count_of(cell, "bytes") != row.cost.bytes) {
        throw std::runtime_error("columns flops and bytes disagree with the configuration");
    }
    row.stats.n_samples = count_of(cell, "reps");
    row.stats.median_ns = 1000 * real_of(cell, "latency_us_median");
    row.stats.min_ns = 1000 * real_of(cell, "latency_us_min");
    row.stats.max_ns = 1000 * real_of(cell, "latency_us_max");
    row.stats.p90_ns = 1000 * real_of(cell, "latency_us_p90");
    row.stats.mean_ns = 1000 * real_of(cell, "latency_us_mean");
    // Schema 1's names and fractions read as the current columns (schema.hpp's renames).
    row.stats.cv = real_of(cell, "latency_cv_pct") / 100;
    row.stats.mdape = real_of(cell, "latency_mdape_pct") / 100;
    row.stats.stddev_ns = row.stats.cv * row.stats.mean_ns;
    // Without the samples (CSV), the estimate from MdAPE; a JSON row's samples give it exactly.
    if (row.stats.n_samples >= 2) {
        row.stats.median_uncertainty = estimated_median_uncertainty(row.stats.mdape, row.stats.n_samples);
    }
    row.gflops = real_of(cell, "gflops");
    row.gbps = real_of(cell, "gb_per_s");
    row.roofline_pct = optional_real(cell, "roofline_pct");
    row.speedup = optional_real(cell, "speedup");
    row.verify_rel_error = optional_real(cell, "verify_rel_error");
    if (cell("kv_rel_error")) row.kv_rel_error = optional_real(cell, "kv_rel_error");
    if (cell("weight_rel_error")) row.weight_rel_error = optional_real(cell, "weight_rel_error");
    row.fits_in_llc = bool_of(cell, "fits_in_llc");
    if (const std::optional<std::string> executed = cell("flops_executed")) {
        row.flops_executed = parse_number<std::uint64_t>("flops_executed", *executed);
    }
    row.noisy = bool_of(cell, "noisy");
    // New in the flags column: files written before it have no slow rows.
    if (const std::optional<std::string> flags = cell("flags")) {
        std::istringstream words(*flags);
        for (std::string word; words >> word;) row.slow = row.slow || word == flag_slow;
    }
    row.reps_policy = required(cell, "reps_policy");
    // The reproducibility columns are new in schema 2: a file without them keeps the defaults.
    if (cell("seed")) row.seed = parse_number<std::uint64_t>("seed", required(cell, "seed"));
    if (cell("warmup")) row.n_warmup = count_of(cell, "warmup");
    row.roofline_peak_gflops = optional_real(cell, "roofline_peak_gflops");
    row.roofline_peak_gbps = optional_real(cell, "roofline_peak_gb_per_s");
    row.roofline_source = cell("roofline_source").value_or(row.roofline_pct ? "unknown" : "none");
    return saved;
}

// A row's samples give its statistics exactly as they were computed, without the rounding of a
// trip through microseconds.
void take_samples(const ReportCellRow& cells, ResultRow& row) {
    for (const double sample : cells.samples_ns) row.samples_ns.push_back(std::llround(sample));
    if (!row.samples_ns.empty()) row.stats = summarize(row.samples_ns);
}

std::vector<SavedRow> read_rows(const ReportCells& report) {
    if (report.format == OutputFormat::csv &&
        (std::find(report.columns.begin(), report.columns.end(), "path") == report.columns.end() ||
         std::find(report.columns.begin(), report.columns.end(), "git_commit") == report.columns.end())) {
        throw std::runtime_error("the header is not kvbench's (no path or git_commit column)");
    }
    std::vector<SavedRow> rows;
    for (const ReportCellRow& cells : report.rows) {
        try {
            const CellReader cell = [&](const std::string& name) { return cells.cell(name); };
            SavedRow saved = read_row(cell);
            if (report.format != OutputFormat::csv) {
                if (!cells.has_samples) throw std::runtime_error("column samples_ns is missing");
                take_samples(cells, saved.row);
            }
            // Every CSV and JSON Lines row names its build; a JSON report, once in its environment.
            saved.tool_version = report.provenance(cells, "tool_version").value_or("");
            saved.git_commit = report.provenance(cells, "git_commit").value_or("");
            if (report.format != OutputFormat::csv && (saved.tool_version.empty() || saved.git_commit.empty())) {
                throw std::runtime_error("no tool_version or git_commit");
            }
            // The run that measured the row: a kept row says when and how it was measured.
            for (const EnvironmentColumn& column : environment_columns()) {
                if (std::string_view(column.name) == "schema_version") continue;
                saved.row.provenance[column.name] = report.provenance(cells, column.name).value_or("");
            }
            rows.push_back(std::move(saved));
        } catch (const std::exception& error) {
            throw std::runtime_error(fmt::format("row {}: {}", cells.number, error.what()));
        }
    }
    return rows;
}

std::string read_all(std::istream& in) {
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace

std::vector<SavedRow> read_csv_report(std::istream& in) {
    return read_rows(read_report_cells(read_all(in), OutputFormat::csv));
}

std::vector<SavedRow> read_json_report(std::istream& in) {
    return read_rows(read_report_cells(read_all(in), OutputFormat::json));
}

std::vector<SavedRow> read_jsonl_report(std::istream& in) {
    return read_rows(read_report_cells(read_all(in), OutputFormat::jsonl));
}

std::vector<SavedRow> read_report_file(const std::filesystem::path& path, OutputFormat format) {
    if (format != OutputFormat::csv && format != OutputFormat::json && format != OutputFormat::jsonl) {
        throw std::invalid_argument("read_report_file: only csv, json and jsonl reports can be read back");
    }
    std::string text;
    try {
        text = read_input_file(path);
    } catch (const InputFileError& error) {
        throw std::runtime_error(fmt::format("cannot read {}: it {}", path.string(), error.what()));
    }
    try {
        return read_rows(read_report_cells(text, format));
    } catch (const std::exception& error) {
        throw std::runtime_error(fmt::format("{} is not a kvbench report: {}", path.string(), error.what()));
    }
}

}  // namespace kvbench
