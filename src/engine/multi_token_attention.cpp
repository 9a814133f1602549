// attend_decode_tokens: a cached step's Q query tokens over the KV cache in one pass: each (batch
// row, KV head) group's Q·group_size query rows against the positions every token sees, then each
// token's own other positions, the partial softmaxes merged.
#include "multi_token_attention.hpp"

#include "attend_group.hpp"
#include "partial_softmax_merge.hpp"
#include "ring_slots.hpp"

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

// Partial softmaxes of a token's own positions, those outside the common ones: the positions
// after them (its draft's earlier tokens), and on a window layer also those before them (the
// earlier tokens' windows start earlier), each run in the ring's pieces (ring_slots.hpp).
std::size_t own_parts_for(const ModelConfig& config) { return ring_pieces(config) == 2 ? 4 : 1; }

}  // namespace

MultiTokenScratch::MultiTokenScratch(const ModelConfig& config, std::size_t max_seq_len, std::size_t n_threads)
    : n_tokens(config.n_query_tokens),
      max_splits(DecodeAttentionScratch::splits_for(config, max_seq_len, n_threads)),
      common_parts(checked_mul(max_splits, ring_pieces(config))),
      own_parts(own_parts_for(config)),
      queries(checked_product({config.n_batch, config.n_kv_heads, token_rows(config), config.head_dim()})),
      common_out(checked_mul(common_parts, queries.size())),
      common_max(checked_product({common_parts, config.n_batch, config.n_kv_heads, token_rows(config)})),
      common_sum(common_max.size()),
      own_out(checked_mul(own_parts, queries.size())),
      own_max(checked_product({own_parts, config.n_batch, config.n_kv_heads, token_rows(config)})),
      own_sum(own_max.size()),
      tasks(n_threads) {
    workspaces.reserve(n_threads);
    for (std::size_t i = 0; i < n_threads; ++i) workspaces.emplace_back(token_rows(config), config.head_dim());
}

std::size_t MultiTokenScratch::bytes() const {
    std::size_t total = (queries.size() + common_out.size() + common_max.size() + common_sum.size() +
                         own_out.size() + own_max.size() + own_sum.size()) *
                            sizeof(float) +
                        tasks.bytes();
    for (const AttendWorkspace& ws : workspaces) total += ws.bytes();
    return total;
}

std::size_t MultiTokenScratch::bytes_for(const ModelConfig& config, std::size_t max_seq_len, std::size_t n_threads) {
    const std::size_t parts = checked_add(
        checked_mul(DecodeAttentionScratch::splits_for(config, max_seq_len, n_threads), ring_pieces(config)),
        own_parts_for(config));
    // (n_batch, n_kv_heads, Q·group_size) rows: the queries, and each part's partials
    const std::size_t rows = checked_product({config.n_batch, config.n_kv_heads, token_rows(config)});
    const std::size_t row_floats = checked_add(checked_mul(rows, config.head_dim()), 2 * rows);
    const std::size_t floats = checked_add(checked_mul(rows, config.head_dim()), checked_mul(parts, row_floats));
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
    // prefix, which the tokens take one at a time (a window layer has none).
    if (n_tokens == 1 || cache.shared_prefix(layer) != 0) {
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
    const std::size_t n_pieces = ring_pieces(config, layer);
    const std::size_t n_own = n_pieces == 2 ? multi.own_parts : 1;  // the tail's pieces, then the head's

    // The positions of a row of context n_row (its newest token's n_row - 1) that every token of
    // the step sees, [first, end): token i, at position n_row - Q + i, sees its window's
    // [n_row - Q + i + 1 - n_i, n_row - Q + i], n_i = attended_positions; their intersection runs
    // from the last token's first position to the first token's own. Q > W leaves it empty.
    struct Run {
        std::size_t first;
        std::size_t end;
        std::size_t size() const { return end > first ? end - first : 0; }
    };
    const auto token_first = [&](std::size_t n_row, std::size_t i) {
        const std::size_t seen = n_row - n_tokens + i + 1;  // positions up to token i's, itself included
        return seen - config.attended_positions(layer, seen);
    };
    const auto common_run = [&](std::size_t n_row) -> Run {
        return {token_first(n_row, n_tokens - 1), n_row - n_tokens + 1};
    };
    // Token i's own positions outside the common run: `tail` those after it (the step's earlier
    // tokens), else those before it (on a window layer, where token i's window starts earlier).
    const auto own_run = [&](std::size_t n_row, std::size_t i, bool tail) -> Run {
        const Run common = common_run(n_row);
        const std::size_t first = token_first(n_row, i);
        const std::size_t end = n_row - n_tokens + i + 1;
        const std::size_t head_end = std::min(common.first, end);
        return tail ? Run{std::max(common.end, head_end), end} : Run{first, head_end};
    };

    // The common runs of the longest rows: the splits are cut for them, so a short ragged row may
    // leave some of them empty.
    const std::size_t n_common = common_run(n_ctx).size();
    const std::size_t n_splits =
        decode_split_count(n_groups, std::max<std::size_t>(n_common, 1), scratch.n_threads, multi.max_splits);
    const std::size_t n_common_parts = n_splits * n_pieces;
    const std::size_t tasks_per_group = n_common_parts + 1;  // the common parts, then the tokens' own
    const GroupKernel common_kernel = group_kernel_for(rows, head_dim, cache.paged());
    const GroupKernel own_kernel = group_kernel_for(group_size, head_dim, cache.paged());

    // Each group's token rows side by side, so one kernel call scores them all.
    for (std::size_t b = 0; b < n_batch; ++b) {
        for (std::size_t kv_head = 0; kv_head < n_kv_heads; ++kv_head) {
            for (std::size_t i = 0; i < n_tokens; ++i) {
                std::copy_n(q + (i * n_batch + b) * q_stride + kv_head * group_size * head_dim, group_size * head_dim,
                            multi.queries.data() + ((b * n_kv_heads + kv_head) * rows + i * group_size) * head_dim);
            }
        }
    }

    // n_rows queries of batch row b against slots [slots.begin, slots.end) of its KV head's ring,
    // as attend_decode reads a split.
    const auto attend = [&](GroupKernel kernel, const float* queries, std::size_t n_rows, std::size_t b,
                            std::size_t kv_head, SlotRange slots, const PartialSoftmax& result,
                            AttendWorkspace& workspace) -> std::uint64_t {
        if (slots.begin == slots.end) {
            write_empty_partial(result, n_rows, head_dim);
            return 0;
        }
        const GroupAttention problem =
            cache_split_problem(cache, layer, b, kv_head, queries, n_rows, head_dim, slots.begin, slots.end, scale);
        return kernel(problem, result, workspace);
    };

    // Group (b, kv_head)'s tasks: its n_splits splits of the common run in the ring's pieces, all
    // token rows at once; then one task for every token's own runs, token i's group at a time.
    const auto run_task = [&](std::size_t index, AttendWorkspace& workspace) -> std::uint64_t {
        const std::size_t group = index / tasks_per_group;  // b·n_kv_heads + kv_head
        const std::size_t part = index % tasks_per_group;
        const std::size_t kv_head = group % n_kv_heads;
        const std::size_t b = group / n_kv_heads;
        const std::size_t n_row = n_ctx - (ragged ? config.seq_lag_of(b) : 0);
        const std::size_t capacity = cache.capacity(layer, b);
        const float* queries = multi.queries.data() + group * rows * head_dim;
        if (part < n_common_parts) {
            const Run common = common_run(n_row);
            const std::size_t split = part / n_pieces;
            const std::size_t first_row = (part * n_groups + group) * rows;
            const PartialSoftmax result{multi.common_out.data() + first_row * head_dim, head_dim,
                                        multi.common_max.data() + first_row, multi.common_sum.data() + first_row};
            return attend(common_kernel, queries, rows, b, kv_head,
                          ring_slots(common.first, common.size(), capacity, split * common.size() / n_splits,
                                     (split + 1) * common.size() / n_splits, part % n_pieces),
                          result, workspace);
        }
        std::uint64_t executed = 0;
        for (std::size_t i = 0; i < n_tokens; ++i) {
            for (std::size_t k = 0; k < n_own; ++k) {
                const Run run = own_run(n_row, i, k < n_pieces);
                const std::size_t first_row = (k * n_groups + group) * rows + i * group_size;
                const PartialSoftmax result{multi.own_out.data() + first_row * head_dim, head_dim,
                                            multi.own_max.data() + first_row, multi.own_sum.data() + first_row};
                executed += attend(own_kernel, queries + i * group_size * head_dim, group_size, b, kv_head,
                                   ring_slots(run.first, run.size(), capacity, 0, run.size(), k % n_pieces), result,
                                   workspace);
            }
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

    // out[i·B + b][h]: the common parts' partial softmaxes, then token i's own.
    std::uint64_t attended_pairs = 0;  // (token row, key) pairs, Σ_b Σ_i of each token's keys
    for (std::size_t i = 0; i < n_tokens; ++i) {
        for (std::size_t b = 0; b < n_batch; ++b) {
            const std::size_t n_row = n_ctx - (ragged ? config.seq_lag_of(b) : 0);
            attended_pairs += config.attended_positions(layer, n_row - n_tokens + i + 1);
            for (std::size_t h = 0; h < n_heads; ++h) {
                const std::size_t group = b * n_kv_heads + h / group_size;
                const std::size_t token_row = group * rows + i * group_size + h % group_size;
                const auto part_at = [&](std::size_t k) -> PartialRow {
                    if (k < n_common_parts) {
                        const std::size_t row = k * n_groups * rows + token_row;
                        return {multi.common_max[row], multi.common_sum[row], multi.common_out.data() + row * head_dim};
                    }
                    const std::size_t row = (k - n_common_parts) * n_groups * rows + token_row;
                    return {multi.own_max[row], multi.own_sum[row], multi.own_out.data() + row * head_dim};
                };
                merge_partial_softmaxes(n_common_parts + n_own, part_at, sinks != nullptr ? sinks + h : nullptr,
                                        head_dim, out + (i * n_batch + b) * config.q_dim() + h * head_dim);
            }
        }
    }
    return {4ull * n_heads * head_dim * attended_pairs, executed};
}

}  // namespace kvbench
