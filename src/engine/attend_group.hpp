// attend_group(): one group of query heads over one split of the context, on the kernel chosen for its shape.
// Private to src/engine (attention.cpp); the kernel tests reach it through kvbench_engine_internal.
#pragma once

#include "kernels/attention_types.hpp"

#include "kvbench/engine/kv_cache.hpp"

#include <cstddef>
#include <cstdint>

namespace kvbench {

// A decode attention kernel (src/engine/kernels): a pure function of the problem's pointers and
// sizes that writes the group's partial softmax and returns the FLOPs it executed.
using GroupKernel = std::uint64_t (*)(const GroupAttention& problem, const PartialSoftmax& result,
                                      AttendWorkspace& workspace);

// The kernel for groups of n_rows query rows of head_dim: the one place the choice is made.
// attend_group_by_lanes where tuning.hpp's `lanes` row takes it (builds without AVX-512, at least
// min_rows rows) and the shape is whole vectors of its lanes; attend_group_tiled otherwise, and
// always for a paged cache, which only the tiled kernel reads through its block table.
GroupKernel group_kernel_for(std::size_t n_rows, std::size_t head_dim, bool paged = false);

// group_kernel_for(problem.n_rows, problem.head_dim) run on the problem. Returns the FLOPs it
// executed: attend_group_tiled's documented count, or the lanes kernel's 4·R·n_ctx·dh, which
// pads nothing.
// Requires: attend_group_tiled's requirements (kernels/attention_kernel.hpp).
std::uint64_t attend_group(const GroupAttention& problem, const PartialSoftmax& result, AttendWorkspace& workspace);

// n_rows queries of head_dim (rows head_dim apart) against slots [t_begin, t_end) of the ring of
// (layer, b, kv_head) in `cache`, softmax scale `scale`: a contiguous cache's split starts at slot
// t_begin, a paged cache's is reached from slot t_begin through the row's block table.
GroupAttention cache_split_problem(const KvCache& cache, std::size_t layer, std::size_t b, std::size_t kv_head,
                                   const float* queries, std::size_t n_rows, std::size_t head_dim, std::size_t t_begin,
                                   std::size_t t_end, float scale);
// The same over positions [t_begin, t_end) of the shared prefix of (layer, kv_head), kept once for
// every row (docs/model.md, "Shared prefixes"), through the prefix's own table when paged.
// Requires: cache.shared_prefix(layer) >= t_end.
GroupAttention prefix_split_problem(const KvCache& cache, std::size_t layer, std::size_t kv_head, const float* queries,
                                    std::size_t n_rows, std::size_t head_dim, std::size_t t_begin, std::size_t t_end,
                                    float scale);

// The shapes behind attend_group's FLOP count in this build.
struct AttendKernelShape {
    std::size_t lanes;         // floats per vector of the tiled kernel
    std::size_t key_block;     // its keys per block, <= max_key_block
    std::size_t dot_rows_max;  // the most rows it scores by dot-product tiles
    // Groups of at least lanes_kernel_min_rows rows, a multiple of lanes_kernel_rows, with head_dim
    // a multiple of it, go to the lanes kernel; 0: this build hands it none.
    std::size_t lanes_kernel_rows;
    std::size_t lanes_kernel_min_rows;
};
AttendKernelShape attend_group_shape();

}  // namespace kvbench
