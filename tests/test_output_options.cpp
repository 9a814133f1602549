// The shared output options: format names and extensions, -o and --export refusals, and quoting.
#include "cli/command_line.hpp"
#include "cli/output_options.hpp"
#include "kvbench/engine/config.hpp"

#include <doctest/doctest.h>

#include "scratch_dir.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <string>

#include <unistd.h>

using namespace kvbench;
using kvbench::test::ScratchDir;

namespace {

OutputPlan plan_of(OutputCliOptions options) { return to_output_plan(options, all_output_formats()); }

OutputCliOptions with_output(const std::string& output, std::optional<std::string> format = std::nullopt) {
    OutputCliOptions options;
    options.output = output;
    options.format = std::move(format);
    return options;
}

}  // namespace

TEST_CASE("format names are read in any case") {
    CHECK(parse_format_name("CSV") == OutputFormat::csv);
    CHECK(parse_format_name("Json") == OutputFormat::json);
    CHECK(parse_format_name("jsonl") == OutputFormat::jsonl);
    CHECK(parse_format_name("MD") == OutputFormat::md);
    CHECK_FALSE(parse_format_name("xml").has_value());
    CHECK_FALSE(parse_format_name("").has_value());
}

TEST_CASE("a file's extension gives its format, .txt being the table") {
    CHECK(format_of_extension("res.csv") == OutputFormat::csv);
    CHECK(format_of_extension("dir.v2/res.JSON") == OutputFormat::json);
    CHECK(format_of_extension("res.jsonl") == OutputFormat::jsonl);
    CHECK(format_of_extension("res.md") == OutputFormat::md);
    CHECK(format_of_extension("res.txt") == OutputFormat::table);
    CHECK_FALSE(format_of_extension("res").has_value());
    CHECK_FALSE(format_of_extension("res.tsv").has_value());
    CHECK_FALSE(format_of_extension("dir.csv/res").has_value());
}

TEST_CASE("-o infers the format from the extension, and --format must agree with it") {
    const ScratchDir dir{"output"};
    const std::string json = (dir.path / "res.json").string();
    const OutputPlan plan = plan_of(with_output(json));
    CHECK(plan.format == OutputFormat::json);
    CHECK(plan.file == json);
    CHECK_FALSE(plan.stdout_is_report());
    CHECK(plan_of(with_output(json, "JSON")).format == OutputFormat::json);
    CHECK_THROWS_WITH_AS(plan_of(with_output(json, "csv")),
                         doctest::Contains("the extension says json but --format says csv"), ConfigError);
    // Without an extension the format must be given.
    const std::string bare = (dir.path / "results").string();
    CHECK(plan_of(with_output(bare, "csv")).format == OutputFormat::csv);
    CHECK_THROWS_WITH_AS(plan_of(with_output(bare)), doctest::Contains("cannot tell the format"), ConfigError);
    CHECK(dir.n_entries() == 0);  // the checks leave no file
}

TEST_CASE("-o with a bare format name suggests --format") {
    CHECK_THROWS_WITH_AS(plan_of(with_output("csv")), doctest::Contains("did you mean --format csv?"), ConfigError);
    CHECK_THROWS_WITH_AS(plan_of(with_output("JSONL")), doctest::Contains("did you mean --format jsonl?"),
                         ConfigError);
}

TEST_CASE("-o - sends the report to stdout") {
    const OutputPlan plan = plan_of(with_output("-", "csv"));
    CHECK_FALSE(plan.file.has_value());
    CHECK(plan.format == OutputFormat::csv);
    CHECK(plan.stdout_is_report());
    CHECK(plan.files().empty());
    CHECK_FALSE(plan_of(with_output("-")).stdout_is_report());  // the table is the terminal's anyway
}

TEST_CASE("--export takes FORMAT:PATH, each checked, none twice") {
    const ScratchDir dir{"output"};
    const std::string csv = (dir.path / "a.csv").string();
    const std::string md = (dir.path / "a.md").string();
    OutputCliOptions options = with_output(csv);
    options.exports = {"md:" + md, "JSONL:" + (dir.path / "a.log").string()};
    const OutputPlan plan = plan_of(options);
    REQUIRE(plan.files().size() == 3);
    CHECK(plan.files()[0].path == csv);
    CHECK(plan.files()[1].format == OutputFormat::md);
    CHECK(plan.files()[2].format == OutputFormat::jsonl);

    auto refused = [&](const std::string& spec) {
        OutputCliOptions bad = with_output(csv);
        bad.exports = {spec};
        return bad;
    };
    CHECK_THROWS_WITH_AS(plan_of(refused(md)), doctest::Contains("write FORMAT:PATH, e.g. --export md:"), ConfigError);
    CHECK_THROWS_WITH_AS(plan_of(refused("xml:" + md)), doctest::Contains("xml: not a format"), ConfigError);
    CHECK_THROWS_WITH_AS(plan_of(refused("csv:" + md)), doctest::Contains("the extension says md, not csv"),
                         ConfigError);
    CHECK_THROWS_WITH_AS(plan_of(refused("csv:" + csv)), doctest::Contains("already written by -o"), ConfigError);
    CHECK_THROWS_WITH_AS(plan_of(refused("csv:-")), doctest::Contains("an export goes to a file"), ConfigError);
    CHECK_THROWS_WITH_AS(plan_of(refused("csv:")), doctest::Contains("the file name is empty"), ConfigError);
    CHECK_THROWS_WITH_AS(plan_of(refused("csv:" + (dir.path / "none" / "a.csv").string())),
                         doctest::Contains("does not exist"), ConfigError);
    CHECK(dir.n_entries() == 0);
}

TEST_CASE("-o through a link is the file it leads to: a loop is refused, the target not written twice") {
    const ScratchDir dir{"output"};
    std::filesystem::create_symlink("b.csv", dir.path / "a.csv");
    std::filesystem::create_symlink("a.csv", dir.path / "b.csv");
    const std::string loop = (dir.path / "a.csv").string();
    CHECK_THROWS_WITH_AS(plan_of(with_output(loop)),
                         fmt::format("-o {}: is a symlink loop (its links never reach a file)", loop).c_str(),
                         ConfigError);

    const std::string target = (dir.path / "report.md").string();
    std::filesystem::create_symlink("report.md", dir.path / "latest.md");
    OutputCliOptions options = with_output((dir.path / "latest.md").string());
    CHECK(plan_of(options).file == options.output);
    options.exports = {"md:" + target};
    CHECK_THROWS_WITH_AS(plan_of(options), doctest::Contains("already written by -o"), ConfigError);
    CHECK(dir.n_entries() == 3);
}

TEST_CASE("a command that writes only some formats refuses the others") {
    const OutputFormats rows_only{OutputFormat::table, OutputFormat::csv, OutputFormat::json};
    OutputCliOptions options;
    options.format = "md";
    CHECK_THROWS_WITH_AS(to_output_plan(options, rows_only), doctest::Contains("writes table, csv or json only"),
                         ConfigError);
    const ScratchDir dir{"output"};
    CHECK_THROWS_WITH_AS(to_output_plan(with_output((dir.path / "t.txt").string()), rows_only, false),
                         doctest::Contains("the tables go to the terminal only; write csv or json"), ConfigError);
}

TEST_CASE("shell quoting leaves plain words alone and quotes the rest") {
    CHECK(shell_quote("--seq") == "--seq");
    CHECK(shell_quote("128-4096*2") == "'128-4096*2'");
    CHECK(shell_quote("a b.csv") == "'a b.csv'");
    CHECK(shell_quote("it's") == "'it'\\''s'");
    CHECK(shell_quote("") == "''");
    const char* argv[] = {"/some/where/kvbench", "sweep", "-n", "16,33", "-o", "my file.csv"};
    record_command_line(6, argv);
    CHECK(command_line() == "kvbench sweep -n 16,33 -o 'my file.csv'");
}
