// TaskRanges: tasks [0, n) dealt out as one contiguous range per thread, as schedule(static)
// deals them, with a thread that runs out taking single tasks from the back of another's range.
// Owned by DecodeAttentionScratch, sized once, reset by every attend_decode call.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

namespace kvbench {

// Why not OpenMP's schedules: schedule(static) makes the step wait for the slower thread, and
// on a shared host one core often runs slower than the other for a while; schedule(dynamic, 1)
// balances, but alternates the tasks between threads, so each thread's reads of the KV cache
// restart at every task, which cost time where the cores ran even
// (bench/journal/2026-12-02-attention-task-ranges.md). Here each thread walks its own range
// front to back, one stream, and only the tail of the work moves.
class TaskRanges {
public:
    // Requires: n_threads >= 1. No task until reset().
    explicit TaskRanges(std::size_t n_threads);
    // Bytes the constructor allocates for n_threads threads.
    static std::size_t bytes_for(std::size_t n_threads) { return n_threads * sizeof(Range); }
    std::size_t bytes() const { return bytes_for(n_threads_); }

    // Deals tasks [0, n_tasks) out afresh. Not while a thread calls next(). Requires: n_tasks < 2^32.
    void reset(std::size_t n_tasks);

    // The next task for thread (< n_threads): the front of its own range, else the back of the
    // first other range, from thread + 1 on, that still has one; none once every task is taken.
    // Safe to call from all threads at once; every task is returned exactly once.
    std::optional<std::size_t> next(std::size_t thread);

private:
    // A range [front, back) packed in one word (front in the high half), so that the owner's
    // front and a thief's back move by compare-and-swap without a lock. On a line of its own:
    // the owner updates it at every task.
    struct alignas(64) Range {
        std::atomic<std::uint64_t> front_back{0};
    };
    std::optional<std::size_t> take_front(Range& range);
    std::optional<std::size_t> take_back(Range& range);

    std::size_t n_threads_;
    std::unique_ptr<Range[]> ranges_;
};

}  // namespace kvbench
