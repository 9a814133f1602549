// NowNs: the monotonic clock a measurement reads, steady_clock's unless a test fakes it.
#pragma once

#include <cstdint>

namespace kvbench {

// Nanoseconds from a fixed origin, never decreasing.
using NowNs = std::int64_t (*)();

// std::chrono::steady_clock in nanoseconds.
std::int64_t steady_now_ns();

}  // namespace kvbench
