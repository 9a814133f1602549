// exp_polynomial() and softmax_row(): the vectorised exp and softmax that both attention paths use.
#pragma once

#include <cstddef>

namespace kvbench {

// y[i] = e^x[i] for i < n, vectorised (AVX-512, AVX2 or plain loops, as compiled): Cephes'
// degree-5 polynomial on x - k·ln2, scaled by 2^k. Within 1.5e-7 relative of e^x for x in
// [-87.3, 88.3] (8.2e-8 measured); exactly 0 below -87.34, where e^x would be subnormal, and
// for -inf; e^88.38 above 88.38; NaN stays NaN. x and y may be the same array.
void exp_polynomial(const float* x, std::size_t n, float* y);

// row = softmax(row) over its n entries, vectorised; the max is subtracted first, so any
// finite logits are safe. Requires: n >= 1, row finite.
void softmax_row(float* row, std::size_t n);

}  // namespace kvbench
