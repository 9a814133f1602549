// The human tables on made-up rows: golden text at 80 columns for a default-sweep-like grid, a grid
// where every axis varies, and Markdown. KVBENCH_UPDATE_GOLDEN=1 rewrites tests/golden/ from the
// current output (then read the diff before committing it).
#include "kvbench/report/headline.hpp"
#include "kvbench/report/kv_format_table.hpp"
#include "kvbench/report/paged_table.hpp"
#include "kvbench/report/query_tokens_table.hpp"
#include "kvbench/report/report.hpp"
#include "kvbench/report/summary_tables.hpp"
#include "kvbench/report/units.hpp"

#include <algorithm>
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

using namespace kvbench;

namespace {

ModelConfig model(std::size_t n_batch, std::size_t seq_len, std::size_t model_dim, std::size_t n_heads,
                  std::size_t n_kv_heads, std::size_t n_layers) {
    ModelConfig c;
    c.n_batch = n_batch;
    c.seq_len = seq_len;
    c.model_dim = model_dim;
    c.n_heads = n_heads;
    c.n_kv_heads = n_kv_heads;
    c.n_layers = n_layers;
    return c;
}

// A row as make_result_rows would build it, from a made-up median and CV: min 10 % below the
// median, p90 10 % above, MdAPE half the CV, roofline % against 200 GFLOP/s and 30 GB/s.
ResultRow made_up_row(const ModelConfig& c, DecodePath path, std::size_t n_threads, const char* cache_state,
                      double median_ns, double cv, bool has_roofline) {
    ResultRow row;
    row.path = path;
    row.config = c;
    row.n_threads = n_threads;
    row.cache_state = cache_state;
    row.cost = step_cost(c, path);
    row.stats.n_samples = 20;
    row.stats.median_ns = median_ns;
    row.stats.min_ns = 0.9 * median_ns;
    row.stats.p90_ns = 1.1 * median_ns;
    row.stats.cv = cv;
    row.stats.mdape = cv / 2;
    row.stats.median_uncertainty = estimated_median_uncertainty(row.stats.mdape, row.stats.n_samples);
    row.gflops = static_cast<double>(row.cost.flops) / median_ns;
    row.gbps = static_cast<double>(row.cost.bytes) / median_ns;
    if (has_roofline) {
        const double bound_s = std::max(static_cast<double>(row.cost.flops) / 200e9,
                                        static_cast<double>(row.cost.bytes) / 30e9);
        row.roofline_pct = 100 * bound_s / (median_ns * 1e-9);
    }
    row.fits_in_llc = row.cost.bytes < (std::uint64_t{32} << 20);
    row.noisy = is_noisy(row.stats);
    return row;
}

// Both paths of a point, cached first, with the speedup make_result_rows gives them.
void add_point(std::vector<ResultRow>& rows, const ModelConfig& c, std::size_t n_threads, const char* cache_state,
               double cached_ns, double uncached_ns, double cv, bool has_roofline) {
    ResultRow cached = made_up_row(c, DecodePath::cached, n_threads, cache_state, cached_ns, cv, has_roofline);
    ResultRow uncached = made_up_row(c, DecodePath::uncached, n_threads, cache_state, uncached_ns, cv / 3,
                                     has_roofline);
    cached.speedup = uncached_ns / cached_ns;
    uncached.speedup = 1.0;
    rows.push_back(cached);
    rows.push_back(uncached);
}

// kvbench sweep's default grid: D=1024 H=16 B=1 L=1, N = 128..4096, G = 16, 4, 1, both paths, T=2, cold.
std::vector<ResultRow> default_like_rows() {
    std::vector<ResultRow> rows;
    std::size_t i = 0;
    for (const std::size_t n_kv_heads : {std::size_t{16}, std::size_t{4}, std::size_t{1}}) {
        for (std::size_t n = 128; n <= 4096; n *= 2, ++i) {
            const double seq = static_cast<double>(n);
            add_point(rows, model(1, n, 1024, 16, n_kv_heads, 1), 2, "cold",
                      5e5 + 40.0 * seq * static_cast<double>(n_kv_heads), 5e4 * seq + 20.0 * seq * seq,
                      i % 3 == 0 ? 0.12 : 0.02, true);
        }
    }
    return rows;
}

// Every axis varies, with the widest values a sweep accepts in practice: B, N, D, H, G, L, T and
// the cache state, and one thread count without a roofline.
std::vector<ResultRow> every_axis_rows() {
    std::vector<ResultRow> rows;
    add_point(rows, model(1, 128, 1024, 16, 16, 1), 1, "cold", 3.1e5, 8.2e6, 0.02, true);
    add_point(rows, model(64, 131072, 8192, 64, 8, 80), 64, "warm", 2.4e10, 9.9e13, 0.09, false);
    add_point(rows, model(8, 4096, 4096, 32, 1, 32), 2, "warm", 8.4e7, 5.1e10, 0.01, true);
    add_point(rows, model(16, 32768, 512, 8, 8, 2), 64, "cold", 6.5e5, 2.2e9, 0.30, false);
    return rows;
}

Environment golden_environment() {
    Environment env;
    env.tool_version = "0.1.0";
    env.git_commit = "abc1234";
    env.build_type = "Release";
    env.compiler = "GNU 12.2.0";
    env.kernel_isa = "avx512";
    env.cpu_model = "Intel(R) Xeon(R) Processor";
    env.n_cores = 2;
    env.llc_bytes = std::size_t{105} << 20;
    // The real one: longer than a terminal line by itself.
    env.blas_library = "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY USE_OPENMP SkylakeX MAX_THREADS=64";
    env.blas_threading = "openmp";
    return env;
}

std::string render_table(const std::vector<ResultRow>& rows, const TableOptions& options = {}) {
    std::ostringstream out;
    write_table(out, rows, golden_environment(), options);
    return out.str();
}

std::string render_markdown(const std::vector<ResultRow>& rows) {
    std::ostringstream out;
    write_markdown(out, rows, golden_environment(), TableOptions{});
    return out.str();
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

std::size_t widest_line(const std::string& text) {
    std::size_t widest = 0;
    for (const std::string& line : lines_of(text)) widest = std::max(widest, display_width(line));
    return widest;
}

std::string golden_path(const std::string& name) { return std::string(KVBENCH_GOLDEN_DIR) + "/" + name; }

std::string read_golden(const std::string& name) {
    std::ifstream in(golden_path(name), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

void check_golden(const std::string& name, const std::string& actual) {
    if (std::getenv("KVBENCH_UPDATE_GOLDEN") != nullptr) {
        std::ofstream(golden_path(name), std::ios::binary) << actual;
    }
    const std::string expected = read_golden(name);
    REQUIRE_MESSAGE(!expected.empty(), "missing " << golden_path(name));
    // Line by line, so that a failure names the first line that differs.
    const std::vector<std::string> want = lines_of(expected), got = lines_of(actual);
    for (std::size_t i = 0; i < std::min(want.size(), got.size()); ++i) {
        INFO(name << " line " << i + 1);
        REQUIRE(got[i] == want[i]);
    }
    CHECK(got.size() == want.size());
    CHECK(actual == expected);
}

std::string block_of(const std::string& text, const std::string& title) {
    const std::size_t start = text.find(title + "\n");
    REQUIRE(start != std::string::npos);
    return text.substr(start, text.find("\n\n", start) - start);
}

}  // namespace

TEST_CASE("the default-sweep-like tables keep within 80 columns and match the golden text") {
    const std::string text = render_table(default_like_rows());
    CHECK(widest_line(text) <= terminal_columns);
    check_golden("default_sweep.txt", text);
}

TEST_CASE("with every axis varying the tables split rather than wrap, and match the golden text") {
    const std::string text = render_table(every_axis_rows());
    CHECK(widest_line(text) <= terminal_columns);
    CHECK(text.find("(continued)") != std::string::npos);
    check_golden("every_axis.txt", text);
}

TEST_CASE("markdown tables match the golden text and escape what github would render") {
    const std::string text = render_markdown(default_like_rows());
    check_golden("default_sweep.md", text);
    // Footnotes start with their marks: escaped, they stay text instead of becoming bullets. Only
    // the headline, last, is a list.
    const std::size_t headline = text.find("\n### Headline\n\n- the KV cache made the step ");
    REQUIRE(headline != std::string::npos);
    const std::string tables = text.substr(0, headline);
    CHECK(tables.find("\n\\* the step's working set") != std::string::npos);
    CHECK(tables.find("\n* ") == std::string::npos);
    CHECK(tables.find("\n- ") == std::string::npos);
    // Every table line has as many cells as its header: no stray '|'.
    std::size_t n_bars = 0;
    for (const std::string& line : lines_of(text)) {
        if (line.rfind("| ", 0) != 0) {
            n_bars = 0;
            continue;
        }
        std::size_t bars = 0;
        for (std::size_t i = 0; i < line.size(); ++i) bars += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
        if (n_bars == 0) n_bars = bars;
        CHECK(bars == n_bars);
    }
}

TEST_CASE("axes with one value in the run go in the caption, not in a column") {
    const std::string latency = block_of(render_table(default_like_rows()), "Latency");
    CHECK(latency.find("every line: B=1 D=1024 H=16 L=1, T=2, cold cache") != std::string::npos);
    const std::vector<std::string> lines = lines_of(latency);
    REQUIRE(lines.size() > 3);
    CHECK(lines[2].find(" N  grouping  path ") != std::string::npos);
    CHECK(lines[2].find(" B ") == std::string::npos);
    CHECK(lines[2].find(" T ") == std::string::npos);
}

TEST_CASE("the uncached row shows no speedup, and the cached one shows its speedup") {
    const std::vector<ResultRow> rows = default_like_rows();
    const std::string latency = block_of(render_table(rows), "Latency");
    CHECK(latency.find("1.00x") == std::string::npos);
    const std::vector<std::string> lines = lines_of(latency);
    std::size_t n_cached = 0, n_uncached = 0;
    for (const std::string& line : lines) {
        if (line.find("  MHA ") == std::string::npos && line.find("  GQA-4 ") == std::string::npos &&
            line.find("  MQA ") == std::string::npos) {
            continue;  // not a line of figures
        }
        const bool uncached = line.find(" uncached ") != std::string::npos;
        CHECK((line.back() == 'x') == !uncached);
        ++(uncached ? n_uncached : n_cached);
    }
    CHECK(n_cached == 18);
    CHECK(n_uncached == 18);
}

TEST_CASE("a column has one unit, chosen from its values or forced by --time-unit") {
    const std::vector<ResultRow> rows = default_like_rows();
    // Medians from 0.2 ms to 352 ms: the column reads ms, the small ones with decimals.
    const std::string latency = block_of(render_table(rows), "Latency");
    CHECK(lines_of(latency)[3].find("ms") != std::string::npos);
    CHECK(latency.find("µs") == std::string::npos);
    TableOptions in_us;
    in_us.time_unit = TimeUnit::us;
    const std::string forced = block_of(render_table(rows, in_us), "Latency");
    CHECK(lines_of(forced)[3].find("µs") != std::string::npos);
    CHECK(forced.find(" ms") == std::string::npos);
}

TEST_CASE("the kv memory table says how much smaller, then the percentage") {
    const std::string kv = block_of(render_table(default_like_rows()), "KV memory");
    CHECK(kv.find("4.00x smaller (-75 %)") != std::string::npos);
    CHECK(kv.find("16.0x smaller (-94 %)") != std::string::npos);
    CHECK(kv.find("-75.0 %") == std::string::npos);
}

TEST_CASE("a missing roofline is explained with the commands that measure one") {
    const std::string text = render_table(every_axis_rows());
    CHECK(text.find("  - no roofline for this thread count: measure one with `kvbench roofline -t T`") !=
          std::string::npos);
    CHECK(render_table(default_like_rows()).find("no roofline") == std::string::npos);
}

TEST_CASE("the run description gives the blas build string a line of its own and wraps it") {
    const std::string text = describe_run(default_like_rows(), golden_environment());
    CHECK(text.rfind("machine: Intel(R) Xeon(R) Processor (2 cores, LLC 105 MiB)\nBLAS:    OpenBLAS 0.3.21", 0) == 0);
    CHECK(text.find("\n         MAX_THREADS=64 (openmp)\n") != std::string::npos);
    CHECK(widest_line(text) <= terminal_columns);
}

TEST_CASE("wrapping breaks at spaces, indents what follows, and keeps a long word whole") {
    CHECK(wrap_text("short", 2, 4) == "  short");
    const std::string word(90, 'x');
    CHECK(wrap_text("a " + word + " b", 0, 3) == "a\n   " + word + "\n   b");
    CHECK(wrap_text("one\ntwo", 1, 1) == " one\n two");
}

TEST_CASE("a path the run did not measure leaves no column of dashes") {
    std::vector<ResultRow> rows;
    for (const ResultRow& row : default_like_rows()) {
        if (row.path == DecodePath::cached) rows.push_back(row);
    }
    for (ResultRow& row : rows) row.speedup.reset();
    const std::string text = render_table(rows);
    CHECK(block_of(text, "Latency").find("speedup") == std::string::npos);
    const std::string flops = block_of(text, "FLOPs per step");
    CHECK(flops.find("uncached") == std::string::npos);
    CHECK(flops.find("FLOP/byte") != std::string::npos);
    CHECK(block_of(text, "Latency").find("cold cache, cached path") != std::string::npos);  // the caption says which
}

TEST_CASE("dh shows only when a row sets the head dimension apart from D/H") {
    CHECK(render_table(default_like_rows()).find("dh") == std::string::npos);
    ModelConfig plain = model(1, 4096, 3072, 16, 16, 1);  // dh = D/H = 192
    ModelConfig gemma = plain;
    gemma.explicit_head_dim = 256;
    const std::vector<ResultRow> rows{made_up_row(plain, DecodePath::cached, 2, "cold", 1e6, 0.01, false),
                                      made_up_row(gemma, DecodePath::cached, 2, "cold", 1.3e6, 0.01, false)};
    const std::vector<std::string> lines = lines_of(block_of(render_table(rows), "Latency"));
    REQUIRE(lines.size() > 4);
    const auto line_with = [&](const std::string& text) {
        return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(text) != std::string::npos; });
    };
    CHECK(line_with(" dh "));
    CHECK(line_with(" 192 "));
    CHECK(line_with(" 256 "));
    // A run where every row sets the same dh keeps it in the caption.
    const std::vector<ResultRow> same{made_up_row(gemma, DecodePath::cached, 2, "cold", 1.3e6, 0.01, false)};
    CHECK(render_table(same).find("dh=256") != std::string::npos);
}

TEST_CASE("the default sweep ends with a headline of at most five lines, computed from its rows") {
    const std::vector<ResultRow> rows = default_like_rows();
    const std::string text = render_table(rows);
    const std::size_t start = text.rfind("\n\nHeadline (medians of this run)\n");
    REQUIRE(start != std::string::npos);
    const std::vector<std::string> headline = lines_of(text.substr(start + 2));
    CHECK(headline.size() <= 5);
    // The extreme speedups, where they were measured.
    double lowest = 1e300, highest = 0;
    for (const ResultRow& row : rows) {
        if (row.path != DecodePath::cached) continue;
        lowest = std::min(lowest, *row.speedup);
        highest = std::max(highest, *row.speedup);
    }
    CHECK(headline[1] == "  the KV cache made the step " + format_ratio(lowest) + " (N=128 MHA) to " +
                             format_ratio(highest) + " (N=4096 MQA) faster");
    // GQA-4's cached medians over MHA's at each N: 5e5 + 40·N·G, so (5e5 + 160 N) / (5e5 + 640 N).
    const auto share = [](double n, double g) { return (5e5 + 40 * n * g) / (5e5 + 40 * n * 16); };
    CHECK(headline[2] == fmt::format("  GQA-4's cached step took {:.0f}-{:.0f} % of MHA's time, MQA's {:.0f}-{:.0f} %",
                                     100 * share(4096, 4), 100 * share(128, 4), 100 * share(4096, 1),
                                     100 * share(128, 1)));
    CHECK(headline[3] == "  GQA-4's KV cache is 4x smaller than MHA's, MQA's 16x");
}

TEST_CASE("the headline calls a cached step slower than the forward a slowdown, not faster") {
    std::vector<ResultRow> rows = default_like_rows();
    double highest = 0;
    for (ResultRow& row : rows) {
        if (row.path != DecodePath::cached) continue;
        if (row.config.seq_len == 128 && row.config.n_kv_heads == 16) row.speedup = 0.807;
        highest = std::max(highest, *row.speedup);
    }
    // The sentence as one line, however the table's width wrapped it.
    std::string text;
    for (const char c : render_table(rows)) {
        if (c != '\n') {
            if (c != ' ' || text.empty() || text.back() != ' ') text += c;
        } else if (text.empty() || text.back() != ' ') {
            text += ' ';
        }
    }
    CHECK(text.find("the KV cache made the step 0.807x as fast, slower (N=128 MHA) to " + format_ratio(highest) +
                    " faster (N=4096 MQA)") != std::string::npos);
}

TEST_CASE("the headline gives a share under 10 % two significant digits, so that it never reads 0 %") {
    std::vector<ResultRow> rows = default_like_rows();
    for (ResultRow& row : rows) {
        if (row.path != DecodePath::cached || row.config.n_kv_heads != 1) continue;
        const auto mha = std::find_if(rows.begin(), rows.end(), [&](const ResultRow& other) {
            return other.path == DecodePath::cached && other.config.n_kv_heads == 16 && other.config.seq_len == row.config.seq_len;
        });
        REQUIRE(mha != rows.end());
        row.stats.median_ns = mha->stats.median_ns * (row.config.seq_len == 4096 ? 0.0017 : 0.043);
    }
    const std::string text = render_table(rows);
    CHECK(text.find("MQA's 0.17-4.3 %") != std::string::npos);
}

TEST_CASE("the headline leaves out slow rows and says so, and is absent when nothing compares") {
    std::vector<ResultRow> rows = default_like_rows();
    // A cached row under contention: 100 times too slow, a speedup of 1.5x.
    rows[0].stats.median_ns *= 100;
    rows[0].speedup = 1.5;
    rows[0].slow = true;
    const Headline headline = make_headline(rows);
    CHECK(headline.n_slow_left_out == 1);
    REQUIRE_FALSE(headline.empty());
    CHECK(headline.sentences[0].find("1.50x") == std::string::npos);
    std::ostringstream out;
    write_headline(out, headline, terminal_columns);
    CHECK(out.str().rfind("Headline (medians of this run; 1 row marked ? left out)\n", 0) == 0);
    // One MHA row alone: no speedup, no grouping, nothing to say.
    std::vector<ResultRow> alone{rows[2]};
    alone[0].speedup.reset();
    CHECK(make_headline(alone).empty());
    CHECK(render_table(alone).find("Headline") == std::string::npos);
}

TEST_CASE("the headline compares each reduced kv type with f32 at the same point") {
    std::vector<ResultRow> rows;
    ModelConfig f32 = model(8, 4096, 1024, 16, 16, 1);
    ModelConfig int8 = f32;
    int8.kv_dtype = KvDtype::int8;
    ResultRow f32_row = made_up_row(f32, DecodePath::cached, 2, "cold", 4e6, 0.01, false);
    ResultRow int8_row = made_up_row(int8, DecodePath::cached, 2, "cold", 3e6, 0.01, false);
    int8_row.kv_dtype = "int8";
    int8_row.kv_rel_error = 2.5e-3;
    rows = {f32_row, int8_row};
    const Headline headline = make_headline(rows);
    REQUIRE(headline.sentences.size() == 1);
    // f32: 2·4 bytes per element; int8: 2·(1 + 4/64) per element of dh = 64.
    CHECK(headline.sentences[0] == "int8's cache is 3.76x smaller than f32's and its step took 75 % of the time "
                                   "(error up to 2.5e-03)");
}

TEST_CASE("a slow row is marked ? and a row above its roofline ^, each with its footnote") {
    std::vector<ResultRow> rows = default_like_rows();
    rows[4].slow = true;
    rows[6].roofline_pct = 150.0;
    const std::string text = render_table(rows);
    const std::string latency = block_of(text, "Latency");
    CHECK(latency.find("? slow: 10x or more the time this machine allows") != std::string::npos);
    CHECK(std::count(latency.begin(), latency.end(), '?') == 2);  // the mark and its footnote
    const std::string throughput = block_of(text, "Throughput");
    CHECK(throughput.find("150.0^") != std::string::npos);
    CHECK(throughput.find("^ above 100 %: faster than the roofline allows") != std::string::npos);
    // A warm step that fits in the last-level cache may beat the DRAM roof: no mark.
    rows[6].cache_state = "warm";
    rows[6].fits_in_llc = true;
    CHECK_FALSE(above_roofline(rows[6]));
}

TEST_CASE("tables use the width they are given, and split only beyond it") {
    TableOptions wide;
    wide.width = 200;
    const std::string text = render_table(every_axis_rows(), wide);
    CHECK(text.find("(continued)") == std::string::npos);
    CHECK(widest_line(text) > terminal_columns);
    CHECK(widest_line(text) <= 200);
    CHECK(render_table(every_axis_rows()).find("(continued)") != std::string::npos);
}

TEST_CASE("with a reduced kv cache the uncached row has no cache type, and each type shows its error") {
    ModelConfig f16 = model(1, 512, 1024, 16, 4, 1);
    f16.kv_dtype = KvDtype::f16;
    ModelConfig f32 = f16;
    f32.kv_dtype = KvDtype::f32;
    ResultRow cached = made_up_row(f16, DecodePath::cached, 2, "cold", 1e5, 0.01, false);
    cached.kv_dtype = "f16";
    cached.kv_rel_error = 9.7e-5;
    const ResultRow uncached = made_up_row(f32, DecodePath::uncached, 2, "cold", 1e7, 0.01, false);
    const std::string text = render_table({cached, uncached});
    const std::string latency = block_of(text, "Latency");
    CHECK(latency.find("  none  uncached") != std::string::npos);
    CHECK(latency.find("kv none: the uncached forward keeps no cache") != std::string::npos);
    CHECK(latency.find("f32") == std::string::npos);
    // One line per configuration: the f16 one, with the uncached FLOPs beside its own.
    const std::string flops = block_of(text, "FLOPs per step");
    // title, caption, two header lines, the rule, one line and the footnote's two
    CHECK(lines_of(flops).size() == 8);
    CHECK(flops.find("f32") == std::string::npos);
    CHECK(block_of(text, "KV memory").find("9.7e-05") != std::string::npos);
}

TEST_CASE("the kv formats table marks the formats another beats on bytes, time and error") {
    const ModelConfig f32 = model(8, 4096, 1024, 16, 16, 1);  // dh = 64
    const auto format_row = [&](KvDtype keys, KvDtype values, double median_ns, std::optional<double> error) {
        ModelConfig c = f32;
        c.set_kv_dtypes(keys, values);
        ResultRow row = made_up_row(c, DecodePath::cached, 2, "cold", median_ns, 0.01, false);
        row.kv_dtype = kv_dtype_name(keys, values);
        row.kv_rel_error = error;
        return row;
    };
    std::vector<ResultRow> rows{format_row(KvDtype::f32, KvDtype::f32, 4e6, std::nullopt),
                                format_row(KvDtype::int8, KvDtype::int8, 1.2e6, 7e-3),
                                format_row(KvDtype::q8_0, KvDtype::q8_0, 1.3e6, 8e-3),  // int8's bytes, slower, worse
                                format_row(KvDtype::q4_0, KvDtype::q4_0, 0.8e6, 0.12),
                                format_row(KvDtype::q8_0, KvDtype::q4_0, 1.0e6, 6e-2)};
    rows.push_back(made_up_row(f32, DecodePath::uncached, 2, "cold", 9e7, 0.01, false));
    ModelConfig other_point = f32;
    other_point.seq_len = 1024;
    rows.push_back(made_up_row(other_point, DecodePath::cached, 2, "cold", 1e6, 0.01, false));  // one format: no group
    const std::vector<std::vector<KvFormatEntry>> groups = kv_format_groups(rows);
    REQUIRE(groups.size() == 1);
    REQUIRE(groups[0].size() == 5);
    // f32: 2 · 16 heads · 64 · 4 bytes per token; int8 and q8_0 alike 2 · 16 · 68.
    CHECK(groups[0][0].bytes_per_token == doctest::Approx(8192));
    CHECK(groups[0][1].bytes_per_token == doctest::Approx(2176));
    CHECK(groups[0][2].bytes_per_token == doctest::Approx(2176));
    CHECK(groups[0][4].bytes_per_token == doctest::Approx(16 * (68 + 36)));
    CHECK(groups[0][0].dominated_by == nullptr);  // no error at all
    CHECK(groups[0][1].dominated_by == nullptr);
    REQUIRE(groups[0][2].dominated_by != nullptr);
    CHECK(groups[0][2].dominated_by->kv_dtype == "int8");
    CHECK(groups[0][3].dominated_by == nullptr);  // the fewest bytes and the fastest
    CHECK(groups[0][4].dominated_by == nullptr);
    const std::string text = render_table(rows);
    CHECK(text.find("KV formats") != std::string::npos);
    CHECK(text.find("dominated by int8") != std::string::npos);
    CHECK(render_table({rows[0], rows[5]}).find("KV formats") == std::string::npos);  // one format: no table
}

TEST_CASE("the query tokens table sets each step of Q tokens beside Q = 1, per token") {
    const ModelConfig single = model(8, 4096, 1024, 16, 16, 1);
    const auto tokens_row = [&](std::size_t n_tokens, std::size_t seq_len, double median_ns) {
        ModelConfig c = single;
        c.seq_len = seq_len;
        c.n_query_tokens = n_tokens;
        return made_up_row(c, DecodePath::cached, 2, "cold", median_ns, 0.01, false);
    };
    const std::vector<ResultRow> rows{tokens_row(1, 4096, 4.8e6), tokens_row(2, 4096, 6.0e6),
                                      tokens_row(8, 4096, 12.0e6),
                                      tokens_row(4, 2048, 3.0e6)};  // no Q = 1 at N = 2048: left out
    const std::vector<QueryTokensPair> pairs = query_tokens_pairs(rows);
    REQUIRE(pairs.size() == 2);
    CHECK(pairs[0].tokens == &rows[1]);
    CHECK(pairs[0].single == &rows[0]);
    CHECK(pairs[1].tokens == &rows[2]);
    const std::string table = block_of(render_table(rows), "Query tokens");
    // Q = 8: 12 ms a step, 1.5 ms a token, 4.8 / 1.5 = 3.2 times cheaper than alone.
    CHECK(table.find("1.50") != std::string::npos);
    CHECK(table.find("3.20x") != std::string::npos);
    // Q = 2: 3 ms a token, 1.6 times cheaper.
    CHECK(table.find("1.60x") != std::string::npos);
    CHECK(render_table({rows[0], rows[3]}).find("Query tokens") == std::string::npos);  // no pair: no table
}

TEST_CASE("the paged cache table sets each paged step beside the contiguous one, with its tables' bytes") {
    const ModelConfig contiguous = model(8, 4096, 1024, 16, 16, 1);
    const auto paged_row = [&](std::size_t block, std::size_t seq_len, double median_ns) {
        ModelConfig c = contiguous;
        c.seq_len = seq_len;
        c.kv_block = block;
        return made_up_row(c, DecodePath::cached, 2, "cold", median_ns, 0.01, false);
    };
    const std::vector<ResultRow> rows{paged_row(0, 4096, 4.0e6), paged_row(16, 4096, 6.0e6),
                                      paged_row(128, 4096, 4.4e6),
                                      paged_row(32, 2048, 3.0e6)};  // no contiguous row at N = 2048: left out
    const std::vector<PagedPair> pairs = paged_pairs(rows);
    REQUIRE(pairs.size() == 2);
    CHECK(pairs[0].paged == &rows[1]);
    CHECK(pairs[0].contiguous == &rows[0]);
    CHECK(pairs[1].paged == &rows[2]);
    const std::string table = block_of(render_table(rows), "Paged cache");
    // Blocks of 16: 6 ms against 4 ms; B = 8 rows of 16 heads with 4096 / 16 = 256 entries of 4 bytes.
    CHECK(table.find("1.50x") != std::string::npos);
    CHECK(table.find("131.1") != std::string::npos);
    // Blocks of 128: 4.4 ms, 32 entries a head.
    CHECK(table.find("1.10x") != std::string::npos);
    CHECK(table.find("16.4") != std::string::npos);
    CHECK(render_table({rows[0], rows[3]}).find("Paged cache") == std::string::npos);  // no pair: no table
}
