// The element types a KV cache can be stored in, and what one cached vector costs in each
// (docs/model.md, "KV-cache element types"). Shared by the memory planner, which plans every
// type, and the engine, which stores the ones marked stored_by_engine.
#pragma once

#include "kvbench/engine/ascii_case.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kvbench {

// fp8 is the planner's unscaled 8-bit float of either kind; the engine stores e4m3 and e5m2,
// and sweep and generate read `--kv-dtype fp8` as e4m3 (docs/model.md, "KV-cache element types").
enum class KvDtype { f32, f16, bf16, fp8, int8, int4, e4m3, e5m2, q8_0, q4_0 };

struct KvDtypeInfo {
    KvDtype dtype;
    std::string_view name;      // as typed on the command line and written in results
    std::uint32_t bits;         // per element
    // Integer types keep one f32 scale per cached vector (one token of one KV head, head_dim
    // elements), the granularity a decoder can quantise at as it appends a token.
    // Block types (q8_0, q4_0) instead keep one f16 scale per block of block_values elements,
    // stored in the block ahead of its elements, as llama.cpp lays them out.
    std::uint32_t scale_bytes;
    std::uint32_t block_values;  // 0: no blocks (one scale per vector, or none)
    bool stored_by_engine;       // false: planned by `kvbench memory` only
};

inline constexpr std::size_t kv_block_values = 32;

inline constexpr std::array<KvDtypeInfo, 10> kv_dtypes{{
    {KvDtype::f32, "f32", 32, 0, 0, true},
    {KvDtype::f16, "f16", 16, 0, 0, true},
    {KvDtype::bf16, "bf16", 16, 0, 0, true},
    {KvDtype::fp8, "fp8", 8, 0, 0, false},
    {KvDtype::int8, "int8", 8, 4, 0, true},
    {KvDtype::int4, "int4", 4, 4, 0, false},
    {KvDtype::e4m3, "e4m3", 8, 0, 0, true},
    {KvDtype::e5m2, "e5m2", 8, 0, 0, true},
    {KvDtype::q8_0, "q8_0", 8, 2, kv_block_values, true},
    {KvDtype::q4_0, "q4_0", 4, 2, kv_block_values, true},
}};

constexpr const KvDtypeInfo& kv_dtype_info(KvDtype dtype) {
    return kv_dtypes[static_cast<std::size_t>(dtype)];
}

// Exact names only ("f16", not "F16" or "half"): the CLI layer decides what else it accepts.
constexpr std::optional<KvDtype> find_kv_dtype(std::string_view name) {
    // In any case, as every other choice on the command line is: INT8 is int8, Q8_0 q8_0.
    for (const KvDtypeInfo& info : kv_dtypes) {
        if (equal_ignoring_case(info.name, name)) return info.dtype;
    }
    return std::nullopt;
}

// The types of a cache's keys and of its values: one type unless --kv-dtype K/V sets them apart.
struct KvDtypePair {
    KvDtype key = KvDtype::f32;
    KvDtype value = KvDtype::f32;
    constexpr KvDtypePair() = default;
    constexpr KvDtypePair(KvDtype both) : key(both), value(both) {}  // NOLINT: one type is a pair
    constexpr KvDtypePair(KvDtype keys, KvDtype values) : key(keys), value(values) {}
    bool operator==(const KvDtypePair&) const = default;
};

// The name of a cache's types as typed and written: "q8_0", or "q8_0/q4_0" for keys and values apart.
inline std::string kv_dtype_name(KvDtype keys, KvDtype values) {
    std::string name(kv_dtype_info(keys).name);
    if (values != keys) {
        name.push_back('/');
        name.append(kv_dtype_info(values).name);
    }
    return name;
}

// Bytes that n elements take in a cached row: whole bytes of elements, and for a block type
// whole blocks with their scales; a partial last block (n not a multiple of 32) is stored as a
// whole one, zero past n. int8's and int4's per-vector scale is kept apart (not counted here).
constexpr std::uint64_t kv_row_bytes(KvDtype dtype, std::uint64_t n) {
    const KvDtypeInfo& info = kv_dtype_info(dtype);
    if (info.block_values == 0) return (n * info.bits + 7) / 8;
    const std::uint64_t blocks = (n + info.block_values - 1) / info.block_values;
    return blocks * (info.block_values * info.bits / 8 + info.scale_bytes);
}

// Bytes of one cached K (or V) vector of head_dim elements, its scales included; int4 packs
// two elements per byte and rounds an odd head_dim up to whole bytes.
constexpr std::uint64_t kv_vector_bytes(KvDtype dtype, std::uint64_t head_dim) {
    const KvDtypeInfo& info = kv_dtype_info(dtype);
    return kv_row_bytes(dtype, head_dim) + (info.block_values == 0 ? info.scale_bytes : 0);
}

static_assert(kv_vector_bytes(KvDtype::f16, 128) == 256);
static_assert(kv_vector_bytes(KvDtype::int8, 128) == 132);
static_assert(kv_vector_bytes(KvDtype::int4, 3) == 6);
static_assert(kv_vector_bytes(KvDtype::e4m3, 128) == 128);
static_assert(kv_vector_bytes(KvDtype::q8_0, 128) == 4 * 34);
static_assert(kv_vector_bytes(KvDtype::q4_0, 128) == 4 * 18);
static_assert(kv_vector_bytes(KvDtype::q8_0, 80) == 3 * 34);  // a partial block costs a whole one

}  // namespace kvbench
