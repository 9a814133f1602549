// The one check of a report's rows that compare, merge, --resume and --calibrate share: each cell as kvbench writes it.
#include "kvbench/report/schema.hpp"

#include "kvbench/engine/kv_dtype.hpp"
#include "kvbench/engine/weight_dtype.hpp"
#include "kvbench/measure/roofline_bounds.hpp"
#include "kvbench/report/database_schema.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>

namespace kvbench {

namespace {

// --threads takes at most 1,024 (sweep_options.cpp), and --seq, --batch and the widths at most
// 2^30 (value_list.hpp, config.cpp): a row of more was written by no sweep, and its N could not
// be counted in 64 bits.
constexpr std::uint64_t max_threads = 1024;
constexpr std::uint64_t max_axis = std::uint64_t{1} << 30;

[[noreturn]] void bad_cell(const std::string& column, const std::string& text, const std::string& rule) {
    throw std::runtime_error(fmt::format("column {}: '{}' is not {}", column, printable(text), rule));
}

std::uint64_t whole_number(const std::string& column, const std::string& text) {
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size()) bad_cell(column, text, "a whole number below 2^64");
    return value;
}

// A cell check_cells has already read as a finite number.
double number_of(const std::string& text) {
    double value = 0;
    std::from_chars(text.data(), text.data() + text.size(), value);
    return value;
}

double finite_number(const std::string& column, const std::string& text, const char* rule) {
    double value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) bad_cell(column, text, rule);
    return value;
}

// The byte where `text` stops being UTF-8 text, or npos: a cell kvbench wrote is UTF-8 (a JSON
// writer refuses anything else) without a NUL, so a Latin-1 byte or a NUL is a file edited by
// another tool.
std::size_t first_non_text(const std::string& text) {
    std::size_t i = 0;
    while (i < text.size()) {
        const auto byte = static_cast<unsigned char>(text[i]);
        const std::size_t length = byte < 0x80 ? 1 : (byte >> 5) == 0x6 ? 2 : (byte >> 4) == 0xE ? 3 : (byte >> 3) == 0x1E ? 4 : 0;
        if (byte == 0 || length == 0 || i + length > text.size()) return i;
        for (std::size_t k = 1; k < length; ++k) {
            if ((static_cast<unsigned char>(text[i + k]) >> 6) != 0x2) return i;
        }
        i += length;
    }
    return std::string::npos;
}

// The cells of one row by their type and rules; the row's counts, checked once each, for the
// rules between columns.
void check_cells(const ReportCellRow& row, bool has_median_column) {
    for (const auto& [column, text] : row.cells) {
        if (const std::size_t bad = first_non_text(column); bad != std::string::npos) {
            throw std::runtime_error(fmt::format("the column name '{}' holds byte 0x{:02X}, which is not UTF-8 text",
                                                 printable(column), static_cast<unsigned char>(column[bad])));
        }
        const std::optional<ColumnType> type = point_column_type(column);
        switch (type.value_or(ColumnType::text)) {  // provenance, or a column of another tool: text
        case ColumnType::integer: whole_number(column, text); break;
        case ColumnType::real:
            if (finite_number(column, text, "a finite number of at least 0") < 0) {
                bad_cell(column, text, "a finite number of at least 0");
            }
            break;
        case ColumnType::latency_us:
            if (!(finite_number(column, text, "a time (a positive number of microseconds)") > 0)) {
                bad_cell(column, text, "a time (a positive number of microseconds)");
            }
            break;
        case ColumnType::boolean:
            if (text != "true" && text != "false") bad_cell(column, text, "true or false");
            break;
        case ColumnType::text: break;
        }
        if (const std::size_t bad = first_non_text(text); bad != std::string::npos) {
            const auto byte = static_cast<unsigned char>(text[bad]);
            throw std::runtime_error(fmt::format("column {}: byte 0x{:02X} at offset {} is not UTF-8 text{}", column,
                                                 byte, bad, byte == 0 ? " (a NUL)" : ""));
        }
    }
    const auto one_of = [&](const char* column, std::initializer_list<const char*> words, const char* rule) {
        const std::optional<std::string> text = row.cell(column);
        if (text && std::none_of(words.begin(), words.end(), [&](const char* word) { return *text == word; })) {
            bad_cell(column, *text, rule);
        }
    };
    one_of("path", {"cached", "uncached"}, "cached or uncached");
    one_of("cache_state", {"warm", "cold"}, "warm or cold");
    one_of("block", {"attn", "full"}, "attn or full");
    one_of("phase", {"prefill", "decode"}, "prefill or decode");
    // "K/V" where keys and values differ.
    constexpr const char* kv_types = "a KV type (f32, f16, bf16, int8, e4m3, e5m2, q8_0 or q4_0; K/V for two)";
    if (const std::optional<std::string> kv = row.cell("kv_dtype")) {
        const std::size_t slash = kv->find('/');
        if (!find_kv_dtype(kv->substr(0, slash)) ||
            (slash != std::string::npos && !find_kv_dtype(kv->substr(slash + 1)))) {
            bad_cell("kv_dtype", *kv, kv_types);
        }
    }
    for (const char* column : {"k_dtype", "v_dtype"}) {
        if (const std::optional<std::string> type = row.cell(column); type && !find_kv_dtype(*type)) {
            bad_cell(column, *type, kv_types);
        }
    }
    if (const std::optional<std::string> type = row.cell("weight_dtype"); type && !find_weight_dtype(*type)) {
        bad_cell("weight_dtype", *type, "f32, bf16, f16 or int8");
    }

    const auto count = [&](const char* column) -> std::optional<std::uint64_t> {
        const std::optional<std::string> text = row.cell(column);
        if (!text) return std::nullopt;
        return whole_number(column, *text);
    };
    for (const char* column : {"batch", "seq", "dim", "heads", "kv_heads", "head_dim", "layers", "threads", "reps",
                               "bytes", "query_tokens"}) {
        if (const std::optional<std::uint64_t> value = count(column); value && *value == 0) {
            bad_cell(column, "0", "a whole number of at least 1");
        }
    }
    for (const char* column : {"batch", "seq", "dim", "heads", "kv_heads", "head_dim", "layers", "query_tokens"}) {
        if (const std::optional<std::uint64_t> value = count(column); value && *value > max_axis) {
            bad_cell(column, *row.cell(column), "a whole number of at most 2^30 (1073741824)");
        }
    }
    if (const std::optional<std::uint64_t> threads = count("threads"); threads && *threads > max_threads) {
        bad_cell("threads", *row.cell("threads"), fmt::format("a thread count of at most {}", max_threads));
    }
    const std::optional<std::uint64_t> bytes = count("bytes"), kv_bytes = count("kv_bytes");
    if (bytes && kv_bytes && *kv_bytes > *bytes) {
        throw std::runtime_error(fmt::format("column kv_bytes: {} is more than the step's bytes, {}", *kv_bytes, *bytes));
    }
    const std::optional<std::uint64_t> seq = count("seq"), prefix = count("shared_prefix");
    if (seq && prefix && *prefix >= *seq && *prefix > 0) {
        throw std::runtime_error(fmt::format("column shared_prefix: {} is not shorter than seq, {}", *prefix, *seq));
    }
    const std::optional<std::string> median_text = row.cell("latency_us_median");
    // A file without the column is refused by its reader, as one without any contract column.
    if (!median_text && has_median_column) throw std::runtime_error("column latency_us_median is missing or empty");
    // A peak no machine has (1e-300 or 1e308 GB/s) puts roofline_pct at 0 or past any bound, and
    // --calibrate would fit on it: the bounds of a roofline file's peaks (roofline_bounds.hpp).
    const auto peak_within = [&](const char* column, double low, double high, const char* unit) {
        const std::optional<std::string> peak = row.cell(column);
        if (peak && !(number_of(*peak) >= low && number_of(*peak) <= high)) {
            bad_cell(column, *peak, fmt::format("a peak from {:g} to {:g} {}", low, high, unit));
        }
    };
    peak_within("roofline_peak_gflops", min_peak_gflops, max_peak_gflops, "GFLOP/s");
    peak_within("roofline_peak_gb_per_s", min_peak_gbps, max_peak_gbps, "GB/s");
}

// A row compares by its median and its samples: a median that its own range or samples
// contradict would pass a change of any size as "same".
void check_median(const ReportCellRow& row) {
    if (!row.cell("latency_us_median")) return;
    const std::string median_text = *row.cell("latency_us_median");
    const double median = number_of(median_text);
    const double slack = 1e-3 + 1e-6 * median;  // the CSV's three decimals
    const std::optional<std::string> low = row.cell("latency_us_min"), high = row.cell("latency_us_max");
    if ((low && median < number_of(*low) - slack) || (high && median > number_of(*high) + slack)) {
        throw std::runtime_error(fmt::format("column latency_us_median: {} lies outside its own min and max ({} to {})",
                                             median_text, low.value_or("?"), high.value_or("?")));
    }
    for (const double sample : row.samples_ns) {
        if (!std::isfinite(sample) || !(sample > 0)) {
            throw std::runtime_error(fmt::format("column samples_ns: a sample of {} ns is not a positive time", sample));
        }
    }
    if (row.samples_ns.empty()) return;
    std::vector<double> sorted = row.samples_ns;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = sorted.size();
    const double samples_median_us = (n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2) / 1e3;
    if (std::fabs(samples_median_us - median) > slack) {
        throw std::runtime_error(fmt::format("column latency_us_median: {} is not the median of its samples_ns ({:.3f} us)",
                                             median_text, samples_median_us));
    }
}

}  // namespace

const std::vector<std::string>& report_key_columns() {
    // step, phase, prompt and new_tokens come from generate (docs/generate.md).
    static const std::vector<std::string> columns = {
        "path",     "batch",   "seq",          "dim",          "heads",        "kv_heads",      "head_dim",
        "layers",   "threads", "kv_dtype",     "block",        "ffn_dim",      "weight_dtype",  "variant",
        "seq_lens", "query_tokens", "shared_prefix", "kv_block", "cache_state", "step",         "phase",
        "prompt",   "new_tokens"};
    return columns;
}

std::optional<std::string> report_key_default(const std::string& column) {
    static const std::map<std::string, std::string> defaults = {
        {"block", "attn"},   {"ffn_dim", "0"},      {"weight_dtype", "f32"},  {"variant", ""},
        {"seq_lens", ""},    {"query_tokens", "1"}, {"shared_prefix", "0"}, {"kv_block", "0"}};
    const auto found = defaults.find(column);
    if (found == defaults.end()) return std::nullopt;
    return found->second;
}

void check_report_rows(const ReportCells& report) {
    const bool has_median_column = std::find(report.columns.begin(), report.columns.end(), "latency_us_median") !=
                                   report.columns.end();
    // Without every key column of the contract, rows that differ only in a missing one would read
    // as repeats: the reader refuses such a file for the missing column instead.
    const bool keyed = std::all_of(contract_columns().begin(), contract_columns().end(), [&](const std::string& column) {
        return std::find(report_key_columns().begin(), report_key_columns().end(), column) == report_key_columns().end() ||
               std::find(report.columns.begin(), report.columns.end(), column) != report.columns.end();
    });
    std::map<std::vector<std::string>, std::size_t> seen;
    for (const ReportCellRow& row : report.rows) {
        try {
            check_cells(row, has_median_column);
            check_median(row);
        } catch (const std::runtime_error& error) {
            throw std::runtime_error(fmt::format("row {}: {}", row.number, error.what()));
        }
        if (!keyed) continue;
        std::vector<std::string> key;
        for (const std::string& column : report_key_columns()) {
            key.push_back(row.cell(column).value_or(report_key_default(column).value_or("")));
        }
        const auto [first, inserted] = seen.try_emplace(key, row.number);
        if (!inserted) {
            std::vector<std::string> named;
            for (std::size_t c = 0; c < key.size(); ++c) {
                if (row.cell(report_key_columns()[c])) named.push_back(fmt::format("{}={}", report_key_columns()[c], key[c]));
            }
            throw std::runtime_error(fmt::format("row {} repeats row {} ({}): a report holds each point once",
                                                 row.number, first->second, printable(fmt::format("{}", fmt::join(named, " ")))));
        }
    }
}

std::string printable(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte < 0x20 || byte == 0x7F) {
            out += fmt::format("\\x{:02x}", byte);
        } else {
            out += c;
        }
    }
    return out;
}

}  // namespace kvbench
