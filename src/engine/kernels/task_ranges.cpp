#include "task_ranges.hpp"

#include <cassert>

namespace kvbench {

namespace {

constexpr std::uint64_t pack(std::uint64_t front, std::uint64_t back) { return front << 32 | back; }
constexpr std::uint64_t front_of(std::uint64_t word) { return word >> 32; }
constexpr std::uint64_t back_of(std::uint64_t word) { return word & 0xffffffffu; }

}  // namespace

TaskRanges::TaskRanges(std::size_t n_threads) : n_threads_(n_threads), ranges_(std::make_unique<Range[]>(n_threads)) {
    assert(n_threads >= 1);
}

void TaskRanges::reset(std::size_t n_tasks) {
    assert(n_tasks < (std::uint64_t{1} << 32));
    // The split of schedule(static): thread t takes [n·t/T, n·(t+1)/T).
    for (std::size_t t = 0; t < n_threads_; ++t) {
        ranges_[t].front_back.store(pack(n_tasks * t / n_threads_, n_tasks * (t + 1) / n_threads_),
                                    std::memory_order_relaxed);
    }
}

std::optional<std::size_t> TaskRanges::take_front(Range& range) {
    std::uint64_t word = range.front_back.load(std::memory_order_relaxed);
    while (front_of(word) < back_of(word)) {
        if (range.front_back.compare_exchange_weak(word, pack(front_of(word) + 1, back_of(word)),
                                                   std::memory_order_relaxed)) {
            return front_of(word);
        }
    }
    return std::nullopt;
}

std::optional<std::size_t> TaskRanges::take_back(Range& range) {
    std::uint64_t word = range.front_back.load(std::memory_order_relaxed);
    while (front_of(word) < back_of(word)) {
        if (range.front_back.compare_exchange_weak(word, pack(front_of(word), back_of(word) - 1),
                                                   std::memory_order_relaxed)) {
            return back_of(word) - 1;
        }
    }
    return std::nullopt;
}

std::optional<std::size_t> TaskRanges::next(std::size_t thread) {
    assert(thread < n_threads_);
    if (const std::optional<std::size_t> own = take_front(ranges_[thread])) return own;
    for (std::size_t i = 1; i < n_threads_; ++i) {
        if (const std::optional<std::size_t> taken = take_back(ranges_[(thread + i) % n_threads_])) return taken;
    }
    return std::nullopt;
}

}  // namespace kvbench
