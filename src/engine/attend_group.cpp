// attend_group(): the choice between the decode attention kernels, made once per shape.
#include "attend_group.hpp"

#include "kernels/attention_grouped.hpp"
#include "kernels/attention_kernel.hpp"
#include "kernels/tuning.hpp"

namespace kvbench {

GroupKernel group_kernel_for(std::size_t n_rows, std::size_t head_dim, bool paged) {
    const std::size_t min_rows = tuning.lanes.min_rows;
    const std::size_t width = lanes_kernel_width();
    if (!paged && min_rows != 0 && n_rows >= min_rows && n_rows % width == 0 && head_dim % width == 0) {
        return &attend_group_by_lanes;
    }
    return &attend_group_tiled;
}

std::uint64_t attend_group(const GroupAttention& problem, const PartialSoftmax& result, AttendWorkspace& workspace) {
    return group_kernel_for(problem.n_rows, problem.head_dim, problem.block_table != nullptr)(problem, result,
                                                                                            workspace);
}

namespace {

// Slots [t_begin, t_end) of one ring of `cache` whose first vector (of a paged cache, the pool's)
// is at keys, values and their scales, reached through `table` when paged.
GroupAttention ring_split_problem(const KvCache& cache, const void* keys, const void* values, const float* key_scales,
                                  const float* value_scales, const std::uint32_t* table, const float* queries,
                                  std::size_t n_rows, std::size_t head_dim, std::size_t t_begin, std::size_t t_end,
                                  float scale) {
    GroupAttention problem;
    problem.q = queries;
    problem.q_stride = head_dim;
    problem.n_rows = n_rows;
    const std::size_t first_row = cache.paged() ? 0 : t_begin;
    problem.keys = static_cast<const std::byte*>(keys) + first_row * kv_row_bytes(cache.key_dtype(), head_dim);
    problem.values = static_cast<const std::byte*>(values) + first_row * kv_row_bytes(cache.value_dtype(), head_dim);
    problem.kv_stride = head_dim;
    problem.kv_dtype = cache.key_dtype();
    problem.value_dtype = cache.value_dtype();
    problem.fp8_fix_free = !cache.holds_fp8_fix_patterns();
    if (key_scales != nullptr) problem.key_scales = key_scales + first_row;
    if (value_scales != nullptr) problem.value_scales = value_scales + first_row;
    if (cache.paged()) {
        problem.block_table = table;
        problem.block_positions = cache.block_positions();
        problem.first_slot = t_begin;
    }
    problem.n_ctx = t_end - t_begin;
    problem.head_dim = head_dim;
    problem.scale = scale;
    return problem;
}

}  // namespace

GroupAttention cache_split_problem(const KvCache& cache, std::size_t layer, std::size_t b, std::size_t kv_head,
                                   const float* queries, std::size_t n_rows, std::size_t head_dim, std::size_t t_begin,
                                   std::size_t t_end, float scale) {
    return ring_split_problem(cache, cache.key_data(layer, b, kv_head), cache.value_data(layer, b, kv_head),
                              cache.key_scales(layer, b, kv_head), cache.value_scales(layer, b, kv_head),
                              cache.block_table(layer, b, kv_head), queries, n_rows, head_dim, t_begin, t_end, scale);
}

GroupAttention prefix_split_problem(const KvCache& cache, std::size_t layer, std::size_t kv_head, const float* queries,
                                    std::size_t n_rows, std::size_t head_dim, std::size_t t_begin, std::size_t t_end,
                                    float scale) {
    return ring_split_problem(cache, cache.prefix_key_data(layer, kv_head), cache.prefix_value_data(layer, kv_head),
                              cache.prefix_key_scales(layer, kv_head), cache.prefix_value_scales(layer, kv_head),
                              cache.prefix_block_table(layer, kv_head), queries, n_rows, head_dim, t_begin, t_end,
                              scale);
}

AttendKernelShape attend_group_shape() {
    const TiledKernelShape tiled = attend_group_tiled_shape();
    const std::size_t min_rows = tuning.lanes.min_rows;
    return {tiled.lanes, tiled.key_block, tiled.dot_rows_max, min_rows != 0 ? lanes_kernel_width() : 0, min_rows};
}

}  // namespace kvbench
