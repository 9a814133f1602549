// The Hodges–Lehmann shift: order statistics of the pairwise differences, the interval's rank from U's distribution (Boost.Math for z).
#include "kvbench/compare/shift_interval.hpp"

#include "kvbench/compare/mann_whitney.hpp"

#include <boost/math/distributions/normal.hpp>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <numeric>
#include <vector>

namespace kvbench {

namespace {

// R's rule for the exact interval: fewer than 50 values on each side, and no ties.
constexpr std::size_t exact_below = 50;

// The k-th smallest (1-based) of `values`, which it reorders.
double order_statistic(std::vector<double>& values, std::size_t k) {
    const auto at = values.begin() + static_cast<std::ptrdiff_t>(k - 1);
    std::nth_element(values.begin(), at, values.end());
    return *at;
}

// The smallest q with P(U <= q) >= p, R's qwilcox(p, m, n), and P(U <= k - 1) for the k that
// becomes: the share of orderings the interval [k-th, k-th largest] misses on one side.
std::size_t exact_rank(std::size_t m, std::size_t n, double p, double& tail_below) {
    const std::vector<double> count = u_null_counts(m, n);
    const double total = std::accumulate(count.begin(), count.end(), 0.0);
    std::size_t q = 0;
    double cumulative = count[0];
    while (q + 1 < count.size() && cumulative / total < p) cumulative += count[++q];
    const std::size_t k = std::max<std::size_t>(q, 1);  // R: "if(qu == 0) qu <- 1"
    tail_below = std::accumulate(count.begin(), count.begin() + static_cast<std::ptrdiff_t>(k), 0.0) / total;
    return k;
}

}  // namespace

ShiftInterval hodges_lehmann(std::span<const double> base, std::span<const double> other, double confidence) {
    assert(!base.empty() && !other.empty() && confidence > 0 && confidence < 1);
    const std::size_t m = other.size();
    const std::size_t n = base.size();
    const std::size_t mn = m * n;
    std::vector<double> differences;
    differences.reserve(mn);
    for (const double y : other) {
        for (const double x : base) differences.push_back(y - x);
    }
    ShiftInterval interval;
    interval.confidence = confidence;
    interval.shift = mn % 2 == 1 ? order_statistic(differences, mn / 2 + 1)
                                 : (order_statistic(differences, mn / 2) + order_statistic(differences, mn / 2 + 1)) / 2;

    const double alpha = 1 - confidence;
    const double tie_term = pooled_tie_term(base, other);
    std::size_t k = 1;
    if (m < exact_below && n < exact_below && tie_term == 0) {
        interval.exact = true;
        double tail_below = 0;
        k = exact_rank(m, n, alpha / 2, tail_below);
        interval.achieved = 1 - 2 * tail_below;
    } else {
        const boost::math::normal_distribution<double> normal;
        const double z = boost::math::quantile(boost::math::complement(normal, alpha / 2));
        const double sigma = u_sigma(static_cast<double>(m), static_cast<double>(n), tie_term);
        const double half = static_cast<double>(mn) / 2;
        const double rank = std::floor(half - z * sigma + 0.5);
        k = rank < 1 ? 1 : static_cast<std::size_t>(rank);
        // 1 − 2·P(U <= k − 1), by the same approximation with its continuity correction; every
        // value tied (σ = 0) leaves nothing to tell, and the interval is the one difference there is.
        interval.achieved = sigma > 0 ? 1 - 2 * boost::math::cdf(normal, (static_cast<double>(k) - 0.5 - half) / sigma) : 1;
    }
    k = std::min(k, (mn + 1) / 2);  // the interval never inverts
    interval.low = order_statistic(differences, k);
    interval.high = order_statistic(differences, mn + 1 - k);
    return interval;
}

}  // namespace kvbench
