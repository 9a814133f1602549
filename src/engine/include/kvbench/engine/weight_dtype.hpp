// The element types a model's weight matrices can be stored in, and what one output channel
// (one row of a stored W^T) costs in each (docs/model.md, "Weight element types").
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace kvbench {

enum class WeightDtype { f32, bf16, f16, int8 };

struct WeightDtypeInfo {
    WeightDtype dtype;
    std::string_view name;     // as typed on the command line and written in results
    std::uint32_t bytes;       // per element
    // int8 keeps one f32 scale per output channel: the granularity deployed int8 weights use,
    // and one the small-M projection applies once per output, after the dot product.
    std::uint32_t scale_bytes;
};

inline constexpr std::array<WeightDtypeInfo, 4> weight_dtypes{{
    {WeightDtype::f32, "f32", 4, 0},
    {WeightDtype::bf16, "bf16", 2, 0},
    {WeightDtype::f16, "f16", 2, 0},
    {WeightDtype::int8, "int8", 1, 4},
}};

constexpr const WeightDtypeInfo& weight_dtype_info(WeightDtype dtype) {
    return weight_dtypes[static_cast<std::size_t>(dtype)];
}

// Exact names only; the CLI layer decides what else it accepts.
constexpr std::optional<WeightDtype> find_weight_dtype(std::string_view name) {
    for (const WeightDtypeInfo& info : weight_dtypes) {
        if (info.name == name) return info.dtype;
    }
    return std::nullopt;
}

// Bytes of a stored (n_out, n_in) matrix: its elements and, for int8, one scale per output.
constexpr std::uint64_t weight_matrix_bytes(WeightDtype dtype, std::uint64_t n_out, std::uint64_t n_in) {
    const WeightDtypeInfo& info = weight_dtype_info(dtype);
    return n_out * n_in * info.bytes + n_out * info.scale_bytes;
}

static_assert(weight_matrix_bytes(WeightDtype::bf16, 4, 8) == 64);
static_assert(weight_matrix_bytes(WeightDtype::int8, 4, 8) == 32 + 16);

}  // namespace kvbench
