// attend_decode: the cached step's attention as (batch row, KV head, split) tasks on the OpenMP pool,
// each running the kernel attend_group over its split, then the splits merged in a fixed order.
#include "kvbench/engine/attention.hpp"

#include "attend_group.hpp"
#include "multi_token_attention.hpp"
#include "partial_softmax_merge.hpp"
#include "ring_slots.hpp"
#include "shared_prefix_attention.hpp"
#include "kernels/attention_types.hpp"
#include "kernels/task_ranges.hpp"
#include "kernels/tuning.hpp"

#include "kvbench/engine/checked_size.hpp"
#include "kvbench/engine/kv_convert.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>

namespace kvbench {

struct DecodeAttentionScratch::Threads {
    std::vector<AttendWorkspace> workspaces;  // (n_threads), each for group_size rows
    TaskRanges tasks;                         // (n_threads) ranges of the tasks, dealt out by each call
};

namespace {

constexpr float minus_infinity = -std::numeric_limits<float>::infinity();

void merge_splits(const ModelConfig& config, std::size_t n_splits, const DecodeAttentionScratch& scratch,
                  const float* sinks, float* out);

}  // namespace

FlopCount attend_decode(const ModelConfig& config, const float* q, std::size_t q_stride,
                            const KvCache& cache, std::size_t layer, std::size_t n_ctx, float* out,
                            DecodeAttentionScratch& scratch, const float* sinks) {
    if (cache.shared_prefix(layer) != 0) {
        return attend_decode_shared_prefix(config, q, q_stride, cache, layer, n_ctx, out, scratch, sinks);
    }
    const std::size_t n_batch = config.n_batch;
    const std::size_t n_heads = config.n_heads;
    const std::size_t n_kv_heads = config.n_kv_heads;
    const std::size_t head_dim = config.head_dim();
    const std::size_t group_size = config.group_size();
    const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
    // A window layer's ring holds the positions the new token sees, in rotated order: with one
    // query token a step exactly those, read as one block whatever position each slot holds;
    // with Q a ring of W + Q - 1, whose run of the token's positions may wrap, so each split is
    // read as its two pieces on either side of the wrap (ring_slots.hpp).
    const std::size_t n_attended = config.attended_positions(layer, n_ctx);
    const std::size_t n_pieces = ring_pieces(config, layer);
    // A ragged batch's row b sees its own n_ctx - lag positions (docs/model.md, "Ragged batches");
    // the splits are cut for the longest row, so a short row may leave some of them empty.
    const bool ragged = config.is_ragged();
    const std::size_t n_splits =
        decode_split_count(n_batch * n_kv_heads, n_attended, scratch.n_threads, scratch.max_splits);
    const std::size_t n_parts = n_splits * n_pieces;  // each split's pieces, merged in this order
    const std::size_t n_tasks = n_batch * n_kv_heads * n_parts;
    // every task's group has this shape
    const GroupKernel kernel = group_kernel_for(group_size, head_dim, cache.paged());

    // One (batch row, KV head, split, piece) task: attend_group over that piece of the split of
    // the context, into the task's own partial rows.
    const auto run_task = [&](std::size_t index, AttendWorkspace& workspace) -> std::uint64_t {
        const std::size_t part = index % n_parts;
        const std::size_t split = part / n_pieces;
        const std::size_t kv_head = (index / n_parts) % n_kv_heads;
        const std::size_t b = index / (n_parts * n_kv_heads);
        const std::size_t row_ctx = ragged ? n_ctx - config.seq_lag_of(b) : n_ctx;
        const std::size_t row_attended = ragged ? config.attended_positions(layer, row_ctx) : n_attended;
        const SlotRange slots =
            ring_slots(row_ctx - row_attended, row_attended, cache.capacity(layer, b), split * row_attended / n_splits,
                       (split + 1) * row_attended / n_splits, part % n_pieces);
        const std::size_t t_begin = slots.begin;
        const std::size_t t_end = slots.end;
        const std::size_t first_head = kv_head * group_size;  // h / group_size == kv_head
        const std::size_t partial_row = (part * n_batch + b) * n_heads + first_head;
        if (t_begin == t_end) {
            // An empty split weighs nothing in merge_splits: exp(-inf - max) = 0.
            std::fill_n(scratch.partial_out.data() + partial_row * head_dim, group_size * head_dim, 0.0f);
            std::fill_n(scratch.partial_max.data() + partial_row, group_size, minus_infinity);
            std::fill_n(scratch.partial_sum.data() + partial_row, group_size, 0.0f);
            return 0;
        }
        const GroupAttention problem = cache_split_problem(cache, layer, b, kv_head, q + b * q_stride + first_head * head_dim,
                                                           group_size, head_dim, t_begin, t_end, scale);
        PartialSoftmax result;
        result.out = scratch.partial_out.data() + partial_row * head_dim;
        result.out_stride = head_dim;
        result.row_max = scratch.partial_max.data() + partial_row;
        result.row_sum = scratch.partial_sum.data() + partial_row;
        return kernel(problem, result, workspace);
    };

    std::uint64_t executed = 0;
    // Each thread takes its own contiguous range of tasks, then helps with the others' tails
    // (task_ranges.hpp: why not an OpenMP schedule). A task writes only its own partial rows,
    // merged below in a fixed order, so the bits of out do not depend on which thread ran what.
    TaskRanges& tasks = scratch.threads->tasks;
    tasks.reset(n_tasks);
#pragma omp parallel reduction(+ : executed) num_threads(static_cast<int>(scratch.n_threads))
    {
        const auto thread = static_cast<std::size_t>(omp_get_thread_num());
        while (const std::optional<std::size_t> task = tasks.next(thread)) {
            executed += run_task(*task, scratch.threads->workspaces[thread]);
        }
    }

    merge_splits(config, n_parts, scratch, sinks, out);
    std::uint64_t attended_pairs = n_batch * n_attended;  // (row, key) pairs, Σ_b of each row's keys
    if (ragged) {
        attended_pairs = 0;
        for (std::size_t b = 0; b < n_batch; ++b) {
            attended_pairs += config.attended_positions(layer, n_ctx - config.seq_lag_of(b));
        }
    }
    return {4ull * n_heads * head_dim * attended_pairs, executed};
}

namespace {

// out[b][h] = the partial softmaxes of head h's splits merged in split order, so results do not
// depend on thread timing.
void merge_splits(const ModelConfig& config, std::size_t n_splits, const DecodeAttentionScratch& scratch,
                  const float* sinks, float* out) {
    const std::size_t n_batch = config.n_batch;
    const std::size_t n_heads = config.n_heads;
    const std::size_t head_dim = config.head_dim();
    for (std::size_t b = 0; b < n_batch; ++b) {
        for (std::size_t h = 0; h < n_heads; ++h) {
            const auto part_at = [&](std::size_t s) -> PartialRow {
                const std::size_t row = (s * n_batch + b) * n_heads + h;
                return {scratch.partial_max[row], scratch.partial_sum[row], scratch.partial_out.data() + row * head_dim};
            };
            merge_partial_softmaxes(n_splits, part_at, sinks != nullptr ? sinks + h : nullptr, head_dim,
                                    out + b * config.q_dim() + h * head_dim);
        }
    }
}

}  // namespace

DecodeAttentionScratch::DecodeAttentionScratch(const ModelConfig& config, std::size_t max_seq_len_,
                                               std::size_t n_threads_)
    : n_threads(n_threads_),
      max_seq_len(max_seq_len_),
      max_splits(splits_for(config, max_seq_len_, n_threads_)),
      partial_out(checked_product({max_splits, ring_pieces(config), config.n_batch, config.q_dim()})),
      partial_max(checked_product({max_splits, ring_pieces(config), config.n_batch, config.n_heads})),
      partial_sum(partial_max.size()),
      threads(std::make_unique<Threads>(Threads{{}, TaskRanges(n_threads_)})),
      shared_prefix(config.has_shared_prefix()
                        ? std::make_unique<SharedPrefixScratch>(config, max_seq_len_, n_threads_)
                        : nullptr),
      multi_token(config.n_query_tokens > 1 ? std::make_unique<MultiTokenScratch>(config, max_seq_len_, n_threads_)
                                            : nullptr) {
    threads->workspaces.reserve(n_threads);
    for (std::size_t i = 0; i < n_threads; ++i) threads->workspaces.emplace_back(config.group_size(), config.head_dim());
}

DecodeAttentionScratch::~DecodeAttentionScratch() = default;
DecodeAttentionScratch::DecodeAttentionScratch(DecodeAttentionScratch&&) noexcept = default;
DecodeAttentionScratch& DecodeAttentionScratch::operator=(DecodeAttentionScratch&&) noexcept = default;

std::size_t DecodeAttentionScratch::bytes() const {
    std::size_t total =
        (partial_out.size() + partial_max.size() + partial_sum.size()) * sizeof(float) + threads->tasks.bytes();
    for (const AttendWorkspace& ws : threads->workspaces) total += ws.bytes();
    if (shared_prefix) total += shared_prefix->bytes();
    if (multi_token) total += multi_token->bytes();
    return total;
}

std::vector<std::span<const float>> DecodeAttentionScratch::partial_buffers() const {
    std::vector<std::span<const float>> buffers{partial_out, partial_max, partial_sum};
    if (shared_prefix) {
        const SharedPrefixScratch& shared = *shared_prefix;
        buffers.insert(buffers.end(), {shared.queries, shared.prefix_out, shared.prefix_max, shared.prefix_sum});
    }
    if (multi_token) {
        const MultiTokenScratch& multi = *multi_token;
        buffers.insert(buffers.end(), {multi.queries, multi.common_out, multi.common_max, multi.common_sum,
                                       multi.own_out, multi.own_max, multi.own_sum});
    }
    return buffers;
}

std::size_t DecodeAttentionScratch::splits_for(const ModelConfig& config, std::size_t max_seq_len_,
                                               std::size_t n_threads_) {
    // decode_split_count only grows with the context, so the longest one needs the most.
    return decode_split_count(config.n_batch * config.n_kv_heads, max_seq_len_, n_threads_,
                              std::max<std::size_t>(1, 2 * n_threads_));
}

std::size_t DecodeAttentionScratch::bytes_for(const ModelConfig& config, std::size_t max_seq_len_,
                                              std::size_t n_threads) {
    const std::size_t max_splits = splits_for(config, max_seq_len_, n_threads);
    const std::size_t partial_floats = checked_product(
        {max_splits, ring_pieces(config), config.n_batch, checked_add(config.q_dim(), 2 * config.n_heads)});
    const std::size_t shared_bytes =
        config.has_shared_prefix() ? SharedPrefixScratch::bytes_for(config, max_seq_len_, n_threads) : 0;
    const std::size_t multi_token_bytes =
        config.n_query_tokens > 1 ? MultiTokenScratch::bytes_for(config, max_seq_len_, n_threads) : 0;
    return checked_add(
        checked_add(
            checked_add(checked_add(checked_mul(partial_floats, sizeof(float)), TaskRanges::bytes_for(n_threads)),
                        checked_mul(n_threads, AttendWorkspace::bytes_for(config.group_size(), config.head_dim()))),
            shared_bytes),
        multi_token_bytes);
}

std::size_t decode_split_count(std::size_t n_tasks, std::size_t n_ctx, std::size_t n_threads,
                               std::size_t max_splits) {
    constexpr std::size_t min_split_positions = tuning.decode.min_split_positions;
    if (n_tasks >= n_threads) return 1;
    const std::size_t wanted = (n_threads + n_tasks - 1) / n_tasks;
    const std::size_t affordable = std::max<std::size_t>(1, n_ctx / min_split_positions);
    return std::min({wanted, affordable, max_splits});
}

}  // namespace kvbench
