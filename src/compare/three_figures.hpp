// A figure of a comparison (a ratio, a median in ms) to about three significant digits, the
// precision its noise allows; shared by the comparison's report and the history table.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <string>

namespace kvbench {

inline std::string three_figures(double value) {
    const double magnitude = std::abs(value);
    return fmt::format("{:.{}f}", value, magnitude >= 100 ? 1 : magnitude >= 10 ? 2 : 3);
}

}  // namespace kvbench
