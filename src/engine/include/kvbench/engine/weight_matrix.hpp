// WeightMatrix: one stored weight matrix W^T (n_out, n_in) in its element type, and WeightView,
// what the projections read (docs/model.md, "Weight element types").
#pragma once

#include "kvbench/engine/page_aligned.hpp"
#include "kvbench/engine/weight_dtype.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace kvbench {

// Where a stored (n_out, n_in) row-major matrix lives, and in which element type. A plain float
// pointer converts to an f32 view, so code that projects with f32 weights reads as before.
struct WeightView {
    const void* elements = nullptr;  // (n_out, n_in) elements of dtype
    const float* scales = nullptr;   // int8 only: (n_out) floats, output o's elements times scales[o]
    WeightDtype dtype = WeightDtype::f32;

    constexpr WeightView() = default;
    constexpr WeightView(const float* f32_elements) : elements(f32_elements) {}  // NOLINT: an f32 matrix
    constexpr WeightView(const void* elements_, const float* scales_, WeightDtype dtype_)
        : elements(elements_), scales(scales_), dtype(dtype_) {}

    // Rows [first_row, ...) of the same matrix, whose rows are n_in wide.
    WeightView rows_from(std::size_t first_row, std::size_t n_in) const;
    // Element (row, col) as the f32 value it stands for: the scalar definition every kernel's
    // conversion must reproduce (bf16 and f16 exactly, int8 as q · scale).
    float at(std::size_t row, std::size_t col, std::size_t n_in) const;
    // Row `row`'s n_in values in f32 (the dequantised row; int8 times its scale).
    void load_row(std::size_t row, std::size_t n_in, float* out) const;
};

class WeightMatrix {
public:
    WeightMatrix() = default;
    // values (n_out, n_in) floats stored as dtype: bf16 and f16 rounded to nearest even, int8
    // with one scale per output row, max |row| / 127 (kv_convert.hpp's quantize_int8).
    // Requires: values.size() == n_out · n_in.
    WeightMatrix(WeightDtype dtype, std::size_t n_out, std::size_t n_in, std::span<const float> values);

    WeightDtype dtype() const { return dtype_; }
    std::size_t n_out() const { return n_out_; }
    std::size_t n_in() const { return n_in_; }
    std::size_t size() const { return n_out_ * n_in_; }  // elements
    bool empty() const { return size() == 0; }
    WeightView view() const { return {elements_.data(), scales_.empty() ? nullptr : scales_.data(), dtype_}; }
    // Rows [first_row, n_out) of the matrix.
    WeightView rows_from(std::size_t first_row) const { return view().rows_from(first_row, n_in_); }
    // The f32 values it stands for, (n_out, n_in) floats.
    std::vector<float> to_f32() const;

    // weight_matrix_bytes(dtype, n_out, n_in): its elements and, for int8, its scales.
    std::size_t bytes() const;
    static std::size_t bytes_for(WeightDtype dtype, std::size_t n_out, std::size_t n_in);
    // The allocations a cold step evicts: the elements, and the scales when there are any.
    std::span<const std::byte> element_storage() const { return {elements_.data(), elements_.size()}; }
    std::span<const std::byte> scale_storage() const {
        return std::as_bytes(std::span<const float>(scales_.data(), scales_.size()));
    }

private:
    WeightDtype dtype_ = WeightDtype::f32;
    std::size_t n_out_ = 0;
    std::size_t n_in_ = 0;
    PageAlignedVector<std::byte> elements_;  // (n_out, n_in) elements of dtype_
    PageAlignedVector<float> scales_;        // int8: (n_out) floats; else empty
};

}  // namespace kvbench
