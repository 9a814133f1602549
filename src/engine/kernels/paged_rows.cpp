// contiguous_run(), decode_paged_rows(), gather_paged_rows() and gather_paged_scales(): the block
// table's arithmetic, once.
#include "paged_rows.hpp"

#include "kv_decode.hpp"

#include "kvbench/engine/kv_convert.hpp"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace kvbench {

GroupAttention contiguous_run(const GroupAttention& problem, std::size_t first_key, std::size_t max_keys) {
    GroupAttention run = problem;
    run.block_table = nullptr;
    run.block_positions = 0;
    run.first_slot = 0;
    if (first_key >= problem.n_ctx) {
        run.n_ctx = 0;
        return run;
    }
    std::size_t row = first_key;
    std::size_t n_keys = std::min(max_keys, problem.n_ctx - first_key);
    if (problem.block_table != nullptr) {
        const PagedRun where = paged_run(problem, first_key, max_keys);
        row = where.row;
        n_keys = where.n_keys;
    }
    run.keys = static_cast<const std::byte*>(problem.keys) + row * kv_row_bytes(problem.kv_dtype, problem.kv_stride);
    run.values =
        static_cast<const std::byte*>(problem.values) + row * kv_row_bytes(problem.value_dtype, problem.kv_stride);
    if (problem.key_scales != nullptr) run.key_scales = problem.key_scales + row;
    if (problem.value_scales != nullptr) run.value_scales = problem.value_scales + row;
    run.n_ctx = n_keys;
    return run;
}

void decode_paged_rows(const GroupAttention& problem, std::size_t first_key, std::size_t n_keys, AttendWorkspace& ws) {
    assert(n_keys <= max_key_block);
    const std::size_t padded_dim = ws.padded_dim();
    for (std::size_t done = 0; done < n_keys;) {
        const GroupAttention run = contiguous_run(problem, first_key + done, n_keys - done);
        decode_kv_block(run.kv_dtype, run.keys, run.kv_stride, run.key_scales, run.n_ctx, run.head_dim,
                        ws.decoded_keys() + done * padded_dim, padded_dim);
        decode_kv_block(run.value_dtype, run.values, run.kv_stride, run.value_scales, run.n_ctx, run.head_dim,
                        ws.values() + done * padded_dim, padded_dim);
        done += run.n_ctx;
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
