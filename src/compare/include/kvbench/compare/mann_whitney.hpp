// The Mann–Whitney U test (Wilcoxon rank-sum) of two samples: U by ranking, p from Boost.Math.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace kvbench {

struct UTest {
    double u = 0;        // U of the first sample: its rank sum minus n1·(n1+1)/2, ties at mid-rank
    double p_value = 1;  // two-sided
    bool exact = false;  // p from the exact null distribution rather than the normal approximation
};

// Two-sided test that both samples come from one distribution, computed as scipy 1.10's
// mannwhitneyu(base, other) does with its defaults: the exact distribution of U when one
// sample has at most 8 values and there are no ties; otherwise the normal approximation
// with tie correction and continuity correction (docs/compare.md#the-u-test).
// Requires: base and other not empty.
UTest mann_whitney_u(std::span<const double> base, std::span<const double> other);

// The null distribution of U for samples of m and n values without ties: element k is the number
// of the C(m + n, m) orderings whose U is k, k = 0 .. m·n (as doubles: exact up to 2^53, and
// to 16 digits beyond, plenty for probabilities).
std::vector<double> u_null_counts(std::size_t m, std::size_t n);

// Tie-corrected standard deviation of U under the null hypothesis, for samples of m and n values
// whose pooled ties sum to `tie_term` (the sum of t³ − t over groups of t equal values).
double u_sigma(double m, double n, double tie_term);

// The sum of t³ − t over the groups of t equal values of both samples pooled: 0 without ties.
double pooled_tie_term(std::span<const double> base, std::span<const double> other);

}  // namespace kvbench
