// A small seeded generator whose stream is the same on every platform and standard library.
#pragma once

#include <cstdint>
#include <span>

namespace kvbench {

// SplitMix64 (Steele, Lea, Flood 2014): std::uniform_real_distribution is not
// specified bit-for-bit across standard libraries, and "same seed, same output"
// must hold wherever kvbench is built.
class Rng {
public:
    explicit Rng(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next_u64();
    // Uniform in [-1, 1), from the top 24 bits so every value is an exact float.
    float next_symmetric();
    // Skips n draws in O(1), as if next_u64 had been called n times: SplitMix64's state only
    // advances by a constant per draw.
    void discard(std::uint64_t n);

private:
    std::uint64_t state_;
};

// Fills `values` with uniform samples in [-scale, scale).
void fill_uniform(Rng& rng, std::span<float> values, float scale);

}  // namespace kvbench
