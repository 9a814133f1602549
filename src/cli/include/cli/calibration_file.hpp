// --calibrate FILE: this machine's efficiencies from a sweep or generate report it measured
// (docs/planning.md, "Efficiency").
#pragma once

#include "kvbench/plan/calibration.hpp"

#include <string>
#include <string_view>

namespace kvbench {

// The median roofline fraction per path of the report's rows (CSV, JSON or JSON Lines, any
// schema report/schema.hpp reads) that carry roofline_pct, except warm rows that fit in the
// last-level cache (they ran from the cache, not from memory), and per batch the fit of the two
// streams. Cached rows of the planned `kv_dtype` are used when there are any, else every
// cached row. Throws ConfigError naming --calibrate and the file when it cannot be read, is not
// a kvbench report, or has no such row.
Calibration read_calibration(const std::string& path, std::string_view kv_dtype);

}  // namespace kvbench
