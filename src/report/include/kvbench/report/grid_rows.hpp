// A sweep's rows by grid point: those --resume kept and those measured, in grid order, with their speedups.
#pragma once

#include "kvbench/report/report.hpp"

#include <cstddef>
#include <vector>

namespace kvbench {

struct GridRows {
    std::vector<std::vector<ResultRow>> by_point;  // one entry per point of the grid; empty: not (yet) measured
    std::vector<ResultRow> other_rows;             // rows of a resumed file that match no point of this grid

    // Every row, grid order first, with the speedups across kv_dtypes filled in.
    std::vector<ResultRow> all() const;
    // Point i's rows with their speedups, those of another kv_dtype's uncached row included.
    std::vector<ResultRow> point_rows(std::size_t i) const;
};

}  // namespace kvbench
