// A sweep's rows by grid point, and the speedups that need rows of other points.
#include "kvbench/report/grid_rows.hpp"

namespace kvbench {

std::vector<ResultRow> GridRows::all() const {
    std::vector<ResultRow> rows;
    for (const std::vector<ResultRow>& point_rows : by_point) rows.insert(rows.end(), point_rows.begin(), point_rows.end());
    rows.insert(rows.end(), other_rows.begin(), other_rows.end());
    fill_speedups_across_kv_dtypes(rows);
    return rows;
}

std::vector<ResultRow> GridRows::point_rows(std::size_t i) const {
    std::vector<ResultRow> rows = by_point[i];
    const std::size_t n_own = rows.size();
    for (const std::vector<ResultRow>& others : by_point) {
        for (const ResultRow& row : others) {
            if (row.path == DecodePath::uncached) rows.push_back(row);
        }
    }
    fill_speedups_across_kv_dtypes(rows);
    rows.resize(n_own);
    return rows;
}

}  // namespace kvbench
