// attend_decode_shared_prefix: one pass over each KV head's shared prefix for every sequence's
// queries, one over each sequence's own positions, the two softmaxes merged.
#include "shared_prefix_attention.hpp"

#include "attend_group.hpp"
#include "partial_softmax_merge.hpp"

#include "kvbench/engine/checked_size.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

namespace kvbench {

namespace {

// Splits of one KV head's prefix: as attend_decode cuts a context, over the G prefix tasks.
std::size_t prefix_splits_for(const ModelConfig& config, std::size_t n_prefix, std::size_t n_threads,
                              std::size_t max_splits) {
    return decode_split_count(config.n_kv_heads, n_prefix, n_threads, max_splits);
}

}  // namespace

SharedPrefixScratch::SharedPrefixScratch(const ModelConfig& config, std::size_t max_seq_len, std::size_t n_threads)
    : max_prefix_splits(prefix_splits_for(config, std::min(config.shared_prefix, max_seq_len), n_threads,
                                          std::max<std::size_t>(1, 2 * n_threads))),
      queries(checked_product({config.n_kv_heads, config.n_batch, config.group_size(), config.head_dim()})),
      prefix_out(checked_mul(max_prefix_splits, queries.size())),
      prefix_max(checked_product({max_prefix_splits, config.n_batch, config.n_heads})),
      prefix_sum(prefix_max.size()),
      tasks(n_threads) {
    workspaces.reserve(n_threads);
    for (std::size_t i = 0; i < n_threads; ++i) {
        workspaces.emplace_back(config.n_batch * config.group_size(), config.head_dim());
    }
}

std::size_t SharedPrefixScratch::bytes() const {
    std::size_t total = (queries.size() + prefix_out.size() + prefix_max.size() + prefix_sum.size()) * sizeof(float) +
                        tasks.bytes();
    for (const AttendWorkspace& ws : workspaces) total += ws.bytes();
    return total;
}

std::size_t SharedPrefixScratch::bytes_for(const ModelConfig& config, std::size_t max_seq_len, std::size_t n_threads) {
    const std::size_t splits = prefix_splits_for(config, std::min(config.shared_prefix, max_seq_len), n_threads,
                                                 std::max<std::size_t>(1, 2 * n_threads));
    const std::size_t rows = checked_mul(config.n_batch, config.n_heads);  // n_kv_heads · n_batch·group_size
    const std::size_t floats =
        checked_add(checked_mul(rows, config.head_dim()),
                    checked_mul(splits, checked_add(checked_mul(rows, config.head_dim()), 2 * rows)));
    return checked_add(checked_add(checked_mul(floats, sizeof(float)), TaskRanges::bytes_for(n_threads)),
                       checked_mul(n_threads, AttendWorkspace::bytes_for(config.n_batch * config.group_size(),
                                                                         config.head_dim())));
}

FlopCount attend_decode_shared_prefix(const ModelConfig& config, const float* q, std::size_t q_stride,
                                      const KvCache& cache, std::size_t layer, std::size_t n_ctx, float* out,
                                      DecodeAttentionScratch& scratch, const float* sinks) {
    if (!scratch.shared_prefix) {
        throw std::logic_error("attend_decode: a cache with a shared prefix needs a scratch built for one");
    }
    SharedPrefixScratch& shared = *scratch.shared_prefix;
    const std::size_t n_batch = config.n_batch;
    const std::size_t n_heads = config.n_heads;
    const std::size_t n_kv_heads = config.n_kv_heads;
    const std::size_t head_dim = config.head_dim();
    const std::size_t group_size = config.group_size();
    const std::size_t prefix_rows = n_batch * group_size;  // one KV head's rows of every sequence
    const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
    const std::size_t n_prefix = std::min(cache.shared_prefix(layer), n_ctx);
    // A ragged batch's row b sees its own n_ctx - lag positions (docs/model.md, "Ragged batches"),
    // the prefix and its own after it, so the row furthest behind must still hold the prefix;
    // the suffix splits are cut for the longest row's.
    if (n_ctx < n_prefix + (config.seq_len - config.shortest_seq_len())) {
        throw std::logic_error("attend_decode: a row of a ragged batch ends inside the shared prefix");
    }
    const auto row_suffix = [&](std::size_t b) { return n_ctx - config.seq_lag_of(b) - n_prefix; };
    const std::size_t n_suffix = n_ctx - n_prefix;
    const std::size_t n_threads = scratch.n_threads;
    const std::size_t prefix_splits = prefix_splits_for(config, n_prefix, n_threads, shared.max_prefix_splits);
    const std::size_t suffix_splits = decode_split_count(n_batch * n_kv_heads, n_suffix, n_threads, scratch.max_splits);
    const std::size_t n_prefix_tasks = n_kv_heads * prefix_splits;
    const std::size_t n_tasks = n_prefix_tasks + n_batch * n_kv_heads * suffix_splits;
    const GroupKernel prefix_kernel = group_kernel_for(prefix_rows, head_dim, cache.paged());
    const GroupKernel suffix_kernel = group_kernel_for(group_size, head_dim, cache.paged());

    // Each KV head's query rows side by side, so one kernel call scores them all against the prefix.
    for (std::size_t kv_head = 0; kv_head < n_kv_heads; ++kv_head) {
        for (std::size_t b = 0; b < n_batch; ++b) {
            std::copy_n(q + b * q_stride + kv_head * group_size * head_dim, group_size * head_dim,
                        shared.queries.data() + (kv_head * prefix_rows + b * group_size) * head_dim);
        }
    }

    // One split's problem, positions [t_begin, t_end) of the prefix or of a row's own; an empty
    // split writes the partial softmax of nothing.
    const auto attend = [&](GroupKernel kernel, const GroupAttention& problem, const PartialSoftmax& result,
                            AttendWorkspace& workspace) -> std::uint64_t {
        if (problem.n_ctx == 0) {
            write_empty_partial(result, problem.n_rows, head_dim);
            return 0;
        }
        return kernel(problem, result, workspace);
    };

    // Tasks [0, n_prefix_tasks): (KV head, prefix split), every sequence's rows at once; then
    // (batch row, KV head, suffix split), as attend_decode's tasks over the row's own positions.
    const auto run_task = [&](std::size_t index, AttendWorkspace& workspace) -> std::uint64_t {
        if (index < n_prefix_tasks) {
            const std::size_t split = index % prefix_splits;
            const std::size_t kv_head = index / prefix_splits;
            const std::size_t first_row = (split * n_kv_heads + kv_head) * prefix_rows;
            PartialSoftmax result;
            result.out = shared.prefix_out.data() + first_row * head_dim;
            result.out_stride = head_dim;
            result.row_max = shared.prefix_max.data() + first_row;
            result.row_sum = shared.prefix_sum.data() + first_row;
            const float* queries = shared.queries.data() + kv_head * prefix_rows * head_dim;
            return attend(prefix_kernel,
                          prefix_split_problem(cache, layer, kv_head, queries, prefix_rows, head_dim,
                                               split * n_prefix / prefix_splits, (split + 1) * n_prefix / prefix_splits,
                                               scale),
                          result, workspace);
        }
        const std::size_t suffix_index = index - n_prefix_tasks;
        const std::size_t split = suffix_index % suffix_splits;
        const std::size_t kv_head = (suffix_index / suffix_splits) % n_kv_heads;
        const std::size_t b = suffix_index / (suffix_splits * n_kv_heads);
        const std::size_t first_head = kv_head * group_size;
        const std::size_t partial_row = (split * n_batch + b) * n_heads + first_head;
        PartialSoftmax result;
        result.out = scratch.partial_out.data() + partial_row * head_dim;
        result.out_stride = head_dim;
        result.row_max = scratch.partial_max.data() + partial_row;
        result.row_sum = scratch.partial_sum.data() + partial_row;
        const std::size_t own = row_suffix(b);
        return attend(suffix_kernel,
                      cache_split_problem(cache, layer, b, kv_head, q + b * q_stride + first_head * head_dim,
                                          group_size, head_dim, split * own / suffix_splits,
                                          (split + 1) * own / suffix_splits, scale),
                      result, workspace);
    };

    std::uint64_t executed = 0;
    // As attend_decode: each task writes only its own partial rows, merged below in a fixed order.
    shared.tasks.reset(n_tasks);
#pragma omp parallel reduction(+ : executed) num_threads(static_cast<int>(n_threads))
    {
        const auto thread = static_cast<std::size_t>(omp_get_thread_num());
        while (const std::optional<std::size_t> task = shared.tasks.next(thread)) {
            executed += run_task(*task, shared.workspaces[thread]);
        }
    }

    // out[b][h]: the prefix splits' partial softmaxes, then the suffix splits', merged in that order.
    for (std::size_t b = 0; b < n_batch; ++b) {
        for (std::size_t h = 0; h < n_heads; ++h) {
            const std::size_t kv_head = h / group_size;
            const std::size_t prefix_row = kv_head * prefix_rows + b * group_size + h % group_size;
            const auto part_at = [&](std::size_t k) -> PartialRow {
                if (k < prefix_splits) {
                    const std::size_t row = k * n_kv_heads * prefix_rows + prefix_row;
                    return {shared.prefix_max[row], shared.prefix_sum[row], shared.prefix_out.data() + row * head_dim};
                }
                const std::size_t row = ((k - prefix_splits) * n_batch + b) * n_heads + h;
                return {scratch.partial_max[row], scratch.partial_sum[row], scratch.partial_out.data() + row * head_dim};
            };
            merge_partial_softmaxes(prefix_splits + suffix_splits, part_at, sinks != nullptr ? sinks + h : nullptr,
                                    head_dim, out + b * config.q_dim() + h * head_dim);
        }
    }
    std::uint64_t attended_pairs = 0;  // (row, key) pairs, Σ_b of each row's keys
    for (std::size_t b = 0; b < n_batch; ++b) attended_pairs += n_prefix + row_suffix(b);
    return {4ull * n_heads * head_dim * attended_pairs, executed};
}

}  // namespace kvbench
