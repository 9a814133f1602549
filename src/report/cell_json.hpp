// One CellValue as JSON, and the environment block, shared by the JSON and JSON Lines writers and merge's (private to report/).
#pragma once

#include "kvbench/report/columns.hpp"

#include <nlohmann/json.hpp>

#include <variant>

namespace kvbench {

// Keeps the CSV's column order in the output, which plain nlohmann::json would sort.
using Json = nlohmann::ordered_json;

inline Json cell_json(const CellValue& cell) {
    struct Visit {
        Json operator()(std::monostate) const { return nullptr; }
        Json operator()(bool value) const { return value; }
        Json operator()(std::uint64_t value) const { return value; }
        Json operator()(double value) const { return value; }
        Json operator()(Microseconds value) const { return value.value; }
        Json operator()(const std::string& value) const { return value; }
    };
    return std::visit(Visit{}, cell);
}

// A JSON report's environment block (docs/csv.md#json): written by the JSON writer and by
// kvbench merge's.
Json environment_json(const Environment& env);

}  // namespace kvbench
