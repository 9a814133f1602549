// Summary statistics against hand-computed samples.
#include "kvbench/measure/stats.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

using namespace kvbench;

TEST_CASE("an odd number of samples has the middle one as median") {
    const std::vector<std::int64_t> samples{5, 1, 3};
    const Stats s = summarize(samples);
    CHECK(s.n_samples == 3);
    CHECK(s.median_ns == 3);
    CHECK(s.min_ns == 1);
    CHECK(s.max_ns == 5);
    CHECK(s.mean_ns == 3);
    CHECK(s.stddev_ns == doctest::Approx(2.0));  // sqrt((4 + 0 + 4) / 2)
    CHECK(s.cv == doctest::Approx(2.0 / 3.0));
    CHECK(s.p90_ns == doctest::Approx(4.6));     // rank 0.9 * 2 = 1.8: 3 + 0.8 * (5 - 3)
    CHECK(s.mdape == doctest::Approx(2.0 / 3.0));  // deviations 2/3, 0, 2/3
}

TEST_CASE("an even number of samples averages the two middle ones") {
    const std::vector<std::int64_t> samples{40, 10, 30, 20};
    const Stats s = summarize(samples);
    CHECK(s.median_ns == 25);
    CHECK(s.mean_ns == 25);
    CHECK(s.stddev_ns == doctest::Approx(std::sqrt(500.0 / 3.0)));  // (225 + 25 + 25 + 225) / 3
    CHECK(s.p90_ns == doctest::Approx(37.0));   // rank 2.7: 30 + 0.7 * 10
    CHECK(s.mdape == doctest::Approx(0.4));     // deviations 0.2, 0.2, 0.6, 0.6
}

TEST_CASE("p90 interpolates between order statistics") {
    const std::vector<std::int64_t> samples{10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
    CHECK(summarize(samples).p90_ns == doctest::Approx(9.1));  // rank 8.1
}

TEST_CASE("one sample has no spread") {
    const std::vector<std::int64_t> samples{1234};
    const Stats s = summarize(samples);
    CHECK(s.median_ns == 1234);
    CHECK(s.p90_ns == 1234);
    CHECK(s.stddev_ns == 0);
    CHECK(s.cv == 0);
    CHECK(s.mdape == 0);
}

TEST_CASE("mdape ignores one outlier that the cv does not") {
    const std::vector<std::int64_t> samples{100, 100, 100, 100, 10'000};
    const Stats s = summarize(samples);
    CHECK(s.mdape == 0);
    CHECK(s.cv > 1);
}

TEST_CASE("summarizing no samples is refused") {
    CHECK_THROWS_AS(summarize(std::vector<std::int64_t>{}), std::invalid_argument);
}

TEST_CASE("a point is noisy when its spread is broad, not when one repetition is an outlier") {
    // One slow outlier among steady samples: CV above 5 %, but the median barely moves.
    const kvbench::Stats outlier = kvbench::summarize(std::vector<std::int64_t>{100, 100, 101, 99, 100, 100, 100, 100, 100, 160});
    CHECK(outlier.cv > 0.05);
    CHECK_FALSE(kvbench::is_noisy(outlier));
    // A broad spread: CV and MdAPE both high.
    const kvbench::Stats broad = kvbench::summarize(std::vector<std::int64_t>{80, 120, 90, 110, 100, 70, 130});
    CHECK(kvbench::is_noisy(broad));
    // Steady samples, and too few samples to judge.
    CHECK_FALSE(kvbench::is_noisy(kvbench::summarize(std::vector<std::int64_t>{100, 101, 99, 100})));
    CHECK_FALSE(kvbench::is_noisy(kvbench::summarize(std::vector<std::int64_t>{50, 150})));
}
