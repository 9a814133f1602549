// steady_now_ns: the clock every measurement reads unless a test fakes it.
#include "kvbench/measure/clock.hpp"

#include <chrono>

namespace kvbench {

std::int64_t steady_now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

}  // namespace kvbench
