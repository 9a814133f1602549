// The log-log fit a·N^k: exact power laws give k back; noise gives a bounded error; degenerate input gives nothing.
#include "kvbench/measure/growth_fit.hpp"

#include "kvbench/engine/rng.hpp"
#include "kvbench/report/growth_table.hpp"
#include "kvbench/engine/cost_model.hpp"
#include "kvbench/report/report.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

using namespace kvbench;

namespace {

// A warm, single-threaded row of these samples, built as the sweep builds its rows.
ResultRow warm_row(DecodePath path, const ModelConfig& config, std::vector<std::int64_t> samples_ns) {
    RunOptions options;
    options.cold_cache = false;
    return make_result_row(path, GridPoint{config, 1}, PathMeasurement{std::move(samples_ns), {}, {}},
                           step_cost(config, path), options, nullptr, Environment{}, std::nullopt);
}

}  // namespace

TEST_CASE("an exact power law is recovered: k, a, zero residual") {
    for (const double k : {0.0, 0.5, 1.0, 1.7, 2.0}) {
        std::vector<double> n, t;
        for (double x = 128; x <= 8192; x *= 2) {
            n.push_back(x);
            t.push_back(3.5 * std::pow(x, k));
        }
        const auto fit = fit_growth(n, t);
        REQUIRE(fit);
        CHECK(fit->exponent == doctest::Approx(k).epsilon(1e-9));
        CHECK(fit->coefficient == doctest::Approx(3.5).epsilon(1e-9));
        CHECK(fit->rms_log_residual < 1e-9);
        CHECK(fit->exponent_stderr < 1e-9);
        CHECK(fit->n_points == 7);
        CHECK(fit->min_n == 128);
        CHECK(fit->max_n == 8192);
    }
}

TEST_CASE("multiplicative noise of ±10 % leaves k within a few standard errors, and the error reports it") {
    Rng rng(42);
    std::vector<double> n, t;
    for (double x = 100; x <= 5000; x += 50) {
        n.push_back(x);
        t.push_back(2.0 * std::pow(x, 1.3) * (1.0 + 0.1 * static_cast<double>(rng.next_symmetric())));
    }
    const auto fit = fit_growth(n, t);
    REQUIRE(fit);
    CHECK(fit->exponent_stderr > 0);
    CHECK(std::abs(fit->exponent - 1.3) < 4 * fit->exponent_stderr);
    CHECK(std::abs(fit->exponent - 1.3) < 0.05);
    // Uniform ±10 % has an RMS of about 0.1/sqrt(3) in log space.
    CHECK(fit->rms_log_residual > 0.02);
    CHECK(fit->rms_log_residual < 0.1);
}

TEST_CASE("from_n fits only the tail: a curve that bends is fitted where its asymptote dominates") {
    // t = N·D + N² with D = 1000: k near 1 below D, near 2 far above it.
    std::vector<double> n, t;
    for (double x = 10; x <= 1e6; x *= 2) {
        n.push_back(x);
        t.push_back(x * 1000 + x * x);
    }
    const auto whole = fit_growth(n, t);
    const auto tail = fit_growth(n, t, 1e5);
    REQUIRE(whole);
    REQUIRE(tail);
    CHECK(tail->min_n >= 1e5);
    CHECK(tail->exponent > whole->exponent);
    CHECK(tail->exponent == doctest::Approx(2).epsilon(0.02));
    CHECK(whole->rms_log_residual > tail->rms_log_residual);
}

TEST_CASE("too few points, a single N, or a non-positive value give no fit") {
    const std::vector<double> two_n{1, 2}, two_t{1, 2};
    CHECK_FALSE(fit_growth(two_n, two_t));
    const std::vector<double> same_n{8, 8, 8}, some_t{1, 2, 3};
    CHECK_FALSE(fit_growth(same_n, some_t));
    const std::vector<double> n{1, 2, 4}, zero_t{1, 0, 3};
    CHECK_FALSE(fit_growth(n, zero_t));
    const std::vector<double> t{1, 2, 4};
    CHECK_FALSE(fit_growth(n, t, 3));  // only N = 4 left
    CHECK(fit_growth(n, t));
}

TEST_CASE("a sweep's rows give one growth fit per configuration and path with 3 or more N") {
    std::vector<ResultRow> rows;
    for (const std::size_t n : {std::size_t{128}, std::size_t{256}, std::size_t{512}, std::size_t{1024}}) {
        const double nd = static_cast<double>(n);
        for (const DecodePath path : {DecodePath::cached, DecodePath::uncached}) {
            const double k = path == DecodePath::cached ? 0.5 : 2.0;
            const auto ns = static_cast<std::int64_t>(10.0 * std::pow(nd, k));
            rows.push_back(warm_row(path, test::make_config(1, n, 64, 4, 1, 1), {ns, ns, ns}));
        }
    }
    rows.push_back(warm_row(DecodePath::cached, test::make_config(2, 64, 64, 4, 1, 1), {5}));  // one N only
    const std::optional<SummaryTable> table = growth_table(rows);
    REQUIRE(table);
    // Only the path varies between the fitted series: the rest is the caption, N in neither.
    CHECK(table->caption == "every line: B=1 D=64 H=4 L=1 G=1 (MQA), T=1, warm cache");
    REQUIRE(table->text.lines.size() == 2);
    CHECK(table->text.header[0] == "path");
    CHECK(table->text.lines[0][0] == "cached");
    CHECK(table->text.lines[0][3] == "0.50 ± 0.00");
    CHECK(table->text.lines[1][0] == "uncached");
    CHECK(table->text.lines[1][3] == "2.00 ± 0.00");
    CHECK_FALSE(growth_table(std::vector<ResultRow>(rows.end() - 1, rows.end())));
}
