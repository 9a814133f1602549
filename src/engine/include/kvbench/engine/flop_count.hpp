// FlopCount: FLOPs a kernel reports having executed, so tests can hold execution to docs/counting.md.
#pragma once

#include <cstdint>

namespace kvbench {

// FLOPs of a kernel: `useful` is what docs/counting.md counts (the causal triangle); `executed`
// adds the masked products that a tile straddling the diagonal computes anyway.
struct FlopCount {
    std::uint64_t useful = 0;
    std::uint64_t executed = 0;
    FlopCount& operator+=(const FlopCount& other) {
        useful += other.useful;
        executed += other.executed;
        return *this;
    }
};

}  // namespace kvbench
