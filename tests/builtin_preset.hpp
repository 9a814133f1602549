// A built-in model preset by name, failing the test case when there is none.
#pragma once

#include "kvbench/plan/model_preset.hpp"

#include <doctest/doctest.h>

#include <string_view>

namespace kvbench::test {

inline const ModelPreset& preset(std::string_view name) {
    const ModelPreset* found = find_preset(builtin_presets(), name);
    REQUIRE(found != nullptr);
    return *found;
}

}  // namespace kvbench::test
