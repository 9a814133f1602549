// The report schema: the contract columns the writers start with, and old files read in the current schema by every reader.
#include "kvbench/compare/result_file.hpp"
#include "kvbench/report/columns.hpp"
#include "kvbench/report/schema.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace kvbench;

TEST_CASE("every report's rows start with the schema's contract columns, in order") {
    const std::vector<std::string>& contract = contract_columns();
    REQUIRE(contract.size() == 21);
    REQUIRE(row_columns().size() >= contract.size());
    for (std::size_t i = 0; i < contract.size(); ++i) CHECK(row_columns()[i].name == contract[i]);
}

TEST_CASE("a renamed column reads under its new name and in its new unit") {
    CHECK(current_column_name("gbps") == "gb_per_s");
    CHECK(current_column_name("latency_cv") == "latency_cv_pct");
    CHECK(current_column_name("seq") == "seq");
    CHECK(current_cell_text("latency_cv", "0.05") == "5");
    CHECK(current_cell_text("gbps", "12.5") == "12.5");
    CHECK(current_cell_text("latency_cv", "x") == "x");  // left for the row reader to name
}

TEST_CASE("a schema 1 csv reads as schema 2 cells, for --resume and compare alike") {
    const std::string old_csv =
        "path,batch,seq,dim,heads,kv_heads,head_dim,layers,threads,kv_dtype,flops,bytes,kv_bytes,reps,"
        "latency_us_median,latency_us_min,latency_us_max,gflops,gbps,roofline_pct,speedup,latency_cv\n"
        "cached,1,64,64,4,4,16,1,1,f32,1000,2000,512,5,10.0,9.5,10.5,1,2.5,,,0.25\n";
    const ReportCells cells = read_report_cells(old_csv, OutputFormat::csv);
    REQUIRE(cells.rows.size() == 1);
    CHECK(cells.rows[0].cell("gb_per_s") == "2.5");
    CHECK(cells.rows[0].cell("latency_cv_pct") == "25");
    CHECK_FALSE(cells.rows[0].cell("gbps"));
    const ResultFile compared = parse_result_file(old_csv, "old.csv");
    CHECK(compared.rows[0].cell("gb_per_s") == "2.5");
    CHECK(compared.rows[0].cell("latency_cv_pct") == "25");
}

TEST_CASE("a json lines report cut in its last line, or of an unknown schema, reads as the schema says") {
    const std::string line = R"({"schema_version":2,"path":"cached","seq":64,"samples_ns":[1000,1100]})";
    const ReportCells cells = read_report_cells(line + "\n" + line + "\n" + line.substr(0, 20), OutputFormat::jsonl);
    REQUIRE(cells.rows.size() == 2);
    CHECK(cells.rows[1].number == 2);
    CHECK(cells.rows[1].samples_ns == std::vector<double>{1000, 1100});
    const std::string unknown = R"({"schema_version":9,"path":"cached"})";
    CHECK_THROWS_WITH_AS(read_report_cells(unknown + "\n", OutputFormat::jsonl),
                         "row 1: schema_version 9 is not one this kvbench reads (1 to 2)", std::runtime_error);
    CHECK(starts_as_json_lines(line + "\n" + line + "\n"));
    CHECK_FALSE(starts_as_json_lines("{\n  \"schema_version\": 2\n}\n"));
}
