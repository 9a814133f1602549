// checked_mul() and checked_add(): sizes in elements or bytes that throw instead of wrapping past 2^64.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <stdexcept>

namespace kvbench {

// A buffer size that does not fit in std::size_t. The memory budget (measure/budget.hpp) turns
// it into a ConfigError naming the point.
class SizeOverflow : public std::overflow_error {
public:
    SizeOverflow() : std::overflow_error("a buffer size overflows 64 bits") {}
};

inline std::size_t checked_mul(std::size_t a, std::size_t b) {
    std::size_t product = 0;
    if (__builtin_mul_overflow(a, b, &product)) throw SizeOverflow();
    return product;
}

inline std::size_t checked_add(std::size_t a, std::size_t b) {
    std::size_t sum = 0;
    if (__builtin_add_overflow(a, b, &sum)) throw SizeOverflow();
    return sum;
}

// The product of all factors, checked at every step.
inline std::size_t checked_product(std::initializer_list<std::size_t> factors) {
    std::size_t product = 1;
    for (std::size_t factor : factors) product = checked_mul(product, factor);
    return product;
}

}  // namespace kvbench
