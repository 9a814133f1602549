// Builds the rows of a measured point, and sends a report to a stream or a file.
#include "kvbench/report/report.hpp"

#include "kvbench/files/atomic_file.hpp"
#include "kvbench/report/schema.hpp"

#include <stdexcept>
#include <string_view>
#include <utility>

namespace kvbench {

ModelConfig uncached_row_config(const ModelConfig& config) {
    ModelConfig row = config;
    row.set_kv_dtypes(KvDtype::f32, KvDtype::f32);
    row.kv_block = 0;
    return row;
}

ResultRow make_result_row(DecodePath path, const GridPoint& point, const PathMeasurement& measured,
                          const StepCost& cost, const RunOptions& options, const Roofline* roofline,
                          const Environment& env, std::optional<double> verify_rel_error) {
    ResultRow row;
    row.path = path;
    row.config = path == DecodePath::uncached ? uncached_row_config(point.config) : point.config;
    row.kv_dtype = kv_dtype_name(row.config.key_dtype(), row.config.value_dtype());
    row.n_threads = point.n_threads;
    row.cache_state = options.cold_cache ? "cold" : "warm";
    row.cost = cost;
    row.stats = summarize(measured.samples_ns);
    row.samples_ns = measured.samples_ns;
    // flops / (median_ns · 1e-9 s) / 1e9 = flops / median_ns, and likewise for bytes.
    if (row.stats.median_ns > 0) {
        row.gflops = static_cast<double>(row.cost.flops) / row.stats.median_ns;
        row.gbps = static_cast<double>(row.cost.bytes) / row.stats.median_ns;
        if (roofline != nullptr) {
            row.roofline_pct = kvbench::roofline_pct(roofline_time_s(row.cost.flops, row.cost.bytes, *roofline),
                                                     row.stats.median_ns * 1e-9);
        }
    }
    if (roofline != nullptr) {
        row.roofline_peak_gflops = roofline->peak_gflops;
        row.roofline_peak_gbps = roofline->peak_gbps;
        row.roofline_source = roofline->source.empty() ? "unknown" : roofline->source;
    }
    row.verify_rel_error = verify_rel_error;
    row.fits_in_llc = env.llc_bytes > 0 && row.cost.bytes <= env.llc_bytes;
    row.flops_executed = measured.flops.executed;
    row.experts_read = measured.experts_read;
    row.noisy = is_noisy(row.stats);
    row.slow = is_slow(row.cost.flops, row.cost.bytes, row.stats.median_ns, roofline);
    row.reps_policy = describe_reps_policy(options);
    row.seed = options.seed;
    row.n_warmup = options.n_warmup;
    return row;
}

std::vector<ResultRow> make_result_rows(const GridPoint& point, const PointMeasurement& measured,
                                        const RunOptions& options, const Roofline* roofline,
                                        const Environment& env) {
    std::vector<ResultRow> rows;
    if (measured.cached) {
        rows.push_back(make_result_row(DecodePath::cached, point, *measured.cached,
                                       step_cost(point.config, DecodePath::cached, measured.cached->experts_read),
                                       options, roofline, env, measured.verify_rel_error));
        rows.back().kv_rel_error = measured.kv_rel_error;
        rows.back().weight_rel_error = measured.weight_rel_error;
    }
    if (measured.uncached) {
        rows.push_back(make_result_row(DecodePath::uncached, point, *measured.uncached,
                                       step_cost(uncached_counting_config(point.config), DecodePath::uncached,
                                                 measured.uncached->experts_read),
                                       options, roofline, env,
                                       measured.verify_rel_error));
    }
    if (measured.uncached && rows.back().stats.median_ns > 0) {
        const double uncached_median_ns = rows.back().stats.median_ns;
        for (ResultRow& row : rows) {
            if (row.stats.median_ns > 0) row.speedup = uncached_median_ns / row.stats.median_ns;
        }
    }
    return rows;
}

bool above_roofline(const ResultRow& row) {
    if (!row.roofline_pct || *row.roofline_pct <= 100) return false;
    return !(row.cache_state == "warm" && row.fits_in_llc);
}

std::string row_flags(const ResultRow& row) {
    std::string flags;
    const auto add = [&flags](std::string_view word) {
        if (!flags.empty()) flags += ' ';
        flags += word;
    };
    if (row.noisy) add(flag_noisy);
    if (row.slow) add(flag_slow);
    if (above_roofline(row)) add(flag_above_roofline);
    return flags;
}

void fill_speedups_across_kv_dtypes(std::vector<ResultRow>& rows) {
    for (ResultRow& row : rows) {
        if (row.path != DecodePath::cached || row.speedup || row.stats.median_ns <= 0) continue;
        for (const ResultRow& other : rows) {
            if (other.path != DecodePath::uncached || other.stats.median_ns <= 0 || other.n_threads != row.n_threads ||
                other.cache_state != row.cache_state) {
                continue;
            }
            ModelConfig same = other.config;
            same.kv_dtype = row.config.kv_dtype;
            same.kv_block = row.config.kv_block;
            if (same == row.config) {
                row.speedup = other.stats.median_ns / row.stats.median_ns;
                break;
            }
        }
    }
}

void write_report(std::ostream& out, OutputFormat format, const std::vector<ResultRow>& rows,
                  const Environment& env) {
    switch (format) {
    case OutputFormat::table: write_table(out, rows, env); return;
    case OutputFormat::csv: write_csv(out, rows, env); return;
    case OutputFormat::json: write_json(out, rows, env); return;
    case OutputFormat::jsonl: write_jsonl(out, rows, env); return;
    case OutputFormat::md: write_markdown(out, rows, env); return;
    case OutputFormat::sql:
    case OutputFormat::sqlite: break;  // a run's record: the export manager writes them (export_manager.hpp)
    }
    throw std::invalid_argument("write_report: sql and sqlite are written by the export manager");
}

void write_report_file(const std::filesystem::path& path, OutputFormat format,
                       const std::vector<ResultRow>& rows, const Environment& env) {
    write_file_atomically(path, [&](std::ostream& out) { write_report(out, format, rows, env); });
}

}  // namespace kvbench
