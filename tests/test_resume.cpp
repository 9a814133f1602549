// --resume's matching on hand-built saved rows: reused, kept aside, dropped with a warning, or refused.
#include "kvbench/engine/config.hpp"
#include "kvbench/report/resume.hpp"
#include "said.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace kvbench;

namespace {

Environment this_build() {
    Environment env;
    env.tool_version = "0.1.0";
    env.git_commit = "abc1234";
    return env;
}

GridPoint point_at(std::size_t seq) {
    ModelConfig config;
    config.seq_len = seq;
    config.model_dim = 8;
    config.n_heads = 2;
    config.n_kv_heads = 1;
    return {config, 1};
}

// The rows a run with `options` saved for `point`, by this build.
std::vector<SavedRow> saved_rows(const GridPoint& point, const RunOptions& options) {
    PointMeasurement measured;
    measured.cached = PathMeasurement{{1000, 1100, 1200}, {}, {}};
    if (options.run_uncached) measured.uncached = PathMeasurement{{4000, 4100, 4200}, {}, {}};
    std::vector<SavedRow> saved;
    for (const ResultRow& row : make_result_rows(point, measured, options, nullptr, this_build())) {
        saved.push_back({row, "0.1.0", "abc1234"});
    }
    return saved;
}

using kvbench::test::Said;

}  // namespace

TEST_CASE("rows measured the same way are reused, and rows of points outside the grid kept aside") {
    RunOptions options;
    std::vector<SavedRow> saved = saved_rows(point_at(16), options);
    const std::vector<SavedRow> elsewhere = saved_rows(point_at(64), options);
    saved.insert(saved.end(), elsewhere.begin(), elsewhere.end());
    Said said;
    const GridRows rows = match_saved_rows(saved, {point_at(16), point_at(32)}, options, this_build(), said.messages(), "run.csv");
    CHECK(rows.by_point[0].size() == 2);
    CHECK(rows.by_point[1].empty());
    CHECK(rows.other_rows.size() == 2);
    CHECK(said.warnings.empty());
}

TEST_CASE("resuming over rows of another repetition policy is refused, naming both") {
    RunOptions before;
    before.n_reps = 5;
    RunOptions now = before;
    now.n_reps = 6;
    Said said;
    try {
        match_saved_rows(saved_rows(point_at(16), before), {point_at(16)}, now, this_build(), said.messages(), "run.csv");
        FAIL("a resume that would replace rows of another policy was not refused");
    } catch (const ConfigError& error) {
        const std::string message = error.what();
        CHECK(message.rfind("--resume: 2 rows of run.csv measured these points otherwise (reps=5 warmup=3, this run "
                            "reps=6 warmup=3): resuming would replace them",
                            0) == 0);
    }
}

TEST_CASE("resuming over another cache state, a missing --verify or a path left out is refused") {
    RunOptions cold;
    RunOptions warm = cold;
    warm.cold_cache = false;
    Said said;
    const auto refusal = [&](const std::vector<SavedRow>& saved, const RunOptions& now) {
        try {
            match_saved_rows(saved, {point_at(16)}, now, this_build(), said.messages(), "run.csv");
        } catch (const ConfigError& error) {
            return std::string(error.what());
        }
        return std::string();
    };
    CHECK(refusal(saved_rows(point_at(16), cold), warm).find("(a cold cache, this run warm)") != std::string::npos);
    RunOptions verify = cold;
    verify.verify = true;
    CHECK(refusal(saved_rows(point_at(16), cold), verify).find("(without --verify)") != std::string::npos);
    RunOptions cached_only = cold;
    cached_only.run_uncached = false;
    CHECK(refusal(saved_rows(point_at(16), cold), cached_only)
              .find("1 row of run.csv measured these points otherwise (the uncached path, which this run leaves out)") !=
          std::string::npos);
}

TEST_CASE("rows of another build are dropped with a warning, not refused") {
    RunOptions options;
    std::vector<SavedRow> saved = saved_rows(point_at(16), options);
    for (SavedRow& row : saved) row.git_commit = "0000000";
    Said said;
    const GridRows rows = match_saved_rows(saved, {point_at(16)}, options, this_build(), said.messages(), "run.csv");
    CHECK(rows.by_point[0].empty());
    REQUIRE(said.warnings.size() == 1);
    CHECK(said.warnings[0].find("not by this build") != std::string::npos);
}
