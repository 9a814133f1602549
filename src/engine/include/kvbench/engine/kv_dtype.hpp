// The element types a KV cache can be stored in, and what one cached vector costs in each
// (docs/model.md, "KV-cache element types"). Shared by the memory planner, which plans every
// type, and the engine, which stores the ones marked stored_by_engine.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace kvbench {

enum class KvDtype { f32, f16, bf16, fp8, int8, int4 };

struct KvDtypeInfo {
    KvDtype dtype;
    std::string_view name;      // as typed on the command line and written in results
    std::uint32_t bits;         // per element
    // Integer types keep one f32 scale per cached vector (one token of one KV head, head_dim
    // elements), the granularity a decoder can quantise at as it appends a token.
    std::uint32_t scale_bytes;
    bool stored_by_engine;      // false: planned by `kvbench memory` only
};

inline constexpr std::array<KvDtypeInfo, 6> kv_dtypes{{
    {KvDtype::f32, "f32", 32, 0, true},
    {KvDtype::f16, "f16", 16, 0, true},
    {KvDtype::bf16, "bf16", 16, 0, true},
    {KvDtype::fp8, "fp8", 8, 0, false},
    {KvDtype::int8, "int8", 8, 4, true},
    {KvDtype::int4, "int4", 4, 4, false},
}};

constexpr const KvDtypeInfo& kv_dtype_info(KvDtype dtype) {
    return kv_dtypes[static_cast<std::size_t>(dtype)];
}

// Exact names only ("f16", not "F16" or "half"): the CLI layer decides what else it accepts.
constexpr std::optional<KvDtype> find_kv_dtype(std::string_view name) {
    for (const KvDtypeInfo& info : kv_dtypes) {
        if (info.name == name) return info.dtype;
    }
    return std::nullopt;
}

// Bytes of one cached K (or V) vector of head_dim elements, its scale included; int4 packs
// two elements per byte and rounds an odd head_dim up to whole bytes.
constexpr std::uint64_t kv_vector_bytes(KvDtype dtype, std::uint64_t head_dim) {
    const KvDtypeInfo& info = kv_dtype_info(dtype);
    return (head_dim * info.bits + 7) / 8 + info.scale_bytes;
}

static_assert(kv_vector_bytes(KvDtype::f16, 128) == 256);
static_assert(kv_vector_bytes(KvDtype::int8, 128) == 132);
static_assert(kv_vector_bytes(KvDtype::int4, 3) == 6);

}  // namespace kvbench
