// Report writers on two fabricated rows: CSV columns and quoting, JSON shape, atomic files (tables: test_tables.cpp).
#include "kvbench/files/atomic_file.hpp"
#include "kvbench/report/report.hpp"
#include "kvbench/report/columns.hpp"
#include "kvbench/report/read_report.hpp"

#include <doctest/doctest.h>

#include "scratch_dir.hpp"

#include "csv_reader.hpp"
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

using namespace kvbench;
using kvbench::test::ScratchDir;

namespace {

// B=1 N=4 D=8 H=2 G=1 L=1, so dh = 4 and P = 2·64 + 2·8·4 = 192 (docs/counting.md#weights-per-layer):
// cached flops 2·192 + 4·2·4·4 = 512, uncached 2·4·192 + 2·8·4·5 = 1856;
// cached bytes 192·4 + 2·4·4·4 + 2·8·4 = 960, uncached 768 + 128 + 2·4·8·4 = 1152; kv_bytes 128.
ModelConfig small_mqa() {
    ModelConfig c;
    c.n_batch = 1;
    c.seq_len = 4;
    c.model_dim = 8;
    c.n_heads = 2;
    c.n_kv_heads = 1;
    c.n_layers = 1;
    return c;
}

Environment fixed_environment();

PathMeasurement path_measured(std::vector<std::int64_t> samples_ns, std::uint64_t useful, std::uint64_t executed) {
    return PathMeasurement{std::move(samples_ns), FlopCount{useful, executed}, {}};
}

// Peaks of 100 GFLOP/s and 8 GB/s: both small_mqa() steps are bandwidth-bound.
Roofline small_roofline() {
    Roofline roofline;
    roofline.peak_gflops = 100;
    roofline.peak_gbps = 8;
    roofline.source = "measured this run";
    return roofline;
}

// A point at 2 threads, cold, measured on both paths, with --verify.
std::vector<ResultRow> two_rows() {
    PointMeasurement measured;
    measured.cached = path_measured({1000, 1200, 1100}, 512, 512);
    measured.uncached = path_measured({4400, 4000}, 1856, 2048);
    measured.verify_rel_error = 3e-7;
    const Roofline roofline = small_roofline();
    return make_result_rows({small_mqa(), 2}, measured, RunOptions{}, &roofline, fixed_environment());
}

// One cached row, without a roofline.
std::vector<ResultRow> cached_only(const ModelConfig& config, std::size_t n_threads) {
    PointMeasurement measured;
    measured.cached = path_measured({1000}, 0, 0);
    RunOptions options;
    options.run_uncached = false;
    return make_result_rows({config, n_threads}, measured, options, nullptr, fixed_environment());
}

Environment fixed_environment() {
    Environment env;
    env.tool_version = "0.1.0";
    env.git_commit = "abc1234";
    env.build_type = "Release";
    env.compiler = "GNU 12.2.0";
    env.kernel_isa = "avx2+fma";
    env.cpu_model = "AMD \"Zen\", 8-core";  // a comma and quotes: RFC 4180 must quote it
    env.n_cores = 8;
    env.llc_bytes = 32u << 20;
    env.blas_library = "OpenBLAS 0.3.21";
    env.blas_threading = "openmp";
    env.transparent_hugepage = "madvise";
    env.timestamp = "2024-01-02T03:04:05Z";
    env.command_line = "kvbench sweep -g 4,1 -o 'a b.csv'";
    return env;
}

template <typename Writer>
std::string render(Writer write, const std::vector<ResultRow>& rows) {
    std::ostringstream out;
    write(out, rows, fixed_environment());
    return out.str();
}

std::size_t column_index(const std::string& name) {
    const auto& columns = csv_columns();
    for (std::size_t i = 0; i < columns.size(); ++i) {
        if (columns[i] == name) return i;
    }
    throw std::out_of_range(name);
}

std::string read_all(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace

TEST_CASE("the csv header starts with the contract columns in order") {
    const std::vector<std::string> spec{
        "path",   "batch",  "seq",          "dim",     "heads",   "kv_heads",          "head_dim",
        "layers", "threads", "kv_dtype",    "flops",   "bytes",   "kv_bytes",          "reps",
        "latency_us_median", "latency_us_min", "latency_us_max", "gflops", "gb_per_s", "roofline_pct",
        "speedup"};
    const auto& columns = csv_columns();
    REQUIRE(columns.size() > spec.size());
    CHECK(std::vector<std::string>(columns.begin(), columns.begin() + static_cast<std::ptrdiff_t>(spec.size())) ==
          spec);
}

TEST_CASE("the csv header carries the provenance columns after the spec ones") {
    for (const char* name : {"grouping", "cache_state", "latency_us_p90", "latency_us_mean", "latency_cv_pct",
                             "latency_mdape_pct", "verify_rel_error", "kv_rel_error", "fits_in_llc", "flops_executed", "noisy", "flags", "reps_policy",
                             "seed", "warmup", "roofline_peak_gflops", "roofline_peak_gb_per_s", "roofline_source",
                             "k_dtype", "v_dtype", "kv_block", "tool_version", "git_commit",
                             "build_type", "compiler", "kernel_isa", "kernel_tiles", "cpu_model", "blas_library", "blas_threading",
                             "openblas_coretype", "openblas_l2_size", "transparent_hugepage", "schema_version", "shard",
                             "command_line", "timestamp"}) {
        CHECK_NOTHROW(column_index(name));
    }
}

TEST_CASE("a point's rows are built whole: cost, stats, rates, roofline, llc fit, speedup and verify") {
    const std::vector<ResultRow> rows = two_rows();
    REQUIRE(rows.size() == 2);
    const ResultRow& cached = rows[0];
    const ResultRow& uncached = rows[1];
    CHECK(cached.path == DecodePath::cached);
    CHECK(uncached.cost == StepCost{1856, 1152, 128});
    CHECK(uncached.stats.median_ns == 4200);
    CHECK(uncached.gflops == doctest::Approx(1856.0 / 4200e-9 / 1e9));
    CHECK(uncached.gbps == doctest::Approx(1152.0 / 4200e-9 / 1e9));
    CHECK(uncached.n_threads == 2);
    CHECK(uncached.cache_state == "cold");
    CHECK(uncached.samples_ns == std::vector<std::int64_t>{4400, 4000});
    // Bandwidth-bound at 8 GB/s: 960 bytes take 120 ns against a median of 1100 ns.
    REQUIRE(cached.roofline_pct);
    CHECK(*cached.roofline_pct == doctest::Approx(100.0 * 120 / 1100));
    CHECK(*cached.speedup == doctest::Approx(4200.0 / 1100.0));
    CHECK(*uncached.speedup == doctest::Approx(1.0));
    CHECK(*uncached.flops_executed == 2048);
    CHECK(*cached.verify_rel_error == 3e-7);
    CHECK(cached.fits_in_llc);
}

TEST_CASE("a point measured on one path has no speedup, and no roofline without one") {
    const std::vector<ResultRow> rows = cached_only(small_mqa(), 1);
    REQUIRE(rows.size() == 1);
    CHECK_FALSE(rows[0].speedup.has_value());
    CHECK_FALSE(rows[0].roofline_pct.has_value());
    CHECK_FALSE(rows[0].verify_rel_error.has_value());
}

TEST_CASE("two fabricated rows give the golden csv") {
    const std::string expected =
        "path,batch,seq,dim,heads,kv_heads,head_dim,layers,threads,kv_dtype,flops,bytes,kv_bytes,reps,"
        "latency_us_median,latency_us_min,latency_us_max,gflops,gb_per_s,roofline_pct,speedup,grouping,variant,seq_lens,"
        "query_tokens,latency_us_per_token,shared_prefix,cache_state,"
        "latency_us_p90,latency_us_mean,latency_cv_pct,latency_mdape_pct,verify_rel_error,kv_rel_error,block,ffn_dim,weight_dtype,experts_read,weight_rel_error,fits_in_llc,flops_executed,"
        "noisy,flags,reps_policy,seed,warmup,roofline_peak_gflops,roofline_peak_gb_per_s,roofline_source,k_dtype,v_dtype,kv_block,tool_version,"
        "git_commit,build_type,compiler,kernel_isa,kernel_tiles,cpu_model,blas_library,blas_threading,openblas_coretype,openblas_l2_size,"
        "transparent_hugepage,schema_version,shard,command_line,timestamp\n"
        "cached,1,4,8,2,1,4,1,2,f32,512,960,128,3,1.100,1.000,1.200,0.465455,0.872727,10.9091,3.81818,MQA,,,1,1.100,0,cold,"
        "1.180,1.100,9.09091,9.09091,3e-07,,attn,0,f32,,,true,512,true,noisy,reps=20 warmup=3,1,3,100,8,measured this run,f32,f32,0,"
        "0.1.0,abc1234,Release,GNU 12.2.0,avx2+fma,,\"AMD \"\"Zen\"\", 8-core\","
        "OpenBLAS 0.3.21,openmp,,,madvise,2,,\"kvbench sweep -g 4,1 -o 'a b.csv'\",2024-01-02T03:04:05Z\n"
        "uncached,1,4,8,2,1,4,1,2,f32,1856,1152,128,2,4.200,4.000,4.400,0.441905,0.274286,3.42857,1,MQA,,,1,4.200,0,cold,"
        "4.360,4.200,6.73435,4.7619,3e-07,,attn,0,f32,,,true,2048,false,,reps=20 warmup=3,1,3,100,8,measured this run,f32,f32,0,"
        "0.1.0,abc1234,Release,GNU 12.2.0,avx2+fma,,\"AMD \"\"Zen\"\", 8-core\","
        "OpenBLAS 0.3.21,openmp,,,madvise,2,,\"kvbench sweep -g 4,1 -o 'a b.csv'\",2024-01-02T03:04:05Z\n";
    CHECK(render(write_csv, two_rows()) == expected);
}

TEST_CASE("the csv parses back with one field per column and the cpu model intact") {
    const auto records = kvbench::test::parse_csv(render(write_csv, two_rows()));
    REQUIRE(records.size() == 3);
    CHECK(records[0] == csv_columns());
    for (const auto& record : records) CHECK(record.size() == csv_columns().size());
    CHECK(records[1][column_index("cpu_model")] == "AMD \"Zen\", 8-core");
    CHECK(records[2][column_index("verify_rel_error")] == "3e-07");
    CHECK(records[1][column_index("openblas_coretype")].empty());
}

TEST_CASE("csv rates and speedup agree with the csv's own flops, bytes and medians") {
    const auto records = kvbench::test::parse_csv(render(write_csv, two_rows()));
    REQUIRE(records.size() == 3);
    auto number = [&](std::size_t record, const char* name) {
        return std::stod(records[record][column_index(name)]);
    };
    for (std::size_t r = 1; r <= 2; ++r) {
        const double median_s = number(r, "latency_us_median") * 1e-6;
        CHECK(number(r, "gflops") == doctest::Approx(number(r, "flops") / median_s / 1e9).epsilon(1e-5));
        CHECK(number(r, "gb_per_s") == doctest::Approx(number(r, "bytes") / median_s / 1e9).epsilon(1e-5));
    }
    CHECK(number(1, "speedup") ==
          doctest::Approx(number(2, "latency_us_median") / number(1, "latency_us_median")).epsilon(1e-5));
    CHECK(number(2, "speedup") == 1.0);
}

TEST_CASE("a csv field holding a line break is quoted") {
    Environment env = fixed_environment();
    env.compiler = "GNU\n12";
    std::ostringstream out;
    write_csv(out, two_rows(), env);
    CHECK(out.str().find("\"GNU\n12\"") != std::string::npos);
    CHECK(kvbench::test::parse_csv(out.str())[1][column_index("compiler")] == "GNU\n12");
}

TEST_CASE("json has the schema version, the environment once and the samples") {
    const std::string text = render(write_json, two_rows());
    const nlohmann::json report = nlohmann::json::parse(text);
    CHECK(report.at("schema_version") == 2);
    CHECK(report.at("environment").at("cpu_model") == "AMD \"Zen\", 8-core");
    CHECK(report.at("environment").at("llc_bytes") == 32u << 20);
    CHECK(report.at("environment").at("openblas_coretype").is_null());
    CHECK(report.at("environment").at("kernel_isa") == "avx2+fma");
    CHECK(report.at("environment").at("transparent_hugepage") == "madvise");
    CHECK(text.find("\"environment\"") == text.rfind("\"environment\""));
    CHECK(text.find("\"cpu_model\"") == text.rfind("\"cpu_model\""));

    const auto& rows = report.at("rows");
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].at("samples_ns") == nlohmann::json::array({1000, 1200, 1100}));
    CHECK(rows[0].at("flops") == 512);
    CHECK(rows[0].at("latency_us_median") == doctest::Approx(1.1));
    CHECK(rows[0].at("roofline_pct").get<double>() == doctest::Approx(100.0 * 120 / 1100));
    CHECK(rows[1].at("speedup") == 1.0);
    CHECK(rows[1].at("verify_rel_error") == 3e-7);
    CHECK(rows[1].at("fits_in_llc") == true);
    CHECK(rows[0].at("flops_executed") == 512);
    CHECK(rows[1].at("flops_executed") == 2048);
}

TEST_CASE("json rows have every row column of the csv") {
    const nlohmann::json report = nlohmann::json::parse(render(write_json, two_rows()));
    for (const RowColumn& column : row_columns()) CHECK(report.at("rows")[0].contains(column.name));
}

TEST_CASE("write_report dispatches on the format") {
    const std::vector<ResultRow> rows = two_rows();
    std::ostringstream csv;
    write_report(csv, OutputFormat::csv, rows, fixed_environment());
    CHECK(csv.str() == render(write_csv, rows));
    std::ostringstream md;
    write_report(md, OutputFormat::md, rows, fixed_environment());
    std::ostringstream markdown;
    write_markdown(markdown, rows, fixed_environment());
    CHECK(md.str() == markdown.str());
}

TEST_CASE("write_report_file writes the report and leaves no temporary behind") {
    const ScratchDir dir{"report"};
    const std::filesystem::path path = dir.path / "out.csv";
    write_report_file(path, OutputFormat::csv, two_rows(), fixed_environment());
    CHECK(read_all(path) == render(write_csv, two_rows()));
    CHECK(dir.n_entries() == 1);
}

TEST_CASE("write_report_file replaces an existing file") {
    const ScratchDir dir{"report"};
    const std::filesystem::path path = dir.path / "out.json";
    std::ofstream(path) << "old";
    write_report_file(path, OutputFormat::json, two_rows(), fixed_environment());
    CHECK(nlohmann::json::parse(read_all(path)).at("schema_version") == 2);
    CHECK(dir.n_entries() == 1);
}

TEST_CASE("a report written through a link replaces the file it leads to and keeps the link") {
    const ScratchDir dir{"report"};
    std::filesystem::create_directory(dir.path / "runs");
    std::ofstream(dir.path / "runs" / "dated.csv") << "old";
    std::filesystem::create_symlink("runs/dated.csv", dir.path / "latest.csv");
    std::filesystem::create_symlink("latest.csv", dir.path / "newest.csv");
    write_file_atomically(dir.path / "newest.csv", [](std::ostream& out) { out << "new"; });
    CHECK(std::filesystem::is_symlink(dir.path / "newest.csv"));
    CHECK(std::filesystem::is_symlink(dir.path / "latest.csv"));
    CHECK(read_all(dir.path / "runs" / "dated.csv") == "new");
    CHECK(dir.n_entries() == 3);

    // A link that leads nowhere yet names the file to create, as a shell's > does.
    std::filesystem::create_symlink("runs/next.csv", dir.path / "next.csv");
    write_file_atomically(dir.path / "next.csv", [](std::ostream& out) { out << "first"; });
    CHECK(std::filesystem::is_symlink(dir.path / "next.csv"));
    CHECK(read_all(dir.path / "runs" / "next.csv") == "first");
}

TEST_CASE("a symlink loop is refused by name and nothing is written") {
    const ScratchDir dir{"report"};
    std::filesystem::create_symlink("b.csv", dir.path / "a.csv");
    std::filesystem::create_symlink("a.csv", dir.path / "b.csv");
    const std::filesystem::path path = dir.path / "a.csv";
    CHECK_THROWS_WITH_AS(write_file_atomically(path, [](std::ostream& out) { out << "lost"; }),
                         fmt::format("cannot write {}: is a symlink loop (its links never reach a file)",
                                     path.string()).c_str(),
                         std::runtime_error);
    CHECK(std::filesystem::is_symlink(path));
    CHECK(dir.n_entries() == 2);
}

TEST_CASE("write_report_file into a missing directory throws and creates nothing") {
    const ScratchDir dir{"report"};
    const std::filesystem::path path = dir.path / "missing" / "out.csv";
    CHECK_THROWS_WITH_AS(write_report_file(path, OutputFormat::csv, two_rows(), fixed_environment()),
                         doctest::Contains(fmt::format("cannot write {}: ", path.string()).c_str()),
                         std::runtime_error);
    CHECK_FALSE(std::filesystem::exists(path));
    CHECK(dir.n_entries() == 0);
}

TEST_CASE("a failing writer leaves the old file untouched and no temporary") {
    const ScratchDir dir{"report"};
    const std::filesystem::path path = dir.path / "out.csv";
    std::ofstream(path) << "old";
    const auto half_then_fail = [](std::ostream& out) {
        out << "partial";
        throw std::runtime_error("disk on fire");
    };
    std::string message;
    try {
        write_file_atomically(path, half_then_fail);
    } catch (const std::runtime_error& error) {
        message = error.what();
    }
    CHECK(message == fmt::format("cannot write {}: disk on fire", path.string()));
    CHECK(read_all(path) == "old");
    CHECK(dir.n_entries() == 1);
}

TEST_CASE("write_report_file onto a directory throws and removes its temporary") {
    const ScratchDir dir{"report"};
    std::filesystem::create_directory(dir.path / "taken");
    CHECK_THROWS_AS(write_report_file(dir.path / "taken", OutputFormat::csv, two_rows(), fixed_environment()),
                    std::runtime_error);
    CHECK(dir.n_entries() == 1);
    CHECK(std::filesystem::is_directory(dir.path / "taken"));
}

TEST_CASE("rows written as csv read back with every column, their build, and no samples") {
    std::istringstream csv(render(write_csv, two_rows()));
    const std::vector<SavedRow> saved = read_csv_report(csv);
    const std::vector<ResultRow> rows = two_rows();
    REQUIRE(saved.size() == rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const ResultRow& read = saved[i].row;
        CHECK(saved[i].git_commit == "abc1234");
        CHECK(saved[i].tool_version == "0.1.0");
        CHECK(read.path == rows[i].path);
        CHECK(read.config == rows[i].config);
        CHECK(read.n_threads == rows[i].n_threads);
        CHECK(read.cost == rows[i].cost);
        CHECK(read.stats.n_samples == rows[i].stats.n_samples);
        CHECK(read.stats.median_ns == doctest::Approx(rows[i].stats.median_ns));
        CHECK(read.stats.p90_ns == doctest::Approx(rows[i].stats.p90_ns));
        CHECK(*read.speedup == doctest::Approx(*rows[i].speedup).epsilon(1e-5));
        CHECK(*read.roofline_pct == doctest::Approx(*rows[i].roofline_pct).epsilon(1e-5));
        CHECK(read.flops_executed == rows[i].flops_executed);
        CHECK(read.noisy == rows[i].noisy);
        CHECK(read.reps_policy == rows[i].reps_policy);
        CHECK(read.samples_ns.empty());
    }
    // Written again, the rows give the same CSV: nothing was lost on the way.
    std::vector<ResultRow> again;
    for (const SavedRow& row : saved) again.push_back(row.row);
    CHECK(render(write_csv, again) == render(write_csv, rows));
}

TEST_CASE("rows written as json read back with their samples") {
    std::istringstream json(render(write_json, two_rows()));
    const std::vector<SavedRow> saved = read_json_report(json);
    REQUIRE(saved.size() == 2);
    CHECK(saved[0].row.samples_ns == std::vector<std::int64_t>{1000, 1200, 1100});
    CHECK(saved[1].row.verify_rel_error == 3e-7);
    CHECK(saved[1].git_commit == "abc1234");
    std::vector<ResultRow> again;
    for (const SavedRow& row : saved) again.push_back(row.row);
    CHECK(render(write_json, again) == render(write_json, two_rows()));
    CHECK(render(write_csv, again) == render(write_csv, two_rows()));
}

TEST_CASE("rows written as jsonl read back line by line, each line complete in itself") {
    const std::string text = render(write_jsonl, two_rows());
    CHECK(std::count(text.begin(), text.end(), '\n') == 2);
    const nlohmann::json first = nlohmann::json::parse(text.substr(0, text.find('\n')));
    CHECK(first.at("schema_version") == 2);
    CHECK(first.at("git_commit") == "abc1234");
    CHECK(first.at("command_line") == "kvbench sweep -g 4,1 -o 'a b.csv'");
    CHECK(first.at("samples_ns") == std::vector<std::int64_t>{1000, 1200, 1100});
    std::istringstream in(text);
    const std::vector<SavedRow> saved = read_jsonl_report(in);
    REQUIRE(saved.size() == 2);
    std::vector<ResultRow> again;
    for (const SavedRow& row : saved) again.push_back(row.row);
    CHECK(render(write_csv, again) == render(write_csv, two_rows()));
}

TEST_CASE("a jsonl file cut in its last line reads back the whole lines before it") {
    const std::string text = render(write_jsonl, two_rows());
    std::istringstream cut(text.substr(0, text.size() - 20));
    const std::vector<SavedRow> saved = read_jsonl_report(cut);
    REQUIRE(saved.size() == 1);
    CHECK(saved[0].row.path == DecodePath::cached);
}

TEST_CASE("a schema 1 csv (gbps, fractions) reads back as the same rows") {
    // Written by schema 1: gbps, and latency_cv and latency_mdape as fractions; no seed,
    // warmup, roofline peaks, schema_version or command_line.
    std::istringstream old(
        "path,batch,seq,dim,heads,kv_heads,head_dim,layers,threads,kv_dtype,flops,bytes,kv_bytes,reps,"
        "latency_us_median,latency_us_min,latency_us_max,gflops,gbps,roofline_pct,speedup,grouping,cache_state,"
        "latency_us_p90,latency_us_mean,latency_cv,latency_mdape,verify_rel_error,fits_in_llc,flops_executed,noisy,"
        "reps_policy,tool_version,git_commit,build_type,compiler,kernel_isa,cpu_model,blas_library,blas_threading,"
        "openblas_coretype,openblas_l2_size,timestamp\n"
        "cached,1,4,8,2,1,4,1,2,f32,512,960,128,3,1.100,1.000,1.200,0.465455,0.872727,10.9091,3.81818,MQA,cold,"
        "1.180,1.100,0.0909091,0.0909091,3e-07,true,512,true,reps=20 warmup=3,0.1.0,abc1234,Release,GNU 12.2.0,"
        "avx2+fma,cpu,OpenBLAS 0.3.21,openmp,,,2024-01-02T03:04:05Z\n");
    const std::vector<SavedRow> saved = read_csv_report(old);
    REQUIRE(saved.size() == 1);
    const ResultRow& row = saved[0].row;
    const ResultRow expected = two_rows()[0];
    CHECK(row.gbps == doctest::Approx(expected.gbps).epsilon(1e-5));
    CHECK(row.stats.cv == doctest::Approx(expected.stats.cv).epsilon(1e-5));
    CHECK(row.stats.mdape == doctest::Approx(expected.stats.mdape).epsilon(1e-5));
    CHECK(row.roofline_source == "unknown");  // a roofline_pct without its source
    CHECK_FALSE(row.roofline_peak_gbps.has_value());
}

TEST_CASE("a point's variant is written and read back: windows, sinks, a full layer of reduced weights") {
    ModelConfig config = small_mqa();
    config.n_layers = 4;
    config.layer_windows = {2, 0, 2, 0};
    config.attention_sinks = true;
    config.block = BlockKind::full;
    config.ffn_dim = 16;
    config.weight_dtype = WeightDtype::bf16;
    validate(config);
    PointMeasurement measured;
    measured.cached = path_measured({1000, 1100}, 0, 0);
    measured.uncached = path_measured({4000, 4100}, 0, 0);
    const Roofline roofline = small_roofline();
    const std::vector<ResultRow> rows = make_result_rows({config, 1}, measured, RunOptions{}, &roofline, fixed_environment());
    const std::string text = render(write_csv, rows);
    CHECK(text.find(",MQA,W=2:LG sinks,") != std::string::npos);
    std::istringstream csv(text);
    const std::vector<SavedRow> saved = read_csv_report(csv);
    REQUIRE(saved.size() == 2);
    CHECK(saved[0].row.config == config);
    CHECK(saved[1].row.cost == rows[1].cost);
    std::string unreadable = text;
    unreadable.replace(unreadable.find("W=2:LG"), 6, "W=2:LX");
    std::istringstream bad(unreadable);
    CHECK_THROWS_WITH(read_csv_report(bad), doctest::Contains("column variant"));
}

TEST_CASE("a json report of a schema this build does not know is refused") {
    std::string json = render(write_json, two_rows());
    json.replace(json.find("\"schema_version\": 2"), 19, "\"schema_version\": 9");
    std::istringstream in(json);
    CHECK_THROWS_WITH_AS(read_json_report(in), "schema_version 9 is not one this kvbench reads (1 to 2)",
                         std::runtime_error);
}

TEST_CASE("the csv reader follows rfc 4180 and refuses what kvbench did not write") {
    CHECK(parse_csv_records("a,\"b,\"\"c\"\"\"\r\n,\n") ==
          std::vector<std::vector<std::string>>{{"a", "b,\"c\""}, {"", ""}});
    CHECK(parse_csv_records("x") == std::vector<std::vector<std::string>>{{"x"}});
    CHECK_THROWS_WITH_AS(parse_csv_records("a,\"b\n"), "the header: a quoted field is not closed", std::runtime_error);
    CHECK_THROWS_WITH_AS(parse_csv_records("a\n1\n\"b\n"), "row 2: a quoted field is not closed", std::runtime_error);
    std::istringstream not_ours("name,value\nx,1\n");
    CHECK_THROWS_AS(read_csv_report(not_ours), std::runtime_error);
    std::string csv = render(write_csv, two_rows());
    csv.replace(csv.find("cached,1,4,8"), 12, "cached,1,4,x");
    std::istringstream corrupt(csv);
    CHECK_THROWS_WITH_AS(read_csv_report(corrupt), "row 1: column dim: 'x' is not a whole number below 2^64", std::runtime_error);
}

TEST_CASE("a row with an explicit head dimension states it and reads back as the same point") {
    ModelConfig gemma_like = small_mqa();
    gemma_like.explicit_head_dim = 6;  // H·dh = 12, D = 8
    const std::vector<ResultRow> rows = cached_only(gemma_like, 1);
    const std::string csv = render(write_csv, rows);
    CHECK(csv.find("\ncached,1,4,8,2,1,6,1,") != std::string::npos);
    std::istringstream in(csv);
    const std::vector<SavedRow> saved = read_csv_report(in);
    REQUIRE(saved.size() == 1);
    CHECK(saved[0].row.config == gemma_like);
    CHECK(saved[0].row.config.head_dim() == 6);
    CHECK(saved[0].row.cost == rows[0].cost);
    // A head_dim of D/H reads back as the point without --head-dim; 0 is refused.
    std::string plain = render(write_csv, cached_only(small_mqa(), 1));
    std::istringstream plain_in(plain);
    CHECK(read_csv_report(plain_in)[0].row.config.explicit_head_dim == 0);
    plain.replace(plain.find("cached,1,4,8,2,1,4,"), 19, "cached,1,4,8,2,1,0,");
    std::istringstream zero(plain);
    CHECK_THROWS_WITH_AS(read_csv_report(zero), "row 1: column head_dim: '0' is not a whole number of at least 1",
                         std::runtime_error);
}

TEST_CASE("the flags column lists a row's marks in the schema's words") {
    std::vector<ResultRow> rows = two_rows();
    CHECK(row_flags(rows[0]) == "noisy");
    CHECK(row_flags(rows[1]).empty());
    rows[1].slow = true;
    rows[1].roofline_pct = 180.0;
    CHECK(row_flags(rows[1]) == "slow above_roofline");
    // Every word the rows can carry is one the schema file explains (docs/csv.md#flags).
    std::vector<std::string> words;
    for (const FlagWord& flag : flag_words()) {
        CHECK_FALSE(flag.meaning.empty());
        words.push_back(flag.word);
    }
    std::sort(words.begin(), words.end());
    CHECK(words == std::vector<std::string>{"above_roofline", "noisy", "slow"});
    const auto records = kvbench::test::parse_csv(render(write_csv, rows));
    CHECK(records[1][column_index("flags")] == "noisy");
    CHECK(records[2][column_index("flags")] == "slow above_roofline");
}

TEST_CASE("a step far slower than the machine allows is marked slow when its row is built") {
    // small_mqa() takes 120 ns at 8 GB/s, below the 100 µs where the check starts: a larger point.
    ModelConfig config = small_mqa();
    config.seq_len = 4096;
    config.model_dim = 1024;
    config.n_heads = 16;
    config.n_kv_heads = 16;
    const Roofline roofline = small_roofline();  // 8 GB/s
    const double bound_ns = 1e9 * roofline_time_s(step_flops(config, DecodePath::cached),
                                                  step_bytes(config, DecodePath::cached), roofline);
    REQUIRE(bound_ns > slow_check_min_bound_s * 1e9);
    const auto row_at = [&](double median_ns) {
        const auto ns = static_cast<std::int64_t>(median_ns);
        return make_result_row(DecodePath::cached, {config, 2}, path_measured({ns, ns, ns}, 0, 0),
                               step_cost(config, DecodePath::cached), RunOptions{}, &roofline, fixed_environment(),
                               std::nullopt);
    };
    // The estimate is the bound at estimate_achieved_fraction: 10x it is slow, 9x is not.
    CHECK(row_at(11 * bound_ns / estimate_achieved_fraction).slow);
    CHECK_FALSE(row_at(9 * bound_ns / estimate_achieved_fraction).slow);
}

TEST_CASE("a slow row read back from a csv is still slow") {
    std::vector<ResultRow> rows = two_rows();
    rows[0].slow = true;
    std::istringstream in(render(write_csv, rows));
    const std::vector<SavedRow> read = read_csv_report(in);
    REQUIRE(read.size() == 2);
    CHECK(read[0].row.slow);
    CHECK_FALSE(read[1].row.slow);
}
