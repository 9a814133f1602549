// decode_paged_rows(), gather_paged_rows() and gather_paged_scales(): a paged block's runs
// decoded or copied into the workspace.
#include "paged_rows.hpp"

#include "kv_decode.hpp"

#include "kvbench/engine/kv_convert.hpp"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace kvbench {

void decode_paged_rows(const GroupAttention& problem, std::size_t first_key, std::size_t n_keys, AttendWorkspace& ws) {
    assert(n_keys <= max_key_block);
    const std::size_t padded_dim = ws.padded_dim();
    for (std::size_t done = 0; done < n_keys;) {
        const RunRows run = paged_run_rows(problem, first_key + done, n_keys - done);
        decode_kv_block(problem.kv_dtype, run.keys, problem.kv_stride, run.key_scales, run.n_keys, problem.head_dim,
                        ws.decoded_keys() + done * padded_dim, padded_dim);
        decode_kv_block(problem.value_dtype, run.values, problem.kv_stride, run.value_scales, run.n_keys,
                        problem.head_dim, ws.values() + done * padded_dim, padded_dim);
        done += run.n_keys;
    }
}

RunRows gather_paged_rows(const GroupAttention& problem, std::size_t first_key, std::size_t n_keys, AttendWorkspace& ws) {
    // Keys and values may be stored in different types (--kv-dtype K/V), so rows of each size apart.
    const std::size_t key_row_bytes = kv_row_bytes(problem.kv_dtype, problem.kv_stride);
    const std::size_t value_row_bytes = kv_row_bytes(problem.value_dtype, problem.kv_stride);
    assert(n_keys <= max_key_block && key_row_bytes <= ws.padded_dim() * sizeof(float) &&
           value_row_bytes <= ws.padded_dim() * sizeof(float));
    auto* keys = reinterpret_cast<std::byte*>(ws.decoded_keys());
    auto* values = reinterpret_cast<std::byte*>(ws.values());
    for (std::size_t done = 0; done < n_keys;) {
        const RunRows run = paged_run_rows(problem, first_key + done, n_keys - done);
        std::memcpy(keys + done * key_row_bytes, run.keys, run.n_keys * key_row_bytes);
        std::memcpy(values + done * value_row_bytes, run.values, run.n_keys * value_row_bytes);
        done += run.n_keys;
    }
    const GatheredScales scales = gather_paged_scales(problem, first_key, n_keys, ws);
    return {keys, values, scales.keys, scales.values, n_keys};
}

GatheredScales gather_paged_scales(const GroupAttention& problem, std::size_t first_key, std::size_t n_keys,
                                   AttendWorkspace& ws) {
    assert(n_keys <= max_key_block);
    float* key_scales = problem.key_scales != nullptr ? ws.keys_t() : nullptr;
    float* value_scales = problem.value_scales != nullptr ? ws.keys_t() + max_key_block : nullptr;
    if (key_scales == nullptr && value_scales == nullptr) return {};
    for (std::size_t done = 0; done < n_keys;) {
        const RunRows run = paged_run_rows(problem, first_key + done, n_keys - done);
        if (key_scales != nullptr) std::copy_n(run.key_scales, run.n_keys, key_scales + done);
        if (value_scales != nullptr) std::copy_n(run.value_scales, run.n_keys, value_scales + done);
        done += run.n_keys;
    }
    return {key_scales, value_scales};
}

}  // namespace kvbench
