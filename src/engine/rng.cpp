// SplitMix64 and the uniform fill built on it.
#include "kvbench/engine/rng.hpp"

namespace kvbench {

namespace {
constexpr std::uint64_t golden_gamma = 0x9E3779B97F4A7C15ull;
}  // namespace

void Rng::discard(std::uint64_t n) { state_ += n * golden_gamma; }  // modulo 2^64, as next_u64 adds

std::uint64_t Rng::next_u64() {
    state_ += golden_gamma;
    std::uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

float Rng::next_symmetric() {
    const auto top24 = static_cast<std::int32_t>(next_u64() >> 40);  // [0, 2^24)
    return static_cast<float>(top24 - (1 << 23)) / static_cast<float>(1 << 23);
}

void fill_uniform(Rng& rng, std::span<float> values, float scale) {
    for (float& v : values) v = scale * rng.next_symmetric();
}

}  // namespace kvbench
