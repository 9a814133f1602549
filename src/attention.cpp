// The cached step's attention: per (batch, KV head, context slice) tasks on the OpenMP pool.
#include "kvbench/attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kvbench {

void attend_chunk(const float* q, const float* keys, const float* values, std::size_t n_ctx,
                  std::size_t group_size, std::size_t head_dim, float scale, float* scores,
                  std::size_t score_stride, float* out, float* row_max, float* row_sum) {
    for (std::size_t i = 0; i < group_size; ++i) row_max[i] = -std::numeric_limits<float>::infinity();

    // Key-major: one key row feeds every query of the group before the next is loaded.
    for (std::size_t t = 0; t < n_ctx; ++t) {
        const float* key = keys + t * head_dim;
        for (std::size_t i = 0; i < group_size; ++i) {
            const float* query = q + i * head_dim;
            float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
            for (std::size_t d = 0; d < head_dim; ++d) dot += query[d] * key[d];
            const float score = dot * scale;
            scores[i * score_stride + t] = score;
            row_max[i] = std::max(row_max[i], score);
        }
    }

    for (std::size_t i = 0; i < group_size; ++i) {
        float* row = scores + i * score_stride;
        const float max_score = row_max[i];
        float sum = 0.0f;
        for (std::size_t t = 0; t < n_ctx; ++t) {
            row[t] = std::exp(row[t] - max_score);
            sum += row[t];
        }
        row_sum[i] = sum;
    }

    std::fill(out, out + group_size * head_dim, 0.0f);
    for (std::size_t t = 0; t < n_ctx; ++t) {
        const float* value = values + t * head_dim;
        for (std::size_t i = 0; i < group_size; ++i) {
            const float weight = scores[i * score_stride + t];
            float* acc = out + i * head_dim;
#pragma omp simd
            for (std::size_t d = 0; d < head_dim; ++d) acc[d] += weight * value[d];
        }
    }
}

DecodeAttentionScratch::DecodeAttentionScratch(const ModelConfig& config, std::size_t max_seq_len_,
                                               std::size_t n_threads_)
    : n_threads(n_threads_),
      max_seq_len(max_seq_len_),
      max_splits(std::max<std::size_t>(1, 2 * n_threads_)),
      scores(config.n_batch * config.n_heads * max_seq_len_),
      partial_out(max_splits * config.n_batch * config.model_dim),
      partial_max(max_splits * config.n_batch * config.n_heads),
      partial_sum(partial_max.size()) {}

std::size_t DecodeAttentionScratch::bytes() const {
    return (scores.size() + partial_out.size() + partial_max.size() + partial_sum.size()) *
           sizeof(float);
}

std::size_t decode_split_count(std::size_t n_tasks, std::size_t n_ctx, std::size_t n_threads,
                               std::size_t max_splits) {
    constexpr std::size_t min_slice = 64;
    if (n_tasks >= n_threads) return 1;
    const std::size_t wanted = (n_threads + n_tasks - 1) / n_tasks;
    const std::size_t affordable = std::max<std::size_t>(1, n_ctx / min_slice);
    return std::min({wanted, affordable, max_splits});
}

std::uint64_t attend_decode(const ModelConfig& config, const float* q, std::size_t q_stride,
                            const KvCache& cache, std::size_t layer, std::size_t n_ctx, float* out,
                            DecodeAttentionScratch& scratch) {
    const std::size_t n_batch = config.n_batch;
    const std::size_t n_heads = config.n_heads;
    const std::size_t n_kv_heads = config.n_kv_heads;
    const std::size_t head_dim = config.head_dim();
    const std::size_t group_size = config.group_size();
    const std::size_t score_stride = scratch.max_seq_len;
    const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
    const std::size_t n_splits =
        decode_split_count(n_batch * n_kv_heads, n_ctx, scratch.n_threads, scratch.max_splits);
    const std::size_t n_tasks = n_batch * n_kv_heads * n_splits;
    const auto n_tasks_signed = static_cast<std::ptrdiff_t>(n_tasks);

#pragma omp parallel for schedule(static) num_threads(static_cast<int>(scratch.n_threads))
    for (std::ptrdiff_t task = 0; task < n_tasks_signed; ++task) {
        const auto index = static_cast<std::size_t>(task);
        const std::size_t split = index % n_splits;
        const std::size_t kv_head = (index / n_splits) % n_kv_heads;
        const std::size_t b = index / (n_splits * n_kv_heads);
        const std::size_t t_begin = split * n_ctx / n_splits;
        const std::size_t t_end = (split + 1) * n_ctx / n_splits;
        const std::size_t first_head = kv_head * group_size;  // h / group_size == kv_head
        const std::size_t partial_row = (split * n_batch + b) * n_heads + first_head;
        attend_chunk(q + b * q_stride + first_head * head_dim,
                     cache.keys(layer, b, kv_head) + t_begin * head_dim,
                     cache.values(layer, b, kv_head) + t_begin * head_dim, t_end - t_begin,
                     group_size, head_dim, scale,
                     scratch.scores.data() + (b * n_heads + first_head) * score_stride + t_begin,
                     score_stride, scratch.partial_out.data() + partial_row * head_dim,
                     scratch.partial_max.data() + partial_row,
                     scratch.partial_sum.data() + partial_row);
    }

    // Merge the slices of each head in a fixed order, so results do not depend on thread timing.
    for (std::size_t b = 0; b < n_batch; ++b) {
        for (std::size_t h = 0; h < n_heads; ++h) {
            float global_max = -std::numeric_limits<float>::infinity();
            for (std::size_t s = 0; s < n_splits; ++s) {
                global_max = std::max(global_max, scratch.partial_max[(s * n_batch + b) * n_heads + h]);
            }
            float* dst = out + b * config.model_dim + h * head_dim;
            std::fill(dst, dst + head_dim, 0.0f);
            float total = 0.0f;
            for (std::size_t s = 0; s < n_splits; ++s) {
                const std::size_t row = (s * n_batch + b) * n_heads + h;
                const float weight = std::exp(scratch.partial_max[row] - global_max);
                total += weight * scratch.partial_sum[row];
                const float* partial = scratch.partial_out.data() + row * head_dim;
                for (std::size_t d = 0; d < head_dim; ++d) dst[d] += weight * partial[d];
            }
            const float inv_total = 1.0f / total;
            for (std::size_t d = 0; d < head_dim; ++d) dst[d] *= inv_total;
        }
    }
    return 4ull * n_batch * n_heads * head_dim * n_ctx;
}

}  // namespace kvbench
