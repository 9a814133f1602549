// attend_decode_tokens: a cached step's Q query tokens over the KV cache in one pass: each (batch
// row, KV head) group's Q·group_size query rows against the positions every token sees, then each
// token's own further positions, the two partial softmaxes merged.
#include "multi_token_attention.hpp"

#include "attend_group.hpp"
#include "partial_softmax_merge.hpp"

#include "kvbench/engine/attention.hpp"
#include "kvbench/engine/checked_size.hpp"
#include "kvbench/engine/kv_convert.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

namespace kvbench {

namespace {

// Query rows of one (batch row, KV head) group in a step: every token's group_size heads.
std::size_t token_rows(const ModelConfig& config) { return checked_mul(config.n_query_tokens, config.group_size()); }

}  // namespace

MultiTokenScratch::MultiTokenScratch(const ModelConfig& config, std::size_t max_seq_len, std::size_t n_threads)
    : n_tokens(config.n_query_tokens),
      max_splits(DecodeAttentionScratch::splits_for(config, max_seq_len, n_threads)),
      queries(checked_product({config.n_batch, config.n_kv_heads, token_rows(config), config.head_dim()})),
      common_out(checked_mul(max_splits, queries.size())),
      common_max(checked_product({max_splits, config.n_batch, config.n_kv_heads, token_rows(config)})),
      common_sum(common_max.size()),
      tail_out(queries.size()),
      tail_max(checked_product({config.n_batch, config.n_kv_heads, token_rows(config)})),
      tail_sum(tail_max.size()),
      tasks(n_threads) {
    workspaces.reserve(n_threads);
    for (std::size_t i = 0; i < n_threads; ++i) workspaces.emplace_back(token_rows(config), config.head_dim());
}

std::size_t MultiTokenScratch::bytes() const {
    std::size_t total = (queries.size() + common_out.size() + common_max.size() + common_sum.size() +
                         tail_out.size() + tail_max.size() + tail_sum.size()) *
                            sizeof(float) +
                        tasks.bytes();
    for (const AttendWorkspace& ws : workspaces) total += ws.bytes();
    return total;
}

std::size_t MultiTokenScratch::bytes_for(const ModelConfig& config, std::size_t max_seq_len, std::size_t n_threads) {
    const std::size_t splits = DecodeAttentionScratch::splits_for(config, max_seq_len, n_threads);
    // (n_batch, n_kv_heads, Q·group_size) rows: the queries and tails, and each split's partials
    const std::size_t rows = checked_product({config.n_batch, config.n_kv_heads, token_rows(config)});
    const std::size_t row_floats = checked_add(checked_mul(rows, config.head_dim()), 2 * rows);
    const std::size_t floats = checked_add(checked_add(checked_mul(rows, config.head_dim()), row_floats),
                                           checked_mul(splits, row_floats));
    return checked_add(checked_add(checked_mul(floats, sizeof(float)), TaskRanges::bytes_for(n_threads)),
                       checked_mul(n_threads, AttendWorkspace::bytes_for(token_rows(config), config.head_dim())));
}

FlopCount attend_each_token(AttendDecodeKernel per_token, const ModelConfig& config, const float* q,
                            std::size_t q_stride, const KvCache& cache, std::size_t layer, std::size_t n_ctx,
                            float* out, DecodeAttentionScratch& scratch, const float* sinks) {
    const std::size_t n_tokens = config.n_query_tokens;
    const std::size_t n_batch = config.n_batch;
    FlopCount count;
    for (std::size_t i = 0; i < n_tokens; ++i) {
        count += per_token(config, q + i * n_batch * q_stride, q_stride, cache, layer, n_ctx - n_tokens + 1 + i,
                           out + i * n_batch * config.q_dim(), scratch, sinks);
    }
    return count;
}

FlopCount attend_decode_tokens(const ModelConfig& config, const float* q, std::size_t q_stride, const KvCache& cache,
                               std::size_t layer, std::size_t n_ctx, float* out, DecodeAttentionScratch& scratch,
                               const float* sinks) {
    const std::size_t n_tokens = config.n_query_tokens;
    // One token is attend_decode's own problem. A shared prefix has its own pass over the
    // prefix, which the tokens take one at a time; a window's ring holds one token's window.
    if (n_tokens == 1 || cache.shared_prefix() != 0 || config.window_of(layer) != 0) {
        return attend_each_token(&attend_decode, config, q, q_stride, cache, layer, n_ctx, out, scratch, sinks);
    }
    if (!scratch.multi_token || scratch.multi_token->n_tokens != n_tokens) {
        throw std::logic_error("attend_decode_tokens: a step of several tokens needs a scratch built for them");
    }
    MultiTokenScratch& multi = *scratch.multi_token;
    const std::size_t n_batch = config.n_batch;
    const std::size_t n_heads = config.n_heads;
    const std::size_t n_kv_heads = config.n_kv_heads;
    const std::size_t n_groups = n_batch * n_kv_heads;
    const std::size_t head_dim = config.head_dim();
    const std::size_t group_size = config.group_size();
    const std::size_t rows = n_tokens * group_size;  // one group's token rows
    const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
    const bool ragged = config.is_ragged();
    const bool paged = cache.paged();
    // The positions every token of the longest rows sees: the first token's. The splits are cut
    // for them, so a short ragged row may leave some of them empty, as in attend_decode.
    const std::size_t n_common = n_ctx - n_tokens + 1;
    const std::size_t n_splits = decode_split_count(n_groups, n_common, scratch.n_threads, multi.max_splits);
    const std::size_t tasks_per_group = n_splits + 1;  // the common splits, then the tokens' tails
    const GroupKernel common_kernel = group_kernel_for(rows, head_dim, paged);
    const GroupKernel tail_kernel = group_kernel_for(group_size, head_dim, paged);

    // Each group's token rows side by side, so one kernel call scores them all.
    for (std::size_t b = 0; b < n_batch; ++b) {
        for (std::size_t kv_head = 0; kv_head < n_kv_heads; ++kv_head) {
            for (std::size_t i = 0; i < n_tokens; ++i) {
                std::copy_n(q + (i * n_batch + b) * q_stride + kv_head * group_size * head_dim, group_size * head_dim,
                            multi.queries.data() + ((b * n_kv_heads + kv_head) * rows + i * group_size) * head_dim);
            }
        }
    }

    // n_rows queries of batch row b against slots [t_begin, t_end) of its KV head's ring, as
    // attend_decode reads a split.
    const auto attend = [&](GroupKernel kernel, const float* queries, std::size_t n_rows, std::size_t b,
                            std::size_t kv_head, std::size_t t_begin, std::size_t t_end, const PartialSoftmax& result,
                            AttendWorkspace& workspace) -> std::uint64_t {
        if (t_begin == t_end) {
            write_empty_partial(result, n_rows, head_dim);
            return 0;
        }
        const GroupAttention problem =
            cache_split_problem(cache, layer, b, kv_head, queries, n_rows, head_dim, t_begin, t_end, scale);
        return kernel(problem, result, workspace);
    };

    // Group (b, kv_head)'s tasks: its n_splits splits of the common positions, all token rows at
    // once; then one task for every token's tail, token i's group over the i positions after them.
    const auto run_task = [&](std::size_t index, AttendWorkspace& workspace) -> std::uint64_t {
        const std::size_t group = index / tasks_per_group;  // b·n_kv_heads + kv_head
        const std::size_t part = index % tasks_per_group;
        const std::size_t kv_head = group % n_kv_heads;
        const std::size_t b = group / n_kv_heads;
        const std::size_t row_common = n_common - (ragged ? config.seq_lag_of(b) : 0);
        const float* queries = multi.queries.data() + group * rows * head_dim;
        if (part < n_splits) {
            const std::size_t first_row = (part * n_groups + group) * rows;
            const PartialSoftmax result{multi.common_out.data() + first_row * head_dim, head_dim,
                                        multi.common_max.data() + first_row, multi.common_sum.data() + first_row};
            return attend(common_kernel, queries, rows, b, kv_head, part * row_common / n_splits,
                          (part + 1) * row_common / n_splits, result, workspace);
        }
        std::uint64_t executed = 0;
        for (std::size_t i = 1; i < n_tokens; ++i) {
            const std::size_t first_row = group * rows + i * group_size;
            const PartialSoftmax result{multi.tail_out.data() + first_row * head_dim, head_dim,
                                        multi.tail_max.data() + first_row, multi.tail_sum.data() + first_row};
            executed += attend(tail_kernel, queries + i * group_size * head_dim, group_size, b, kv_head, row_common,
                               row_common + i, result, workspace);
        }
        return executed;
    };

    std::uint64_t executed = 0;
    // As attend_decode: each task writes only its own partial rows, merged below in a fixed order.
    multi.tasks.reset(n_groups * tasks_per_group);
#pragma omp parallel reduction(+ : executed) num_threads(static_cast<int>(scratch.n_threads))
    {
        const auto thread = static_cast<std::size_t>(omp_get_thread_num());
        while (const std::optional<std::size_t> task = multi.tasks.next(thread)) {
            executed += run_task(*task, multi.workspaces[thread]);
        }
    }

    // out[i·B + b][h]: the common splits' partial softmaxes, then token i's tail (token 0 has none).
    std::uint64_t attended_pairs = 0;  // (token row, key) pairs, Σ_b Σ_i of each token's keys
    for (std::size_t i = 0; i < n_tokens; ++i) {
        for (std::size_t b = 0; b < n_batch; ++b) {
            attended_pairs += n_common - (ragged ? config.seq_lag_of(b) : 0) + i;
            for (std::size_t h = 0; h < n_heads; ++h) {
                const std::size_t token_row = (b * n_kv_heads + h / group_size) * rows + i * group_size + h % group_size;
                const auto part_at = [&](std::size_t k) -> PartialRow {
                    if (k < n_splits) {
                        const std::size_t row = k * n_groups * rows + token_row;
                        return {multi.common_max[row], multi.common_sum[row], multi.common_out.data() + row * head_dim};
                    }
                    return {multi.tail_max[token_row], multi.tail_sum[token_row],
                            multi.tail_out.data() + token_row * head_dim};
                };
                merge_partial_softmaxes(n_splits + (i > 0 ? 1 : 0), part_at, sinks != nullptr ? sinks + h : nullptr,
                                        head_dim, out + (i * n_batch + b) * config.q_dim() + h * head_dim);
            }
        }
    }
    return {4ull * n_heads * head_dim * attended_pairs, executed};
}

}  // namespace kvbench
