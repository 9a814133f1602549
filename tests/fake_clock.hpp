// A clock for the tests of timed loops: 1 ns passes at every reading, so the number of
// readings, never the machine's speed, decides when a loop ends.
#pragma once

#include <atomic>
#include <cstdint>

namespace kvbench::test {

inline std::int64_t fake_ns = 0;
inline std::int64_t fake_now_ns() { return ++fake_ns; }
// A stop flag that is never raised.
inline const std::atomic<bool> never_stop{false};

}  // namespace kvbench::test
