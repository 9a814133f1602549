// The contexts of a ragged batch (docs/model.md, "Ragged batches"): a pattern laid over the
// batch (--seq-lens) or a seeded distribution between two bounds (--seq-dist).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kvbench {

enum class SeqDistKind { uniform, lognormal };

// --seq-dist KIND:LO:HI.
struct SeqDist {
    SeqDistKind kind = SeqDistKind::uniform;
    std::uint32_t low = 1;   // LO, the shortest context drawn
    std::uint32_t high = 1;  // HI, the longest

    bool operator==(const SeqDist&) const = default;
};

// Largest context --seq-lens and --seq-dist accept, as --seq.
inline constexpr std::uint32_t max_ragged_seq_len = std::uint32_t{1} << 30;

// "uniform:LO:HI" or "lognormal:LO:HI". Throws ConfigError naming --seq-dist, the text and the
// rule: an unknown kind, a bound that is not a whole number from 1 to max_ragged_seq_len, LO > HI.
SeqDist parse_seq_dist(const std::string& text);

// n_batch contexts in [low, high], the same for the same seed on every platform; the first k of
// a larger batch are those of a batch of k. uniform: every whole number equally likely.
// lognormal: exp of a normal whose mean is the log of the bounds' geometric mean and whose
// standard deviation a quarter of the log of HI/LO (the bounds at two deviations), rounded and
// clamped to the bounds: many short sequences and a few long ones, as serving traffic has.
std::vector<std::uint32_t> draw_seq_lens(const SeqDist& dist, std::size_t n_batch, std::uint64_t seed);

// --seq-lens' pattern repeated over n_batch sequences. Throws ConfigError naming --seq-lens
// unless the pattern's length divides n_batch (each context then holds the same share).
std::vector<std::uint32_t> repeat_seq_lens(const std::vector<std::uint32_t>& pattern, std::size_t n_batch);

}  // namespace kvbench
