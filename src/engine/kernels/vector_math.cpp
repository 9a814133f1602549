// The vectorised exp and softmax, on the back-end of simd.hpp.
#include "vector_math.hpp"

#include "simd.hpp"

namespace kvbench {

namespace {

using namespace simd;

// row[t] = e^(row[t] - shift) for t < n; returns Σ_t row[t], summed lane-wise in a fixed order.
float exp_shifted_sum(float* row, std::size_t n, float shift) {
    const Vec s = Simd::set1(shift);
    Vec sums = Simd::zero();
    std::size_t i = 0;
    for (; i + lanes <= n; i += lanes) {
        const Vec p = Simd::exp(Simd::sub(Simd::load(row + i), s));
        Simd::store(row + i, p);
        sums = Simd::add(sums, p);
    }
    if (i < n) {
        const Simd::Mask rest = Simd::first(n - i);
        // Lanes past n load 0 and would add e^-shift: select them back to 0.
        const Vec p = Simd::select(rest, Simd::exp(Simd::sub(Simd::load(row + i, rest), s)), Simd::zero());
        Simd::store(row + i, p, rest);
        sums = Simd::add(sums, p);
    }
    return Simd::reduce_add(sums);
}


}  // namespace

void exp_polynomial(const float* x, std::size_t n, float* y) {
    std::size_t i = 0;
    for (; i + lanes <= n; i += lanes) Simd::store(y + i, Simd::exp(Simd::load(x + i)));
    if (i < n) {
        const Simd::Mask rest = Simd::first(n - i);
        Simd::store(y + i, Simd::exp(Simd::load(x + i, rest)), rest);
    }
}

void softmax_row(float* row, std::size_t n) {
    Vec maxima = Simd::set1(minus_infinity);
    std::size_t i = 0;
    for (; i + lanes <= n; i += lanes) maxima = Simd::max(maxima, Simd::load(row + i));
    if (i < n) {
        const Simd::Mask rest = Simd::first(n - i);
        maxima = Simd::max(maxima, Simd::select(rest, Simd::load(row + i, rest), Simd::set1(minus_infinity)));
    }
    const float inv_sum = 1.0f / exp_shifted_sum(row, n, Simd::reduce_max(maxima));
    const Vec factor = Simd::set1(inv_sum);
    for (i = 0; i + lanes <= n; i += lanes) Simd::store(row + i, Simd::mul(Simd::load(row + i), factor));
    if (i < n) {
        const Simd::Mask rest = Simd::first(n - i);
        Simd::store(row + i, Simd::mul(Simd::load(row + i, rest), factor), rest);
    }
}

}  // namespace kvbench
