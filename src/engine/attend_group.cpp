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

AttendKernelShape attend_group_shape() {
    const TiledKernelShape tiled = attend_group_tiled_shape();
    const std::size_t min_rows = tuning.lanes.min_rows;
    return {tiled.lanes, tiled.key_block, tiled.dot_rows_max, min_rows != 0 ? lanes_kernel_width() : 0, min_rows};
}

}  // namespace kvbench
