// attend_decode's task schedule (src/engine/kernels/task_ranges.hpp): each thread's own
// contiguous range first, then single tasks from the back of the others'. Which thread runs a task never changes a
// result, so this checks the schedule: every task handed out exactly once, in the promised order.
#include "kernels/task_ranges.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <optional>
#include <thread>
#include <vector>

using kvbench::TaskRanges;

namespace {

// Tasks thread takes until none is left, in order.
std::vector<std::size_t> drain(TaskRanges& tasks, std::size_t thread) {
    std::vector<std::size_t> taken;
    while (const std::optional<std::size_t> task = tasks.next(thread)) taken.push_back(*task);
    return taken;
}

}  // namespace

TEST_CASE("each thread first takes its own range of schedule(static), front to back") {
    TaskRanges tasks(3);
    tasks.reset(10);  // ranges [0, 3), [3, 6), [6, 10)
    CHECK(tasks.next(0) == 0u);
    CHECK(tasks.next(1) == 3u);
    CHECK(tasks.next(2) == 6u);
    CHECK(tasks.next(0) == 1u);
    CHECK(tasks.next(2) == 7u);
    CHECK(tasks.next(1) == 4u);
}

TEST_CASE("a thread whose range is done takes the back of the next range that has tasks") {
    TaskRanges tasks(2);
    tasks.reset(8);  // [0, 4) and [4, 8)
    for (std::size_t expected = 0; expected < 4; ++expected) CHECK(tasks.next(0) == expected);
    CHECK(tasks.next(0) == 7u);  // thread 1's last task
    CHECK(tasks.next(1) == 4u);  // thread 1 still starts at its front
    CHECK(tasks.next(0) == 6u);
    CHECK(tasks.next(1) == 5u);
    CHECK_FALSE(tasks.next(0).has_value());
    CHECK_FALSE(tasks.next(1).has_value());
}

TEST_CASE("one thread alone takes every task, its range in order and then the others' from the back") {
    TaskRanges tasks(3);
    tasks.reset(7);  // [0, 2), [2, 4), [4, 7)
    CHECK(drain(tasks, 1) == std::vector<std::size_t>{2, 3, 6, 5, 4, 1, 0});
}

TEST_CASE("reset deals the tasks out afresh, as attend_decode does at every call") {
    TaskRanges tasks(2);
    tasks.reset(3);  // [0, 1) and [1, 3)
    CHECK(drain(tasks, 0) == std::vector<std::size_t>{0, 2, 1});
    tasks.reset(4);  // [0, 2) and [2, 4), whatever the last call left
    CHECK(drain(tasks, 1) == std::vector<std::size_t>{2, 3, 1, 0});
    CHECK_FALSE(tasks.next(0).has_value());
}

TEST_CASE("fewer tasks than threads, and no task at all") {
    TaskRanges few(4);
    few.reset(2);  // [0, 0), [0, 1), [1, 1), [1, 2)
    CHECK(few.next(0) == 0u);  // from thread 1's range: its own is empty
    CHECK(few.next(2) == 1u);  // from thread 3's
    CHECK_FALSE(few.next(3).has_value());
    TaskRanges none(2);
    none.reset(0);
    CHECK_FALSE(none.next(0).has_value());
    CHECK_FALSE(none.next(1).has_value());
}

TEST_CASE("threads drawing at once run every task exactly once") {
    constexpr std::size_t n_tasks = 20000;
    for (const std::size_t n_threads : {2u, 3u, 8u}) {
        INFO("threads=" << n_threads);
        TaskRanges tasks(n_threads);
        tasks.reset(n_tasks);
        std::vector<std::atomic<int>> runs(n_tasks);
        std::vector<std::thread> threads;
        for (std::size_t t = 0; t < n_threads; ++t) {
            threads.emplace_back([&, t] {
                while (const std::optional<std::size_t> task = tasks.next(t)) runs[*task].fetch_add(1);
            });
        }
        for (std::thread& thread : threads) thread.join();
        CHECK(std::all_of(runs.begin(), runs.end(), [](const std::atomic<int>& n) { return n.load() == 1; }));
    }
}

TEST_CASE("the owner's front and a thief's back meet without losing or repeating a task") {
    // Thread 0 takes its own half, steals one task from the back of thread 1's range, and waits
    // until thread 1, started only then, has taken its front's first task; from there both move
    // the same range's ends at once until they meet. Events, not timing: on one core as on many
    // both ends move.
    constexpr std::size_t n_tasks = 400000;
    TaskRanges tasks(2);
    tasks.reset(n_tasks);
    std::vector<std::atomic<int>> runs(n_tasks);
    std::atomic<std::size_t> taken_by_thief{0};
    std::atomic<bool> owner_started{false};
    std::thread thief([&] {
        while (const std::optional<std::size_t> task = tasks.next(0)) {
            runs[*task].fetch_add(1);
            if (taken_by_thief.fetch_add(1, std::memory_order_release) + 1 == n_tasks / 2 + 1) {
                while (!owner_started.load(std::memory_order_acquire)) std::this_thread::yield();
            }
        }
    });
    while (taken_by_thief.load(std::memory_order_acquire) < n_tasks / 2 + 1) std::this_thread::yield();
    std::size_t owner_taken = 0;
    while (const std::optional<std::size_t> task = tasks.next(1)) {
        runs[*task].fetch_add(1);
        ++owner_taken;
        owner_started.store(true, std::memory_order_release);
    }
    owner_started.store(true, std::memory_order_release);  // the thief may have taken every task
    thief.join();
    CHECK(std::all_of(runs.begin(), runs.end(), [](const std::atomic<int>& n) { return n.load() == 1; }));
    CHECK(owner_taken + taken_by_thief.load() == n_tasks);
    CHECK(owner_taken > 0);                         // the front moved ...
    CHECK(taken_by_thief.load() > n_tasks / 2);     // ... and so did the back
}
