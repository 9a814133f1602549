// How much, not only whether: the Hodges–Lehmann shift between two samples and its distribution-free confidence interval.
#pragma once

#include <cstddef>
#include <span>

namespace kvbench {

struct ShiftInterval {
    double shift = 0;          // Hodges–Lehmann: the median of every difference other − base
    double low = 0;            // [low, high] holds the true shift with at least `confidence`
    double high = 0;
    double confidence = 0.95;  // asked for: 1 − alpha
    double achieved = 0.95;    // what the interval's order statistics give (at least `confidence`, unless
                               // the samples are too small to reach it: then its most, the whole range)
    bool exact = false;        // from U's exact distribution, else its normal approximation
};

// The shift of `other` against `base` as R's wilcox.test(other, base, conf.int = TRUE) computes it
// (docs/compare.md#how-much-the-shift-and-its-interval): the estimate is the median of the m·n
// differences; the interval runs from the k-th smallest difference to the k-th largest, k the
// (alpha/2)-quantile of U under the null hypothesis (at least 1), from the exact distribution when
// both samples have fewer than 50 values and there are no ties, else k = floor(m·n/2 − z·σ + 1/2)
// with the tie-corrected σ of the U test (R then inverts the test numerically; the two agree to
// an order statistic).
// Requires: base and other not empty; 0 < confidence < 1.
ShiftInterval hodges_lehmann(std::span<const double> base, std::span<const double> other, double confidence);

}  // namespace kvbench
