// The export manager on hand-built rows: incremental saves, JSON Lines appends, unwritable files, the stdout report.
#include "kvbench/report/export_manager.hpp"
#include "kvbench/report/generation_rows.hpp"
#include "kvbench/report/read_report.hpp"

#include <doctest/doctest.h>

#include "csv_reader.hpp"
#include "scratch_dir.hpp"
#include "said.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace kvbench;
using kvbench::test::ScratchDir;

namespace {

Environment minimal_environment() {
    Environment env;
    env.tool_version = "0.1.0";
    env.git_commit = "abc1234";
    env.build_type = "Release";
    env.cpu_model = "Test CPU";
    env.timestamp = "2024-01-02T03:04:05Z";
    return env;
}

// The rows of one measured point at context `seq`: cached and uncached, three repetitions each.
std::vector<ResultRow> point_rows(std::size_t seq) {
    ModelConfig config;
    config.seq_len = seq;
    config.model_dim = 8;
    config.n_heads = 2;
    config.n_kv_heads = 1;
    PointMeasurement measured;
    measured.cached = PathMeasurement{{1000, 1100, 1200}, {}, {}};
    measured.uncached = PathMeasurement{{4000, 4100, 4200}, {}, {}};
    return make_result_rows({config, 1}, measured, RunOptions{}, nullptr, minimal_environment());
}

std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::size_t count_lines(const std::string& text) { return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')); }

using kvbench::test::Said;

ExportPlan export_plan_of(std::vector<OutputTarget> files) {
    ExportPlan plan;
    plan.files = std::move(files);
    plan.run_name = "sweep";
    return plan;
}

}  // namespace

TEST_CASE("every file holds every finished point after each save, a json lines file by appends") {
    const ScratchDir dir("export_manager");
    const std::string csv = (dir.path / "a.csv").string(), jsonl = (dir.path / "a.jsonl").string();
    const Environment env = minimal_environment();
    Said said;
    std::ostringstream stdout_report;
    ExportManager exporter(export_plan_of({{OutputFormat::csv, csv}, {OutputFormat::jsonl, jsonl}}), env, said.messages(),
                           stdout_report);
    exporter.start({});
    CHECK(count_lines(read_file(csv)) == 1);  // the header alone
    CHECK(read_file(jsonl).empty());

    ReportRows all{point_rows(4), {}};
    exporter.save_point({point_rows(4), {}}, all);
    CHECK(count_lines(read_file(csv)) == 3);
    CHECK(count_lines(read_file(jsonl)) == 2);
    const std::vector<ResultRow> second = point_rows(8);
    all.rows.insert(all.rows.end(), second.begin(), second.end());
    exporter.save_point({second, {}}, all);
    CHECK(count_lines(read_file(csv)) == 5);
    const std::string appended = read_file(jsonl);
    CHECK(count_lines(appended) == 4);

    const ExportResult result = exporter.finish(all);
    CHECK(result.written_paths() == std::vector<std::string>{csv, jsonl});
    CHECK(result.failed.empty());
    CHECK(result.holder() == csv + " and " + jsonl);
    CHECK(result.csv_to_plot() == csv);
    CHECK(read_file(jsonl) == appended);  // left as it was: a reader following it sees no swap
    std::ifstream jsonl_in(jsonl);
    CHECK(read_jsonl_report(jsonl_in).size() == 4);
    CHECK(said.warnings.empty());
    CHECK(stdout_report.str().empty());
}

TEST_CASE("a file that cannot be written is said once, tried again at the end, and fails alone") {
    const ScratchDir dir("export_manager");
    const std::string good = (dir.path / "good.csv").string();
    const std::string gone = (dir.path / "gone" / "a.json").string();  // its directory is missing
    const Environment env = minimal_environment();
    Said said;
    std::ostringstream stdout_report;
    ExportPlan plan = export_plan_of({{OutputFormat::csv, good}, {OutputFormat::json, gone}});
    plan.tables_hold = "the results";
    ExportManager exporter(plan, env, said.messages(), stdout_report);
    exporter.start({});
    exporter.save_point({point_rows(4), {}}, {point_rows(4), {}});
    exporter.save_point({point_rows(4), {}}, {point_rows(4), {}});
    REQUIRE(said.warnings.size() == 1);
    CHECK(said.warnings[0].find("a.json") != std::string::npos);
    CHECK(said.warnings[0].ends_with("; the sweep goes on and tries again at the end"));

    const ExportResult result = exporter.finish({point_rows(4), {}});
    CHECK(result.written_paths() == std::vector<std::string>{good});
    CHECK(result.failed == std::vector<std::string>{gone});
    REQUIRE(said.errors.size() == 1);
    CHECK(said.errors[0].ends_with("; the results are in the tables below"));
    CHECK(count_lines(read_file(good)) == 3);
}

TEST_CASE("a json lines report on stdout gets each point's lines as they come, and nothing more at the end") {
    const Environment env = minimal_environment();
    Said said;
    std::ostringstream stdout_report;
    ExportPlan plan = export_plan_of({});
    plan.stdout_format = OutputFormat::jsonl;
    ExportManager exporter(plan, env, said.messages(), stdout_report);
    exporter.start({});
    exporter.save_point({point_rows(4), {}}, {point_rows(4), {}});
    CHECK(count_lines(stdout_report.str()) == 2);
    const ExportResult result = exporter.finish({point_rows(4), {}});
    CHECK(count_lines(stdout_report.str()) == 2);
    CHECK(result.stdout_report);
    CHECK(result.holder() == "the report on standard output");
}

TEST_CASE("a csv report on stdout is written once, whole, at the end") {
    const Environment env = minimal_environment();
    Said said;
    std::ostringstream stdout_report;
    ExportPlan plan = export_plan_of({});
    plan.stdout_format = OutputFormat::csv;
    ExportManager exporter(plan, env, said.messages(), stdout_report);
    exporter.start({});
    exporter.save_point({point_rows(4), {}}, {point_rows(4), {}});
    CHECK(stdout_report.str().empty());
    exporter.finish({point_rows(4), {}});
    const auto records = kvbench::test::parse_csv(stdout_report.str());
    REQUIRE(records.size() == 3);
    CHECK(records[1][0] == "cached");
    CHECK(records[2][0] == "uncached");
}

TEST_CASE("a generation's files carry its step columns from the first save, header included") {
    const ScratchDir dir("export_manager");
    const std::string csv = (dir.path / "gen.csv").string();
    const Environment env = minimal_environment();
    Said said;
    std::ostringstream stdout_report;
    ExportManager exporter(export_plan_of({{OutputFormat::csv, csv}}), env, said.messages(), stdout_report);
    GenerationOptions options;
    options.prompt_len = 4;
    options.n_new = 1;
    ReportRows all = generation_rows({}, options, {}, nullptr, env);
    exporter.start(all);
    const std::string header = read_file(csv);
    CHECK(header.find(",step,phase,prompt,new_tokens,") != std::string::npos);

    GridPoint point;
    point.config.model_dim = 8;
    point.config.n_heads = 2;
    point.config.n_kv_heads = 1;
    const std::vector<GenerationStep> steps{{0, 4, 2000, {}, {}}, {1, 5, 1000, {}, {}}};
    const std::vector<GenerationStep> uncached_steps{{0, 4, 2000, {}, {}}, {1, 5, 3000, {}, {}}};
    const ReportRows rows = generation_rows({{point, DecodePath::cached, steps}, {point, DecodePath::uncached, uncached_steps}},
                                            options, {}, nullptr, env);
    append_rows(all, rows);
    exporter.save_point(rows, all);
    const auto records = kvbench::test::parse_csv(read_file(csv));
    REQUIRE(records.size() == 5);
    const auto column = [&](const std::string& name) {
        return static_cast<std::size_t>(std::find(records[0].begin(), records[0].end(), name) - records[0].begin());
    };
    CHECK(records[2][column("phase")] == "decode");
    CHECK(records[2][column("path")] == "cached");
    CHECK(records[2][column("speedup")] == "3");  // the uncached step's 3000 ns over the cached step's 1000 ns
}

TEST_CASE("a generation of another cache type takes its speedups from the uncached steps an earlier one timed") {
    const Environment env = minimal_environment();
    GenerationOptions options;
    options.prompt_len = 4;
    options.n_new = 1;
    GridPoint f32_point;
    f32_point.config.model_dim = 8;
    f32_point.config.n_heads = 2;
    f32_point.config.n_kv_heads = 1;
    GridPoint f16_point = f32_point;
    f16_point.config.set_kv_dtypes(KvDtype::f16, KvDtype::f16);
    const std::vector<GenerationStep> uncached_steps{{0, 4, 2000, {}, {}}, {1, 5, 3000, {}, {}}};
    ReportRows all = generation_rows({{f32_point, DecodePath::uncached, uncached_steps}}, options, {}, nullptr, env);
    // The f16 configuration runs the cached path only: the forward is the f32 one already timed.
    const std::vector<GenerationStep> f16_steps{{0, 4, 2500, {}, {}}, {1, 5, 600, {}, {}}};
    const ReportRows f16_rows = generation_rows({{f16_point, DecodePath::cached, f16_steps}}, options, {}, nullptr, env);
    CHECK_FALSE(f16_rows.rows[1].speedup.has_value());
    append_rows(all, f16_rows);
    REQUIRE(all.rows.size() == 4);
    REQUIRE(all.rows[3].speedup.has_value());
    CHECK(*all.rows[3].speedup == doctest::Approx(5.0));  // 3000 ns over 600 ns, the decode step's
    CHECK(*all.rows[2].speedup == doctest::Approx(0.8));  // the prefill's 2000 over 2500
}
