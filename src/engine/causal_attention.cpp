// Uncached causal attention as sgemm calls per block of query rows with a vectorised softmax between them, on the OpenMP pool.
#include "kvbench/engine/causal_attention.hpp"

#include "kernels/vector_math.hpp"
#include "kvbench/engine/blas.hpp"
#include "kvbench/engine/checked_size.hpp"

#include <algorithm>
#include <cmath>
#include <omp.h>

namespace kvbench {

CausalAttentionScratch::CausalAttentionScratch(std::size_t max_seq_len_, std::size_t n_threads_,
                                               std::size_t block_rows_)
    : n_threads(n_threads_),
      max_seq_len(max_seq_len_),
      block_rows(block_rows_),
      scores(checked_product({n_threads_, block_rows_, max_seq_len_})) {}

std::size_t CausalAttentionScratch::bytes() const { return scores.size() * sizeof(float); }

std::size_t CausalAttentionScratch::bytes_for(std::size_t max_seq_len_, std::size_t n_threads_,
                                              std::size_t block_rows_) {
    return checked_product({n_threads_, block_rows_, max_seq_len_, sizeof(float)});
}

namespace {

// row = the first n entries of softmax(row | sink): the sink logit joins the max and the
// normaliser and takes no value. Scalar: only models with sinks pay for it.
void softmax_row_with_sink(float* row, std::size_t n, float sink) {
    float max_logit = sink;
    for (std::size_t j = 0; j < n; ++j) max_logit = std::max(max_logit, row[j]);
    float sum = std::exp(sink - max_logit);
    for (std::size_t j = 0; j < n; ++j) {
        row[j] = std::exp(row[j] - max_logit);
        sum += row[j];
    }
    const float inv_sum = 1.0f / sum;
    for (std::size_t j = 0; j < n; ++j) row[j] *= inv_sum;
}

// Row i of a block's scores (absolute position first_row + i) may see keys [first_key, first_row + i]
// of the sequence, and the block's scores start at key `block_first_key`: the causal mask, and
// the sliding window's (window 0: none).
void masked_softmax_rows(float* scores, std::size_t stride, std::size_t first_row, std::size_t n_rows,
                         std::size_t block_first_key, std::size_t n_keys, std::size_t window, const float* sink) {
    for (std::size_t i = 0; i < n_rows; ++i) {
        float* row = scores + i * stride;
        const std::size_t end = first_row + i + 1;  // keys [.., end) are at or before the row
        const std::size_t first_key = std::max(block_first_key, window != 0 && end > window ? end - window : 0);
        std::fill(row, row + (first_key - block_first_key), 0.0f);
        if (sink != nullptr) {
            softmax_row_with_sink(row + (first_key - block_first_key), end - first_key, *sink);
        } else {
            softmax_row(row + (first_key - block_first_key), end - first_key);
        }
        std::fill(row + (end - block_first_key), row + (n_keys - block_first_key), 0.0f);
    }
}

}  // namespace

FlopCount attend_causal(const ModelConfig& config, std::size_t layer, const float* qkv, float* out,
                        CausalAttentionScratch& scratch, const std::atomic<bool>* stop, const float* sinks) {
    const std::size_t n_batch = config.n_batch;
    const std::size_t seq_len = config.seq_len;
    const std::size_t n_heads = config.n_heads;
    const std::size_t head_dim = config.head_dim();
    const std::size_t group_size = config.group_size();
    const std::size_t qkv_dim = config.qkv_dim();
    const std::size_t q_dim = config.q_dim();  // row stride of out
    const std::size_t kv_dim = config.kv_dim();
    const std::size_t block_rows = scratch.block_rows;
    const std::size_t n_blocks = (seq_len + block_rows - 1) / block_rows;
    const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
    const std::size_t window = config.window_of(layer);
    const auto n_tasks = static_cast<std::ptrdiff_t>(n_batch * n_heads * n_blocks);

    std::uint64_t executed = 0;
    std::uint64_t useful = 0;
    // Later blocks see more keys, so tasks differ in cost: hand them out dynamically.
    // A BLAS call inside this region runs single-threaded on its OpenMP worker.
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : executed, useful) \
    num_threads(static_cast<int>(scratch.n_threads))
    for (std::ptrdiff_t task = 0; task < n_tasks; ++task) {
        // An OpenMP loop cannot break: the tasks left after a stop end at once instead.
        if (stop != nullptr && stop->load(std::memory_order_relaxed)) continue;
        const auto index = static_cast<std::size_t>(task);
        // Longest blocks first: the tail of the schedule is then made of short ones.
        const std::size_t block = n_blocks - 1 - index % n_blocks;
        const std::size_t h = (index / n_blocks) % n_heads;
        const std::size_t b = index / (n_blocks * n_heads);
        const std::size_t kv_head = h / group_size;
        const std::size_t first_row = block * block_rows;
        const std::size_t n_rows = std::min(block_rows, seq_len - first_row);
        const std::size_t n_keys = first_row + n_rows;
        // A window also skips the keys left of it: the block's first row sees none before this.
        const std::size_t first_key = window != 0 && first_row + 1 > window ? first_row + 1 - window : 0;
        const std::size_t n_block_keys = n_keys - first_key;

        const float* sequence = qkv + b * seq_len * qkv_dim;
        const float* queries = sequence + first_row * qkv_dim + h * head_dim;
        const float* keys = sequence + first_key * qkv_dim + q_dim + kv_head * head_dim;
        const float* values = sequence + first_key * qkv_dim + q_dim + kv_dim + kv_head * head_dim;
        float* scores = scratch.scores.data() +
                      static_cast<std::size_t>(omp_get_thread_num()) * block_rows * scratch.max_seq_len;

        gemm(Transpose::no, Transpose::yes, n_rows, n_block_keys, head_dim, scale, queries, qkv_dim, keys,
             qkv_dim, 0.0f, scores, scratch.max_seq_len);
        masked_softmax_rows(scores, scratch.max_seq_len, first_row, n_rows, first_key, n_keys, window,
                            sinks != nullptr ? sinks + h : nullptr);
        gemm(Transpose::no, Transpose::no, n_rows, head_dim, n_block_keys, 1.0f, scores, scratch.max_seq_len,
             values, qkv_dim, 0.0f, out + (b * seq_len + first_row) * q_dim + h * head_dim, q_dim);

        executed += 4ull * n_rows * n_block_keys * head_dim;
        // Row first_row + i sees min(first_row + i + 1, W) keys.
        for (std::size_t i = 0; i < n_rows; ++i) {
            useful += 4ull * head_dim * config.attended_positions(layer, first_row + i + 1);
        }
    }
    return {useful, executed};
}

}  // namespace kvbench
