// Reading a measured report's roofline fractions for the planner's efficiencies.
#include "cli/calibration_file.hpp"

#include "kvbench/engine/config.hpp"
#include "kvbench/report/schema.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace kvbench {

namespace {

std::string read_report_text(const std::string& path) {
    std::error_code ignored;
    if (std::filesystem::is_directory(path, ignored)) {
        throw ConfigError(fmt::format("--calibrate {}: is a directory (name a report of kvbench sweep or generate)", path));
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) throw ConfigError(fmt::format("--calibrate {}: cannot open the file", path));
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) throw ConfigError(fmt::format("--calibrate {}: cannot read the file", path));
    return text.str();
}

OutputFormat format_of(const std::string& text) {
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos || text[first] != '{') return OutputFormat::csv;
    return starts_as_json_lines(text.substr(first)) ? OutputFormat::jsonl : OutputFormat::json;
}

}  // namespace

Calibration read_calibration(const std::string& path) {
    const std::string text = read_report_text(path);
    ReportCells report;
    try {
        report = read_report_cells(text, format_of(text));
    } catch (const std::runtime_error& error) {
        throw ConfigError(fmt::format("--calibrate {}: not a report of kvbench sweep or generate: {}", path,
                                      error.what()));
    }
    std::vector<CalibrationPoint> points;
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
        if (*path_cell != "cached" && *path_cell != "uncached") continue;
        // A warm step whose data fits in the last-level cache ran at the cache's bandwidth, not
        // memory's: it says nothing about a step that streams (docs/planning.md, "Efficiency").
        if (row.cell("cache_state") == "warm" && row.cell("fits_in_llc") == "true") {
            ++n_in_cache;
            continue;
        }
        points.push_back({*path_cell == "cached" ? DecodePath::cached : DecodePath::uncached, pct / 100});
    }
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
