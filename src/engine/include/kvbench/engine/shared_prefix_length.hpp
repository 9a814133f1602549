// SharedPrefixLength: one --shared-prefix value, as `sweep`, `generate` and `memory` take it.
#pragma once

#include <cstddef>

namespace kvbench {

// P positions, or a percentage of the shortest context it is laid into (docs/model.md,
// "Shared prefixes"); 0 shares nothing.
struct SharedPrefixLength {
    std::size_t value = 0;
    bool percent = false;  // value % of the shortest context, rounded down
    std::size_t positions_at(std::size_t shortest) const { return percent ? shortest * value / 100 : value; }
    bool operator==(const SharedPrefixLength&) const = default;
};

}  // namespace kvbench
