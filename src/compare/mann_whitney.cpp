// U by mid-ranks; p from the exact null distribution (a Gaussian binomial) or Boost's normal distribution.
#include "kvbench/compare/mann_whitney.hpp"

#include <boost/math/distributions/normal.hpp>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <vector>

namespace kvbench {

namespace {

// The scipy rule for its default method: exact below 9 values on one side, unless ties
// make the exact distribution wrong.
constexpr std::size_t max_exact_size = 8;

struct Ranking {
    double base_rank_sum = 0;
    double tie_term = 0;  // sum of t³ − t over groups of t tied values
};

Ranking rank(std::span<const double> base, std::span<const double> other) {
    std::vector<std::pair<double, bool>> all;  // (value, from base)
    all.reserve(base.size() + other.size());
    for (double value : base) all.emplace_back(value, true);
    for (double value : other) all.emplace_back(value, false);
    std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    Ranking ranking;
    for (std::size_t first = 0; first < all.size();) {
        std::size_t last = first;
        while (last + 1 < all.size() && all[last + 1].first == all[first].first) ++last;
        const double t = static_cast<double>(last - first + 1);
        const double mid_rank = static_cast<double>(first + last) / 2 + 1;  // ranks start at 1
        for (std::size_t i = first; i <= last; ++i) {
            if (all[i].second) ranking.base_rank_sum += mid_rank;
        }
        ranking.tie_term += t * t * t - t;
        first = last + 1;
    }
    return ranking;
}

// P(U >= u) under the null hypothesis.
double exact_upper_tail(std::size_t m, std::size_t n, std::size_t u) {
    const std::vector<double> count = u_null_counts(m, n);
    const double total = std::accumulate(count.begin(), count.end(), 0.0);
    double tail = 0;
    for (std::size_t k = u; k <= m * n; ++k) tail += count[k];
    return tail / total;
}

}  // namespace

// The number of orderings of m and n values with U = k is the coefficient of q^k in the Gaussian
// binomial [m+n choose m]_q, built one factor (1 − q^(n+i)) / (1 − q^i) at a time; each partial
// product has integer coefficients.
std::vector<double> u_null_counts(std::size_t m, std::size_t n) {
    if (m > n) std::swap(m, n);
    std::vector<double> count(m * n + m + 1, 0.0);  // room for the product before its division
    count[0] = 1;
    for (std::size_t i = 1; i <= m; ++i) {
        const std::size_t top = i * n + i;  // degree after multiplying by 1 − q^(n+i)
        for (std::size_t k = top; k >= n + i; --k) count[k] -= count[k - (n + i)];
        for (std::size_t k = i; k <= top; ++k) count[k] += count[k - i];
    }
    count.resize(m * n + 1);
    return count;
}

double u_sigma(double m, double n, double tie_term) {
    const double total = m + n;
    return std::sqrt(m * n / 12 * ((total + 1) - tie_term / (total * (total - 1))));
}

double pooled_tie_term(std::span<const double> base, std::span<const double> other) {
    return rank(base, other).tie_term;
}

UTest mann_whitney_u(std::span<const double> base, std::span<const double> other) {
    assert(!base.empty() && !other.empty());
    const double n1 = static_cast<double>(base.size());
    const double n2 = static_cast<double>(other.size());
    const Ranking ranking = rank(base, other);
    UTest test;
    test.u = ranking.base_rank_sum - n1 * (n1 + 1) / 2;
    const double u_max = std::max(test.u, n1 * n2 - test.u);  // the two-sided test looks at the larger tail

    const bool small = std::min(base.size(), other.size()) <= max_exact_size;
    if (small && ranking.tie_term == 0) {
        test.exact = true;
        test.p_value = std::min(1.0, 2 * exact_upper_tail(base.size(), other.size(), static_cast<std::size_t>(u_max)));
        return test;
    }
    const double sigma = u_sigma(n1, n2, ranking.tie_term);
    if (sigma == 0) return test;  // every value tied: no evidence of a difference, p = 1
    const double z = (u_max - n1 * n2 / 2 - 0.5) / sigma;  // 0.5: continuity correction
    const boost::math::normal_distribution<double> normal;
    test.p_value = std::min(1.0, 2 * boost::math::cdf(boost::math::complement(normal, z)));
    return test;
}

}  // namespace kvbench
