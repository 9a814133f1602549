// Summary statistics against hand-computed samples.
#include "kvbench/measure/stats.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
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

TEST_CASE("median() of unsorted values takes the middle one, or the mean of the middle two") {
    CHECK(median({5.5, 1.0, 3.25}) == 3.25);
    CHECK(median({40.0, 10.0, 30.0, 20.0}) == 25.0);
    CHECK(median({-2.0}) == -2.0);
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

// Made-up timings: `n` samples spread evenly over median · (1 ± spread), in a shuffled order.
std::vector<std::int64_t> even_spread(std::size_t n, double spread) {
    std::vector<std::int64_t> samples;
    for (std::size_t i = 0; i < n; ++i) {
        const double position = static_cast<double>((i * 37) % n) / static_cast<double>(n - 1);  // 0..1
        samples.push_back(std::llround(100'000 * (1 - spread + 2 * spread * position)));
    }
    return samples;
}

TEST_CASE("the median's uncertainty follows the spread and shrinks with the square root of the count") {
    // MdAPE 0.2 over 7 samples: t(6) = 2.4469 · 1.2533 · 1.4826 · 0.2 / √7.
    const Stats few = summarize(std::vector<std::int64_t>{80, 120, 90, 110, 100, 70, 130});
    CHECK(few.mdape == doctest::Approx(0.2));
    CHECK(few.median_uncertainty == doctest::Approx(2.4469 * 1.2533 * 1.4826 * 0.2 / std::sqrt(7.0)).epsilon(1e-3));
    // Four times the samples of the same spread: about half the uncertainty (t falls too).
    CHECK(estimated_median_uncertainty(0.05, 400) == doctest::Approx(estimated_median_uncertainty(0.05, 100) / 2).epsilon(0.01));
    CHECK(estimated_median_uncertainty(0.0, 5) == 0);
    CHECK_THROWS_AS(estimated_median_uncertainty(0.1, 1), std::invalid_argument);
}

TEST_CASE("a point is noisy when its median is uncertain, not when one repetition is an outlier") {
    // One slow outlier among steady samples: CV above 5 %, but the median barely moves.
    const Stats outlier = summarize(std::vector<std::int64_t>{100, 100, 101, 99, 100, 100, 100, 100, 100, 160});
    CHECK(outlier.cv > 0.05);
    CHECK_FALSE(is_noisy(outlier));
    // A few broadly spread samples: the median could be anywhere in a wide range.
    CHECK(is_noisy(summarize(std::vector<std::int64_t>{80, 120, 90, 110, 100, 70, 130})));
    CHECK(is_noisy(summarize(std::vector<std::int64_t>{100, 108, 93, 104, 97})));
    // The slowest steps get 5 repetitions: 1 % apart they are steady, and so is one outlier of 5.
    CHECK_FALSE(is_noisy(summarize(std::vector<std::int64_t>{1000, 1010, 990, 1005, 995})));
    CHECK_FALSE(is_noisy(summarize(std::vector<std::int64_t>{1000, 1010, 990, 1005, 1600})));
    // Steady samples, and too few samples to judge.
    CHECK_FALSE(is_noisy(summarize(std::vector<std::int64_t>{100, 101, 99, 100})));
    CHECK_FALSE(is_noisy(summarize(std::vector<std::int64_t>{50, 150})));
}

TEST_CASE("many samples of a broad but steady spread pin the median down") {
    // A cold cached step: ±15 % around the median, 300 repetitions. The CV (8.7 %) and MdAPE
    // (7.5 %) are high, but the median is known to within about 1.5 %.
    const Stats steady = summarize(even_spread(300, 0.15));
    CHECK(steady.cv > 0.05);
    CHECK(steady.mdape > 0.05);
    CHECK(steady.median_uncertainty < 0.02);
    CHECK_FALSE(is_noisy(steady));
    // The same spread over 10 repetitions is noisy.
    CHECK(is_noisy(summarize(even_spread(10, 0.15))));
}

TEST_CASE("a spread that splits in two is noisy however many samples there are") {
    // Half the repetitions 30 % slower (another process on a core half the time): the median
    // falls between the two and moves with the split. The estimate from MdAPE (13 %) over 400
    // samples says 2.4 %; the interval between order statistics says 13 %.
    std::vector<std::int64_t> split;
    for (std::size_t i = 0; i < 400; ++i) split.push_back(i % 2 == 0 ? 100'000 : 130'000);
    const Stats stats = summarize(split);
    CHECK(estimated_median_uncertainty(stats.mdape, stats.n_samples) < noisy_median_uncertainty);
    CHECK(stats.median_uncertainty == doctest::Approx(15.0 / 115.0));
    CHECK(is_noisy(stats));
    // A clear majority at one speed keeps the median there: not noisy.
    std::vector<std::int64_t> mostly_fast;
    for (std::size_t i = 0; i < 400; ++i) mostly_fast.push_back(i % 5 == 0 ? 130'000 : 100'000);
    CHECK_FALSE(is_noisy(summarize(mostly_fast)));
}
