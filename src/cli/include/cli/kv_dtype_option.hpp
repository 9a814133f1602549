// --kv-dtype of `sweep` and `generate`: the element types the cached path stores K and V in.
#pragma once

#include "kvbench/engine/kv_dtype.hpp"

#include <string_view>
#include <vector>

namespace kvbench {

// "f32,f16,q8_0/q4_0" in any case, in the order written, duplicates dropped: an item is one type
// for keys and values, or K/V for keys of type K and values of type V. fp8 is read as e4m3.
// Throws ConfigError naming --kv-dtype on an empty item, an unknown type (with the nearest
// name), and int4, which `kvbench memory` plans but the engine does not store.
std::vector<KvDtypePair> parse_stored_kv_dtypes(std::string_view text);

// The --kv-dtype line of sweep's and generate's --help, which says that weights stay f32.
inline constexpr const char* kv_dtype_help =
    "Cache element types (LIST of f32, f16, bf16, int8, e4m3, e5m2, q8_0, q4_0, fp8 meaning e4m3; "
    "an item K/V, e.g. q8_0/q4_0, sets keys and values apart; int8 with one f32 scale per cached "
    "vector, q8_0 and q4_0 with one f16 scale per 32 values): K and V are stored in it and decoded "
    "inside the attention kernel; activations stay f32, weights are --weight-dtype. Rows of a "
    "reduced type report kv_rel_error against an f32 cache of the same values";

}  // namespace kvbench
