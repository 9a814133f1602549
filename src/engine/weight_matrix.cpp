// Storing f32 weights in a reduced type, and the scalar definition of reading them back.
#include "kvbench/engine/weight_matrix.hpp"

#include "kvbench/engine/checked_size.hpp"
#include "kvbench/engine/kv_convert.hpp"

#include <cassert>
#include <cstring>

namespace kvbench {

WeightView WeightView::rows_from(std::size_t first_row, std::size_t n_in) const {
    const auto* base = static_cast<const std::byte*>(elements);
    return {base + first_row * n_in * weight_dtype_info(dtype).bytes,
            scales != nullptr ? scales + first_row : nullptr, dtype};
}

float WeightView::at(std::size_t row, std::size_t col, std::size_t n_in) const {
    const std::size_t i = row * n_in + col;
    switch (dtype) {
        case WeightDtype::bf16: return decode_bf16(static_cast<const std::uint16_t*>(elements)[i]);
        case WeightDtype::f16: return decode_f16(static_cast<const std::uint16_t*>(elements)[i]);
        case WeightDtype::int8: return static_cast<float>(static_cast<const std::int8_t*>(elements)[i]) * scales[row];
        default: return static_cast<const float*>(elements)[i];
    }
}

void WeightView::load_row(std::size_t row, std::size_t n_in, float* out) const {
    for (std::size_t col = 0; col < n_in; ++col) out[col] = at(row, col, n_in);
}

WeightMatrix::WeightMatrix(WeightDtype dtype, std::size_t n_out, std::size_t n_in, std::span<const float> values)
    : dtype_(dtype), n_out_(n_out), n_in_(n_in),
      elements_(checked_mul(checked_mul(n_out, n_in), std::size_t{weight_dtype_info(dtype).bytes})) {
    assert(values.size() == n_out * n_in);
    switch (dtype) {
        case WeightDtype::f32: std::memcpy(elements_.data(), values.data(), elements_.size()); break;
        case WeightDtype::bf16:
        case WeightDtype::f16: {
            auto* out = reinterpret_cast<std::uint16_t*>(elements_.data());
            for (std::size_t i = 0; i < values.size(); ++i) {
                out[i] = dtype == WeightDtype::bf16 ? encode_bf16(values[i]) : encode_f16(values[i]);
            }
            break;
        }
        case WeightDtype::int8: {
            scales_.resize(n_out);
            auto* out = reinterpret_cast<std::int8_t*>(elements_.data());
            for (std::size_t o = 0; o < n_out; ++o) scales_[o] = quantize_int8(values.data() + o * n_in, n_in, out + o * n_in);
            break;
        }
    }
}

std::vector<float> WeightMatrix::to_f32() const {
    std::vector<float> values(size());
    const WeightView w = view();
    for (std::size_t o = 0; o < n_out_; ++o) w.load_row(o, n_in_, values.data() + o * n_in_);
    return values;
}

std::size_t WeightMatrix::bytes() const { return elements_.size() + scales_.size() * sizeof(float); }

std::size_t WeightMatrix::bytes_for(WeightDtype dtype, std::size_t n_out, std::size_t n_in) {
    const WeightDtypeInfo& info = weight_dtype_info(dtype);
    return checked_add(checked_product({n_out, n_in, std::size_t{info.bytes}}), checked_mul(n_out, std::size_t{info.scale_bytes}));
}

}  // namespace kvbench
