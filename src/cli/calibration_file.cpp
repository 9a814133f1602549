// Reading a measured report's roofline fractions for the planner's efficiencies.
#include "cli/calibration_file.hpp"

#include "kvbench/engine/config.hpp"
#include "kvbench/files/input_file.hpp"
#include "kvbench/report/schema.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace kvbench {

namespace {

std::string read_report_text(const std::string& path) {
    try {
        return read_input_file(path);
    } catch (const InputFileError& error) {
        throw ConfigError(fmt::format("--calibrate {}: {} (name a report of kvbench sweep or generate)", path, error.what()));
    }
}

// A cell read as a number, or nothing when it is absent, empty or not one.
std::optional<double> number_cell(const ReportCellRow& row, const char* column) {
    const std::optional<std::string> cell = row.cell(column);
    if (!cell || cell->empty()) return std::nullopt;
    double value = 0;
    const auto [end, error] = std::from_chars(cell->data(), cell->data() + cell->size(), value);
    if (error != std::errc() || end != cell->data() + cell->size() || !std::isfinite(value)) return std::nullopt;
    return value;
}

// A cached row's two streams at its roofline's peak bandwidth, and its median, for the
// per-batch fit; left at 0 (unknown) when the report lacks a column.
void add_stream_times(const ReportCellRow& row, CalibrationPoint& point) {
    const std::optional<double> batch = number_cell(row, "batch");
    const std::optional<double> bytes = number_cell(row, "bytes");
    const std::optional<double> kv_bytes = number_cell(row, "kv_bytes");
    const std::optional<double> median_us = number_cell(row, "latency_us_median");
    const std::optional<double> peak_gb_per_s = number_cell(row, "roofline_peak_gb_per_s");
    if (!batch || !bytes || !kv_bytes || !median_us || !peak_gb_per_s || !(*batch >= 1) || !(*peak_gb_per_s > 0) ||
        !(*kv_bytes <= *bytes)) {
        return;
    }
    point.batch = static_cast<std::uint64_t>(*batch);
    point.weights_at_peak_s = (*bytes - *kv_bytes) / (*peak_gb_per_s * 1e9);
    point.kv_at_peak_s = *kv_bytes / (*peak_gb_per_s * 1e9);
    point.measured_s = *median_us * 1e-6;
}

}  // namespace

Calibration read_calibration(const std::string& path, std::string_view kv_dtype) {
    const std::string text = read_report_text(path);
    ReportCells report;
    try {
        report = read_report_cells(text, report_text_format(text));
    } catch (const std::runtime_error& error) {
        throw ConfigError(fmt::format("--calibrate {}: not a report of kvbench sweep or generate: {}", path,
                                      error.what()));
    }
    // As compare and merge ask: a row without its N or its bytes is no point to fit.
    for (const std::string& column : contract_columns()) {
        if (!report.rows.empty() &&
            std::find(report.columns.begin(), report.columns.end(), column) == report.columns.end()) {
            throw ConfigError(fmt::format("--calibrate {}: not a report of kvbench sweep or generate: no column {} "
                                          "(docs/csv.md#contract-columns)",
                                          path, column));
        }
    }
    const bool has_peaks = std::find(report.columns.begin(), report.columns.end(), "roofline_peak_gb_per_s") !=
                           report.columns.end();
    std::vector<CalibrationPoint> points;
    std::vector<CalibrationPoint> other_kv_dtype;  // cached rows of another cache type: used only without any of kv_dtype
    std::size_t n_in_cache = 0;
    for (const ReportCellRow& row : report.rows) {
        const std::optional<std::string> path_cell = row.cell("path");
        const std::optional<std::string> roofline = row.cell("roofline_pct");
        if (!path_cell || !roofline) continue;
        double pct = 0;
        const auto [end, error] = std::from_chars(roofline->data(), roofline->data() + roofline->size(), pct);
        if (error != std::errc() || end != roofline->data() + roofline->size() || !std::isfinite(pct) || !(pct > 0)) {
            throw ConfigError(fmt::format("--calibrate {}: row {}: roofline_pct \"{}\" is not a positive number", path,
                                          row.number, *roofline));
        }
        // roofline_pct is the median over the peak: a row of a report that records peaks, without its own, was edited.
        if (has_peaks && !row.cell("roofline_peak_gb_per_s")) {
            throw ConfigError(fmt::format("--calibrate {}: row {}: roofline_pct {} without its roofline_peak_gb_per_s",
                                          path, row.number, *roofline));
        }
        // A warm step whose data fits in the last-level cache ran at the cache's bandwidth, not
        // memory's: it says nothing about a step that streams (docs/planning.md, "Efficiency").
        if (row.cell("cache_state") == "warm" && row.cell("fits_in_llc") == "true") {
            ++n_in_cache;
            continue;
        }
        CalibrationPoint point{*path_cell == "cached" ? DecodePath::cached : DecodePath::uncached, pct / 100};
        if (point.path == DecodePath::uncached) {
            points.push_back(point);
            continue;
        }
        add_stream_times(row, point);
        // Attention reads each cache type at its own speed (int8 dequantises, f16 widens).
        (row.cell("kv_dtype").value_or(std::string(kv_dtype)) == kv_dtype ? points : other_kv_dtype).push_back(point);
    }
    const bool has_cached = std::any_of(points.begin(), points.end(),
                                        [](const CalibrationPoint& point) { return point.path == DecodePath::cached; });
    if (!has_cached) points.insert(points.end(), other_kv_dtype.begin(), other_kv_dtype.end());
    if (points.empty() && n_in_cache > 0) {
        throw ConfigError(fmt::format("--calibrate {}: all {} rows with roofline_pct ran warm from the last-level "
                                      "cache, not from memory; calibrate on a cold sweep (kvbench sweep -o FILE, "
                                      "cold by default) or on a model larger than the cache",
                                      path, n_in_cache));
    }
    if (points.empty()) {
        throw ConfigError(fmt::format("--calibrate {}: no row carries roofline_pct (measure the roofline first: "
                                      "kvbench roofline, then kvbench sweep -o FILE)",
                                      path));
    }
    return calibrate(points);
}

}  // namespace kvbench
