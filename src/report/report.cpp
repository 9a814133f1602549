// Builds Rows from measurements, pairs cached with uncached rows, and sends a report to a stream or file.
#include "kvbench/report/report.hpp"

#include "kvbench/report/atomic_file.hpp"

#include <stdexcept>
#include <utility>

namespace kvbench {

namespace {

// Rows whose medians may be compared: only the path differs.
bool same_configuration(const Row& a, const Row& b) {
    return a.config == b.config && a.n_threads == b.n_threads && a.kv_dtype == b.kv_dtype &&
           a.cache_state == b.cache_state;
}

}  // namespace

Row make_row(DecodePath path, const ModelConfig& config, std::size_t n_threads,
             std::string cache_state, std::vector<std::int64_t> samples_ns) {
    Row row;
    row.path = path;
    row.config = config;
    row.n_threads = n_threads;
    row.cache_state = std::move(cache_state);
    row.cost = step_cost(config, path);
    row.stats = summarize(samples_ns);
    row.samples_ns = std::move(samples_ns);
    // flops / (median_ns · 1e-9 s) / 1e9 = flops / median_ns, and likewise for bytes.
    if (row.stats.median_ns > 0) {
        row.gflops = static_cast<double>(row.cost.flops) / row.stats.median_ns;
        row.gbps = static_cast<double>(row.cost.bytes) / row.stats.median_ns;
    }
    return row;
}

void assign_speedups(std::vector<Row>& rows) {
    for (Row& row : rows) {
        row.speedup.reset();
        if (row.stats.median_ns <= 0) continue;
        for (const Row& other : rows) {
            if (other.path == DecodePath::uncached && same_configuration(row, other)) {
                row.speedup = other.stats.median_ns / row.stats.median_ns;
                break;
            }
        }
    }
}

void write_report(std::ostream& out, OutputFormat format, const std::vector<Row>& rows,
                  const Environment& env) {
    switch (format) {
    case OutputFormat::table: write_table(out, rows, env); return;
    case OutputFormat::csv: write_csv(out, rows, env); return;
    case OutputFormat::json: write_json(out, rows, env); return;
    case OutputFormat::md: write_markdown(out, rows, env); return;
    }
    throw std::invalid_argument("write_report: unknown output format");
}

void write_report_file(const std::filesystem::path& path, OutputFormat format,
                       const std::vector<Row>& rows, const Environment& env) {
    write_file_atomically(path, [&](std::ostream& out) { write_report(out, format, rows, env); });
}

}  // namespace kvbench
