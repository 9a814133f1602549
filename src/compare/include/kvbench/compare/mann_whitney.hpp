// The Mann–Whitney U test (Wilcoxon rank-sum) of two samples: U by ranking, p from Boost.Math.
#pragma once

#include <span>

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

}  // namespace kvbench
