// compare: the U test against scipy, and verdicts on synthetic result files made here.
#include "cli/compare_command.hpp"
#include "kvbench/compare/compare_report.hpp"
#include "kvbench/compare/comparison.hpp"
#include "kvbench/compare/mann_whitney.hpp"
#include "kvbench/compare/shift_interval.hpp"
#include "kvbench/compare/result_file.hpp"
#include "kvbench/engine/config.hpp"

#include "run_command.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <vector>

namespace kvbench {

namespace {

// One synthetic kvbench row: a configuration and its repetitions (ns).
struct FakeRow {
    std::string path = "cached";
    std::size_t kv_heads = 4;
    std::size_t seq = 64;
    std::vector<double> samples_ns;
    std::uint64_t flops = 1000;
};

double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// A kvbench JSON report as sweep writes it, with the columns compare reads.
std::string fake_json(const std::vector<FakeRow>& rows, const std::string& cpu = "Test CPU") {
    nlohmann::json report;
    report["schema_version"] = 1;
    report["environment"] = {{"cpu_model", cpu},
                             {"kernel_isa", "avx2"},
                             {"n_cores", 2},
                             {"cache_sizes", "L1d 32 KiB, L2 1 MiB, L3 32 MiB"},
                             {"git_commit", "abc"}};
    report["rows"] = nlohmann::json::array();
    for (const FakeRow& row : rows) {
        const double median_ns = median_of(row.samples_ns);
        report["rows"].push_back({{"path", row.path}, {"batch", 1}, {"seq", row.seq}, {"dim", 64}, {"heads", 4},
                                  {"kv_heads", row.kv_heads}, {"head_dim", 16}, {"layers", 1}, {"threads", 1},
                                  {"kv_dtype", "f32"}, {"flops", row.flops}, {"bytes", 2000}, {"kv_bytes", 512},
                                  {"reps", row.samples_ns.size()}, {"latency_us_median", median_ns / 1e3},
                                  {"latency_us_min", *std::min_element(row.samples_ns.begin(), row.samples_ns.end()) / 1e3},
                                  {"latency_us_max", *std::max_element(row.samples_ns.begin(), row.samples_ns.end()) / 1e3},
                                  {"gflops", 1.0}, {"gbps", 1.0}, {"roofline_pct", nullptr}, {"speedup", nullptr},
                                  {"samples_ns", row.samples_ns}});
    }
    return report.dump();
}

// Ten tight samples around `center` ns (±1 %).
std::vector<double> tight(double center) {
    std::vector<double> samples;
    for (int i = 0; i < 10; ++i) samples.push_back(center * (0.99 + 0.002 * i));
    return samples;
}

// Ten samples spread from 0.3x to 2.1x of `center`: noise far wider than a 30 % change.
std::vector<double> wild(double center) {
    std::vector<double> samples;
    for (int i = 0; i < 10; ++i) samples.push_back(center * (0.3 + 0.2 * ((i * 7) % 10)));
    return samples;
}

Comparison compare_texts(const std::string& base, const std::string& other, Metric metric = Metric::latency) {
    CompareOptions options;
    options.metric = metric;
    return compare_results(parse_result_file(base, "BASE"), parse_result_file(other, "NEW"), options);
}

const std::filesystem::path scratch = std::filesystem::temp_directory_path() / "kvbench_test_compare";

std::filesystem::path write_file(const std::string& name, const std::string& text) {
    std::filesystem::create_directories(scratch);
    const std::filesystem::path path = scratch / name;
    std::ofstream(path) << text;
    return path;
}

// The real binary's exit status, its stdout and stderr in one string.
int run_compare(const std::string& arguments, std::string& output) {
    const std::string command = fmt::format("{} compare {} 2>&1; echo \"exit=$?\"", KVBENCH_EXE, arguments);
    output = test::run_and_capture(command);
    const std::size_t at = output.rfind("exit=");
    REQUIRE(at != std::string::npos);
    return std::stoi(output.substr(at + 5));
}

}  // namespace

// Expected values: scipy 1.10.1, scipy.stats.mannwhitneyu(x, y) with its defaults
// (two-sided, use_continuity=True, method="auto").
TEST_CASE("u test matches scipy's exact p for small samples without ties") {
    // mannwhitneyu([1,2,3,4], [5,6,7,8,9]) -> statistic 0.0, pvalue 0.015873015873015872
    const std::vector<double> a = {1, 2, 3, 4};
    const std::vector<double> b = {5, 6, 7, 8, 9};
    const UTest test = mann_whitney_u(a, b);
    CHECK(test.exact);
    CHECK(test.u == 0.0);
    CHECK(test.p_value == doctest::Approx(0.015873015873015872).epsilon(1e-12));
    // mannwhitneyu([1.1,3.4,2.2,5.0,4.1], [2.5,6.3,3.9,7.7,5.8,4.4]) -> 6.0, 0.12554112554112554
    const std::vector<double> c = {1.1, 3.4, 2.2, 5.0, 4.1};
    const std::vector<double> d = {2.5, 6.3, 3.9, 7.7, 5.8, 4.4};
    const UTest mixed = mann_whitney_u(c, d);
    CHECK(mixed.u == 6.0);
    CHECK(mixed.p_value == doctest::Approx(0.12554112554112554).epsilon(1e-12));
}

TEST_CASE("u test matches scipy's normal approximation with ties and with large samples") {
    // mannwhitneyu([1,2,2,3,3,3,4], [3,4,4,5,5,6,7,8]) -> 3.5, 0.004832240868896149
    const std::vector<double> a = {1, 2, 2, 3, 3, 3, 4};
    const std::vector<double> b = {3, 4, 4, 5, 5, 6, 7, 8};
    const UTest ties = mann_whitney_u(a, b);
    CHECK_FALSE(ties.exact);
    CHECK(ties.u == 3.5);
    CHECK(ties.p_value == doctest::Approx(0.004832240868896149).epsilon(1e-9));
    // mannwhitneyu([10,12,11,14,13,15,16,9,10.5,12.5], [13,17,18,15.5,19,20,14.5,16.5,21,22,18.5])
    //   -> 6.5, 0.000721815110961945
    const std::vector<double> c = {10, 12, 11, 14, 13, 15, 16, 9, 10.5, 12.5};
    const std::vector<double> d = {13, 17, 18, 15.5, 19, 20, 14.5, 16.5, 21, 22, 18.5};
    const UTest large = mann_whitney_u(c, d);
    CHECK_FALSE(large.exact);
    CHECK(large.u == 6.5);
    CHECK(large.p_value == doctest::Approx(0.000721815110961945).epsilon(1e-9));
    // mannwhitneyu([5,5,5], [5,5,5]) -> 4.5, 1.0
    const std::vector<double> same = {5, 5, 5};
    CHECK(mann_whitney_u(same, same).p_value == 1.0);
}

TEST_CASE("identical files compare as the same on every row") {
    const std::string text = fake_json({{.kv_heads = 4, .samples_ns = tight(1000)}, {.kv_heads = 1, .samples_ns = tight(500)}});
    const Comparison comparison = compare_texts(text, text);
    REQUIRE(comparison.rows.size() == 2);
    for (const ComparedRow& row : comparison.rows) {
        CHECK(row.verdict == Verdict::same);
        CHECK(row.test == Test::u_test);
    }
    REQUIRE(comparison.geomean_ratio);
    CHECK(*comparison.geomean_ratio == doctest::Approx(1.0));
    CHECK(comparison.provenance_note.starts_with("same machine"));
}

TEST_CASE("two files that do not both record cores and caches are not called the same machine") {
    const std::string text = fake_json({{.kv_heads = 4, .samples_ns = tight(1000)}});
    nlohmann::json without_caches = nlohmann::json::parse(text);
    without_caches["environment"].erase("cache_sizes");
    without_caches["environment"].erase("n_cores");
    const Comparison comparison = compare_texts(text, without_caches.dump());
    CHECK(comparison.provenance_note.starts_with("machines not known to be the same (n_cores, cache_sizes not in both"));
    CHECK(comparison.provenance_note.find("every metric compares") == std::string::npos);
}

TEST_CASE("a row 30 % slower with tight samples is a regression, and only that row") {
    const std::string base = fake_json({{.kv_heads = 4, .samples_ns = tight(1000)}, {.kv_heads = 1, .samples_ns = tight(500)}});
    const std::string slower = fake_json({{.kv_heads = 4, .samples_ns = tight(1300)}, {.kv_heads = 1, .samples_ns = tight(500)}});
    const Comparison comparison = compare_texts(base, slower);
    REQUIRE(comparison.rows.size() == 2);
    CHECK(comparison.rows[0].verdict == Verdict::regression);
    CHECK(comparison.rows[0].change_pct == doctest::Approx(30.0));
    CHECK(*comparison.rows[0].p_value < 0.05);
    CHECK(comparison.rows[1].verdict == Verdict::same);
    // Faster is the mirror image.
    CHECK(compare_texts(slower, base).rows[0].verdict == Verdict::faster);
}

TEST_CASE("a 30 % slower median inside wildly overlapping samples is not significant") {
    const Comparison comparison = compare_texts(fake_json({{.samples_ns = wild(1000)}}), fake_json({{.samples_ns = wild(1300)}}));
    REQUIRE(comparison.rows.size() == 1);
    CHECK(comparison.rows[0].change_pct == doctest::Approx(30.0));
    CHECK(*comparison.rows[0].p_value >= 0.05);
    CHECK(comparison.rows[0].verdict == Verdict::same);
}

TEST_CASE("rows present on one side only are listed") {
    const Comparison comparison =
        compare_texts(fake_json({{.seq = 64, .samples_ns = tight(1000)}, {.seq = 128, .samples_ns = tight(2000)}}),
                      fake_json({{.seq = 64, .samples_ns = tight(1000)}, {.seq = 256, .samples_ns = tight(4000)}}));
    CHECK(comparison.rows.size() == 1);
    REQUIRE(comparison.only_in_base.size() == 1);
    CHECK(comparison.only_in_base[0] == "cached B=1 N=128 D=64 H=4 G=4");
    REQUIRE(comparison.only_in_new.size() == 1);
    CHECK(comparison.only_in_new[0] == "cached B=1 N=256 D=64 H=4 G=4");
}

TEST_CASE("a changed flops count fails the row whatever its timing") {
    const Comparison comparison =
        compare_texts(fake_json({{.samples_ns = tight(1000)}}), fake_json({{.samples_ns = tight(1000), .flops = 1001}}));
    REQUIRE(comparison.rows.size() == 1);
    CHECK(comparison.rows[0].verdict == Verdict::counts_differ);
    CHECK(comparison.rows[0].counts_note == "flops 1000 -> 1001");
}

TEST_CASE("mha_ratio divides the MHA row's median by the grouped row's") {
    const std::string text = fake_json({{.kv_heads = 4, .samples_ns = tight(1000)}, {.kv_heads = 1, .samples_ns = tight(250)}});
    const Comparison comparison = compare_texts(text, text, Metric::mha_ratio);
    REQUIRE(comparison.rows.size() == 1);  // the MHA row has no ratio to itself
    CHECK(comparison.n_without_metric == 1);
    CHECK(comparison.rows[0].base.median == doctest::Approx(4.0));
}

TEST_CASE("another tool's CSV and malformed files are refused, naming the file") {
    CHECK_THROWS_WITH_AS(parse_result_file("name,time\nfoo,1\n", "other.csv"),
                         doctest::Contains("other.csv cannot be compared: no column path"), ConfigError);
    CHECK_THROWS_WITH_AS(parse_result_file("{\"rows\": [", "cut.json"), doctest::Contains("not valid JSON"), ConfigError);
    CHECK_THROWS_WITH_AS(parse_result_file("{\"x\": 1}", "x.json"), doctest::Contains("neither \"rows\""), ConfigError);
    const std::string twice = fake_json({{.samples_ns = tight(1000)}, {.samples_ns = tight(1000)}});
    CHECK_THROWS_WITH_AS(parse_result_file(twice, "twice.json"), doctest::Contains("twice.json cannot be compared: row 2 repeats row 1"), ConfigError);
}

TEST_CASE("a report written for people is refused as one, by its name or its first lines") {
    const auto golden = [](const std::string& file) {
        std::ifstream in(std::filesystem::path(KVBENCH_GOLDEN_DIR) / file, std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        return text.str();
    };
    const std::string reads = "compare reads kvbench CSV, JSON or JSON Lines files, or runs of --db (write one with -f csv)";
    CHECK_THROWS_WITH_AS(parse_result_file(golden("default_sweep.md"), "run.md"),
                         doctest::Contains(("run.md is a Markdown report; " + reads).c_str()), ConfigError);
    CHECK_THROWS_WITH_AS(parse_result_file(golden("default_sweep.md"), "run"),
                         doctest::Contains("run is a Markdown report"), ConfigError);
    CHECK_THROWS_WITH_AS(parse_result_file(golden("default_sweep.txt"), "run.txt"),
                         doctest::Contains(("run.txt is a table report; " + reads).c_str()), ConfigError);
    CHECK_THROWS_WITH_AS(parse_result_file(golden("default_sweep.txt"), "run.csv"),
                         doctest::Contains("run.csv is a table report"), ConfigError);
    CHECK_THROWS_WITH_AS(parse_result_file("# Results\n\nfaster than before\n", "notes.csv"),
                         doctest::Contains("notes.csv is a Markdown report"), ConfigError);
    // Another tool's CSV keeps the error that names its missing columns, whatever its name.
    CHECK_THROWS_WITH_AS(parse_result_file("name,time\nfoo,1\n", "other.txt"),
                         doctest::Contains("other.txt cannot be compared: no column path"), ConfigError);
    // A kvbench JSON report under a report's name is still read: the content decides first.
    const std::string json = fake_json({{.samples_ns = tight(1000)}});
    CHECK(parse_result_file(json, "run.md").rows.size() == 1);
}

TEST_CASE("a report with the old column name gbps reads like one with gb_per_s") {
    std::string text = fake_json({{.samples_ns = tight(1000)}});
    CHECK(text.find("\"gbps\"") != std::string::npos);
    const ResultFile old_name = parse_result_file(text, "old.json");
    text.replace(text.find("\"gbps\""), 6, "\"gb_per_s\"");
    const ResultFile new_name = parse_result_file(text, "new.json");
    CHECK(old_name.rows[0].cell("gb_per_s") == new_name.rows[0].cell("gb_per_s"));
    CHECK(compare_results(old_name, new_name, {}).rows.size() == 1);
}

TEST_CASE("a json lines report compares as the json report of the same rows") {
    const std::vector<FakeRow> rows{{.kv_heads = 4, .samples_ns = tight(1000)}, {.kv_heads = 1, .samples_ns = tight(500)}};
    const nlohmann::json report = nlohmann::json::parse(fake_json(rows));
    std::string lines;
    for (nlohmann::json row : report.at("rows")) {
        row["schema_version"] = report.at("schema_version");
        for (const auto& [column, value] : report.at("environment").items()) row[column] = value;
        lines += row.dump() + "\n";
    }
    const ResultFile jsonl = parse_result_file(lines, "run.jsonl");
    CHECK(jsonl.kind == "kvbench JSON Lines");
    REQUIRE(jsonl.rows.size() == 2);
    CHECK(jsonl.rows[0].samples_ns == rows[0].samples_ns);
    CHECK(jsonl.rows[0].cell("gb_per_s") == "1");  // schema 1's gbps, read in the current schema
    CHECK(jsonl.provenance.at("cpu_model") == "Test CPU");
    const Comparison comparison = compare_results(parse_result_file(fake_json(rows), "run.json"), jsonl, {});
    REQUIRE(comparison.rows.size() == 2);
    for (const ComparedRow& row : comparison.rows) CHECK(row.verdict == Verdict::same);
    CHECK(parse_result_file(lines.substr(0, lines.find('\n') + 1), "one.jsonl").rows.size() == 1);
}

TEST_CASE("a CSV without samples falls back to the overlap of min-max ranges, and says when that hides a change") {
    const std::string header = "path,batch,seq,dim,heads,kv_heads,head_dim,layers,threads,kv_dtype,flops,bytes,kv_bytes,"
                               "reps,latency_us_median,latency_us_min,latency_us_max,gflops,gbps,roofline_pct,speedup\n";
    const std::string base = header + "cached,1,64,64,4,4,16,1,1,f32,1000,2000,512,5,10.0,9.5,10.5,1,1,,\n";
    const std::string apart = header + "cached,1,64,64,4,4,16,1,1,f32,1000,2000,512,5,13.0,12.5,13.5,1,1,,\n";
    const std::string overlapping = header + "cached,1,64,64,4,4,16,1,1,f32,1000,2000,512,5,13.0,10.0,16.0,1,1,,\n";
    const std::string close = header + "cached,1,64,64,4,4,16,1,1,f32,1000,2000,512,5,10.2,9.6,10.8,1,1,,\n";
    // A -97 % median whose one wild repetition reaches BASE's range.
    const std::string collapsed = header + "cached,1,64,64,4,4,16,1,1,f32,1000,2000,512,5,0.3,0.29,9.9,1,1,,\n";
    const Comparison apart_rows = compare_texts(base, apart);
    CHECK(apart_rows.rows[0].test == Test::overlap);
    CHECK(apart_rows.rows[0].verdict == Verdict::regression);
    CHECK_FALSE(apart_rows.rows[0].shift.has_value());  // no samples, no interval
    CHECK(apart_rows.n_without_samples == 1);
    CHECK(compare_texts(base, overlapping).rows[0].verdict == Verdict::unclear);
    CHECK(compare_texts(base, collapsed).rows[0].verdict == Verdict::unclear);
    CHECK(compare_texts(base, close).rows[0].verdict == Verdict::same);  // within the threshold: same it is
    std::ostringstream table;
    write_comparison(table, compare_texts(base, collapsed), CompareFormat::table, 1000);  // notes on one line each
    CHECK(table.str().find("1 of 1 rows carry no samples (a CSV keeps none)") != std::string::npos);
    CHECK(table.str().find("compare JSON or JSON Lines reports") != std::string::npos);
    CHECK(table.str().find("1 unclear") != std::string::npos);
    // The test column says what the ranges did: an unclear row's overlap, a regression's gap.
    CHECK(table.str().find("ranges overlap") != std::string::npos);
    CHECK(table.str().find("ranges apart") == std::string::npos);
    std::ostringstream apart_table;
    write_comparison(apart_table, apart_rows, CompareFormat::table, 1000);
    CHECK(apart_table.str().find("ranges apart") != std::string::npos);
}

TEST_CASE("compare's table and notes keep within the width they are given, and every row stays named") {
    const std::vector<FakeRow> base_rows = {{.path = "cached", .kv_heads = 1, .seq = 4096, .samples_ns = {100, 101, 102, 103, 104}},
                                            {.path = "uncached", .kv_heads = 16, .seq = 32768, .samples_ns = {900, 901, 902, 903, 904}}};
    std::vector<FakeRow> new_rows = base_rows;
    for (FakeRow& row : new_rows) {
        for (double& sample : row.samples_ns) sample *= 1.5;
    }
    const Comparison comparison = compare_texts(fake_json(base_rows, "A CPU model name long enough to need wrapping at eighty columns"),
                                                fake_json(new_rows));
    for (const std::size_t width : {std::size_t{80}, std::size_t{100}}) {
        CAPTURE(width);
        std::ostringstream table;
        write_comparison(table, comparison, CompareFormat::table, width);
        std::istringstream lines(table.str());
        std::size_t widest = 0;
        for (std::string line; std::getline(lines, line);) widest = std::max(widest, line.size());
        CHECK(widest <= width);
        CHECK(table.str().find("N=4096") != std::string::npos);
        CHECK(table.str().find("N=32768") != std::string::npos);
        CHECK(table.str().find("SLOWER") != std::string::npos);  // the verdict column survives the split
    }
}

// Expected values: R's wilcox.test(other, base, conf.int = TRUE) re-derived by brute force in
// Python 3 (no R, scipy or numpy on the build machine): every placement of the m values of
// `other` among the m + n ranks gives U's exact distribution; qu = the smallest q with
// P(U <= q) >= 0.025 (1 if 0); interval = [d(qu), d(mn + 1 - qu)] of the sorted differences
// other - base, estimate = their median. The script is in docs/compare.md#how-much-the-shift-and-its-interval.
TEST_CASE("the hodges-lehmann shift and its exact interval match R's wilcox.test by hand and by enumeration") {
    // By hand: differences {4,5,6} - {1,2,3} sorted 1 2 2 3 3 3 4 4 5, median 3. With 3 + 3 values
    // P(U = 0) = 1/20 = 0.05 >= 0.025, so qu = 0 -> 1: the whole range [1, 5], at 1 - 2/20 = 90 %.
    const std::vector<double> small_base = {1, 2, 3};
    const std::vector<double> small_other = {4, 5, 6};
    const ShiftInterval small = hodges_lehmann(small_base, small_other, 0.95);
    CHECK(small.exact);
    CHECK(small.shift == 3);
    CHECK(small.low == 1);
    CHECK(small.high == 5);
    CHECK(small.achieved == doctest::Approx(0.9));

    // 8 against 8 timings (us), no ties: qu = 14 (U's critical value 13 of the tables), 95.01 %.
    const std::vector<double> base = {100.2, 101.5, 99.8, 102.3, 100.9, 101.1, 99.5, 100.4};
    const std::vector<double> other = {104.1, 103.2, 105.6, 102.9, 104.8, 103.7, 104.4, 106.0};
    const ShiftInterval shift = hodges_lehmann(base, other, 0.95);
    CHECK(shift.exact);
    CHECK(shift.shift == doctest::Approx(3.6).epsilon(1e-12));
    CHECK(shift.low == doctest::Approx(2.5).epsilon(1e-12));
    CHECK(shift.high == doctest::Approx(4.7).epsilon(1e-12));
    CHECK(shift.achieved == doctest::Approx(0.9501165501165502).epsilon(1e-12));

    // 5 against 6 and a shift of about nothing: the interval holds 0; qu = 4, 96.97 %.
    const std::vector<double> base2 = {10.1, 9.7, 10.4, 10.0, 9.9};
    const std::vector<double> other2 = {9.5, 10.8, 10.2, 9.6, 10.6, 10.3};
    const ShiftInterval none = hodges_lehmann(base2, other2, 0.95);
    CHECK(none.shift == doctest::Approx(0.2).epsilon(1e-12));
    CHECK(none.low == doctest::Approx(-0.5).epsilon(1e-12));
    CHECK(none.high == doctest::Approx(0.8).epsilon(1e-12));
    CHECK(none.achieved == doctest::Approx(0.9696969696969697).epsilon(1e-12));
}

// Expected values: Python 3's statistics.NormalDist for z, sigma with the tie correction, the
// rank k = floor(mn/2 - z sigma + 1/2): k = 1427, sigma = 190.51136404932063.
TEST_CASE("with ties or 50 values a side the interval's rank comes from the normal approximation") {
    std::vector<double> base;
    std::vector<double> other;
    for (int i = 0; i < 60; ++i) {
        base.push_back(1000 + (i * 37) % 61);
        other.push_back(1012 + (i * 41) % 67);
    }
    const ShiftInterval shift = hodges_lehmann(base, other, 0.95);
    CHECK_FALSE(shift.exact);
    CHECK(shift.shift == 14);
    CHECK(shift.low == 7);
    CHECK(shift.high == 22);
    CHECK(shift.achieved >= 0.95);
    CHECK(shift.achieved < 0.951);
}

TEST_CASE("--require-interval fails a row only when its whole interval is beyond the threshold") {
    // About 8 % slower, within ±1 %: the interval lies beyond 5 % but not beyond 10 %.
    std::vector<double> slower_8;
    for (double sample : tight(1000)) slower_8.push_back(sample * 1.08);
    const std::string base = fake_json({{.samples_ns = tight(1000)}});
    const std::string slower = fake_json({{.samples_ns = slower_8}});
    CompareOptions options;
    options.require_interval = true;
    const auto verdict = [&](double threshold) {
        options.threshold_pct = threshold;
        return compare_results(parse_result_file(base, "BASE"), parse_result_file(slower, "NEW"), options).rows[0];
    };
    const ComparedRow row = verdict(5);
    REQUIRE(row.shift.has_value());
    CHECK(row.percent_of_base(row.shift->low) > 5);
    CHECK(row.percent_of_base(row.shift->high) < 10);
    CHECK(row.verdict == Verdict::regression);
    CHECK(verdict(10).verdict == Verdict::slower);
    // A 6 % median change inside wide noise: SLOWER by the median rule, only slower by the interval.
    std::vector<double> noisy_base;
    std::vector<double> noisy_new;
    for (int i = 0; i < 20; ++i) {
        noisy_base.push_back(1000 * (0.9 + 0.01 * i));
        noisy_new.push_back(1060 * (0.9 + 0.01 * i) + 1);
    }
    const std::string wide_base = fake_json({{.samples_ns = noisy_base}});
    const std::string wide_new = fake_json({{.samples_ns = noisy_new}});
    options.threshold_pct = 5;
    options.require_interval = false;
    const ComparedRow by_median = compare_results(parse_result_file(wide_base, "BASE"), parse_result_file(wide_new, "NEW"), options).rows[0];
    options.require_interval = true;
    const ComparedRow by_interval = compare_results(parse_result_file(wide_base, "BASE"), parse_result_file(wide_new, "NEW"), options).rows[0];
    CHECK(by_median.verdict == Verdict::regression);
    CHECK(by_interval.verdict == Verdict::slower);
    CHECK(by_interval.percent_of_base(by_interval.shift->low) < 5);
}

TEST_CASE("a threshold is a percentage: 5% or 5; nan, inf and a bare fraction are refused") {
    CHECK(parse_threshold("5%") == 5);
    CHECK(parse_threshold("5") == 5);
    CHECK(parse_threshold("0") == 0);
    CHECK(parse_threshold("0.05%") == doctest::Approx(0.05));
    CHECK(parse_threshold("1000") == 1000);
    CHECK_THROWS_WITH_AS(parse_threshold("0.05"), doctest::Contains("write 5% for 5 percent, or 0.05% if you mean 0.05 %"),
                         ConfigError);
    for (const char* bad : {"nan", "nan%", "inf", "-inf%", "1001", "-1", "", "%", "5 %", "0x5"}) {
        CHECK_THROWS_AS_MESSAGE(parse_threshold(bad), ConfigError, bad);
    }
}

TEST_CASE("a report written before the layer's columns matches a new one's attention-block rows, not its others") {
    const std::string old_report = fake_json({{.samples_ns = tight(1000)}});
    nlohmann::json with_layer = nlohmann::json::parse(old_report);
    nlohmann::json full_row = with_layer["rows"][0];
    with_layer["rows"][0].update({{"block", "attn"}, {"ffn_dim", 0}, {"weight_dtype", "f32"}, {"variant", ""}});
    full_row.update({{"block", "full"}, {"ffn_dim", 64}, {"weight_dtype", "bf16"}, {"variant", "W=16:LG"}});
    with_layer["rows"].push_back(full_row);
    const Comparison comparison = compare_texts(old_report, with_layer.dump());
    REQUIRE(comparison.rows.size() == 1);
    CHECK(comparison.rows[0].verdict == Verdict::same);
    CHECK(comparison.only_in_new.size() == 1);
}

TEST_CASE("a report written before the seq_lens column matches a new one's uniform rows, not its ragged ones") {
    const std::string old_report = fake_json({{.samples_ns = tight(1000)}});
    nlohmann::json with_contexts = nlohmann::json::parse(old_report);
    nlohmann::json ragged_row = with_contexts["rows"][0];
    with_contexts["rows"][0].update({{"seq_lens", ""}});
    ragged_row.update({{"seq_lens", "3 1"}});
    with_contexts["rows"].push_back(ragged_row);
    const Comparison comparison = compare_texts(old_report, with_contexts.dump());
    REQUIRE(comparison.rows.size() == 1);
    CHECK(comparison.rows[0].verdict == Verdict::same);
    CHECK(comparison.only_in_new.size() == 1);
}

TEST_CASE("different machines are named in the provenance note") {
    const std::string text = fake_json({{.samples_ns = tight(1000)}});
    const Comparison comparison = compare_texts(text, fake_json({{.samples_ns = tight(1000)}}, "Other CPU"));
    CHECK(comparison.provenance_note.starts_with("different machines (cpu_model 'Test CPU' vs 'Other CPU')"));
}

TEST_CASE("kvbench compare's failure line names the first three slower rows and counts the rest") {
    std::vector<FakeRow> base_rows;
    std::vector<FakeRow> slower_rows;
    for (std::size_t seq = 64; seq <= 1024; seq *= 2) {
        base_rows.push_back({.seq = seq, .samples_ns = tight(1000)});
        slower_rows.push_back({.seq = seq, .samples_ns = tight(1300)});
    }
    const std::string base = write_file("five_base.json", fake_json(base_rows)).string();
    const std::string slower = write_file("five_slower.json", fake_json(slower_rows)).string();
    std::string output;
    CHECK(run_compare(base + " " + slower, output) == 1);
    CHECK(output.find("), 5 rows: cached B=1 N=64 ") != std::string::npos);
    CHECK(output.find("N=256 D=64 H=4 G=4 (SLOWER); and 2 more\n") != std::string::npos);
    CHECK(output.find("(SLOWER); cached B=1 N=512") == std::string::npos);  // the table names the rest
}

TEST_CASE("kvbench compare exits 0 on identical files, 1 naming a slower row, 2 on bad input") {
    const std::string base = write_file("base.json", fake_json({{.kv_heads = 4, .samples_ns = tight(1000)},
                                                               {.kv_heads = 1, .samples_ns = tight(500)}})).string();
    const std::string slower = write_file("slower.json", fake_json({{.kv_heads = 4, .samples_ns = tight(1300)},
                                                                   {.kv_heads = 1, .samples_ns = tight(500)}})).string();
    const std::string other_tool = write_file("other.csv", "name,time\nfoo,1\n").string();
    std::string output;
    CHECK(run_compare(base + " " + base, output) == 0);
    CHECK(output.find("same") != std::string::npos);
    CHECK(run_compare(base + " " + slower, output) == 1);
    CHECK(output.find("failed on latency (threshold 5%), 1 row: cached B=1 N=64 D=64 H=4 G=4 (SLOWER)\n") != std::string::npos);
    CHECK(run_compare(base + " " + slower + " --threshold 40%", output) == 0);  // slower, but within the threshold
    CHECK(run_compare(base + " " + slower + " --fail-on counts", output) == 0);
    CHECK(run_compare(base + " " + other_tool, output) == 2);
    CHECK(output.find("kvbench: error: " + other_tool + " cannot be compared: no column path") != std::string::npos);
    CHECK(run_compare(base + " " + base + " --threshold fast", output) == 2);
    CHECK(output.find("--threshold 'fast': must be a percentage") != std::string::npos);
    CHECK(run_compare(base + " " + slower + " --threshold nan", output) == 2);  // not a gate switched off
}

TEST_CASE("kvbench compare exits 3, saying what is missing, when NEW does not cover BASE") {
    std::vector<FakeRow> eight;
    for (const std::size_t seq : {std::size_t{16}, std::size_t{32}, std::size_t{64}, std::size_t{128}}) {
        for (const std::size_t kv_heads : {std::size_t{4}, std::size_t{1}}) eight.push_back({.kv_heads = kv_heads, .seq = seq, .samples_ns = tight(1000)});
    }
    const std::vector<FakeRow> two(eight.begin(), eight.begin() + 2);
    const std::vector<FakeRow> elsewhere = {{.seq = 4096, .samples_ns = tight(1000)}};
    const std::string base = write_file("eight.json", fake_json(eight)).string();
    const std::string lost = write_file("two.json", fake_json(two)).string();
    const std::string other_grid = write_file("elsewhere.json", fake_json(elsewhere)).string();
    std::string output;
    CHECK(run_compare(base + " " + lost, output) == 3);
    CHECK(output.find("only in BASE (6)") != std::string::npos);
    CHECK(output.find(lost + " lacks 6 of the 8 rows of " + base) != std::string::npos);
    CHECK(run_compare(base + " " + lost + " --allow-missing", output) == 0);
    CHECK(run_compare(lost + " " + base, output) == 0);  // NEW holding more is no loss
    CHECK(run_compare(base + " " + other_grid + " --allow-missing", output) == 3);
    CHECK(output.find("have no row in common: nothing was compared") != std::string::npos);
    CHECK(output.find("failed on") == std::string::npos);  // not a slowdown
}

}  // namespace kvbench

TEST_CASE("an interval that three samples a side cannot take to 95 % says the confidence it has") {
    const Comparison comparison = compare_texts(fake_json({{.kv_heads = 4, .samples_ns = {1000, 1001, 1002}}}),
                                                fake_json({{.kv_heads = 4, .samples_ns = {1100, 1101, 1102}}}));
    REQUIRE(comparison.rows.size() == 1);
    REQUIRE(comparison.rows[0].shift.has_value());
    CHECK(comparison.rows[0].shift->achieved == doctest::Approx(0.9));
    std::ostringstream table;
    write_comparison(table, comparison, CompareFormat::table, 1000);
    CHECK(table.str().find("% at 90 %") != std::string::npos);
    // Eight a side reach 95 %: nothing is added.
    const std::vector<double> eight = {1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007};
    std::vector<double> slower = eight;
    for (double& sample : slower) sample += 100;
    std::ostringstream wide;
    write_comparison(wide, compare_texts(fake_json({{.kv_heads = 4, .samples_ns = eight}}), fake_json({{.kv_heads = 4, .samples_ns = slower}})),
                     CompareFormat::table, 1000);
    CHECK(wide.str().find("% at ") == std::string::npos);
}
