// merge_partial_softmaxes(): the partial softmaxes of one query row, each over its own positions,
// merged into the row's attention output. Private to src/engine: the splits of attend_decode,
// the prefix and suffix of a shared prefix, the common part and tail of a multi-token step.
#pragma once

#include "kernels/attention_types.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

namespace kvbench {

// One partial softmax of one query row, as attend_group writes it (PartialSoftmax).
struct PartialRow {
    float row_max;
    float row_sum;
    const float* out;  // (head_dim) floats: Σ_t e^(s_t - row_max) · v_t
};

// Where a partial softmax of `n_rows` rows over no positions goes: it weighs nothing in the merge
// (exp(-inf - max) = 0).
inline void write_empty_partial(const PartialSoftmax& result, std::size_t n_rows, std::size_t head_dim) {
    for (std::size_t r = 0; r < n_rows; ++r) {
        std::fill_n(result.out + r * result.out_stride, head_dim, 0.0f);
        result.row_max[r] = -std::numeric_limits<float>::infinity();
        result.row_sum[r] = 0.0f;
    }
}

// dst = the parts part_at(0), ..., part_at(n_parts - 1) rescaled to one max, summed in that
// order and normalised, so the bits depend on the order of the parts only, never on which thread
// wrote which. A sink logit (null: none) is one more term of the sum with no value: it joins the
// max and the normaliser only (docs/model.md, "Attention sinks").
// part_at: std::size_t -> PartialRow. dst: (head_dim) floats.
template <class PartAt>
void merge_partial_softmaxes(std::size_t n_parts, const PartAt& part_at, const float* sink, std::size_t head_dim,
                             float* dst) {
    float global_max = sink != nullptr ? *sink : -std::numeric_limits<float>::infinity();
    for (std::size_t k = 0; k < n_parts; ++k) global_max = std::max(global_max, part_at(k).row_max);
    std::fill_n(dst, head_dim, 0.0f);
    float total = sink != nullptr ? std::exp(*sink - global_max) : 0.0f;
    for (std::size_t k = 0; k < n_parts; ++k) {
        const PartialRow part = part_at(k);
        const float weight = std::exp(part.row_max - global_max);
        total += weight * part.row_sum;
        for (std::size_t d = 0; d < head_dim; ++d) dst[d] += weight * part.out[d];
    }
    const float inv_total = 1.0f / total;
    for (std::size_t d = 0; d < head_dim; ++d) dst[d] *= inv_total;
}

}  // namespace kvbench
