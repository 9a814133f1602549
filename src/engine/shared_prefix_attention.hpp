// attend_decode_shared_prefix(): the cached step's attention when the batch shares its first P
// positions (docs/model.md, "Shared prefixes"). Private to src/engine (attention.cpp).
#pragma once

#include "kernels/attention_types.hpp"
#include "kernels/task_ranges.hpp"

#include "kvbench/engine/attention.hpp"

#include <cstddef>
#include <vector>

namespace kvbench {

// What the prefix pass keeps besides DecodeAttentionScratch's partial rows (which hold the
// suffixes'), sized once. A prefix row is one (sequence, query head) of a KV head's group:
// row b·group_size + r is sequence b's head kv_head·group_size + r.
struct SharedPrefixScratch {
    // Requires: config validated with a shared prefix, n_threads >= 1.
    SharedPrefixScratch(const ModelConfig& config, std::size_t max_seq_len, std::size_t n_threads);
    std::size_t bytes() const;
    // bytes() of a scratch built with these arguments, without building it. Throws SizeOverflow.
    static std::size_t bytes_for(const ModelConfig& config, std::size_t max_seq_len, std::size_t n_threads);

    std::size_t max_prefix_splits;      // splits of one KV head's prefix at most
    std::vector<float> queries;         // (n_kv_heads, n_batch·group_size, head_dim) floats: each KV head's query rows
    std::vector<float> prefix_out;      // (max_prefix_splits, n_kv_heads, n_batch·group_size, head_dim) floats
    std::vector<float> prefix_max;      // (max_prefix_splits, n_kv_heads, n_batch·group_size) floats
    std::vector<float> prefix_sum;      // the same shape as prefix_max
    std::vector<AttendWorkspace> workspaces;  // (n_threads), each for n_batch·group_size rows
    TaskRanges tasks;                   // the prefix tasks, then the suffix tasks, dealt by each call
};

// attend_decode's contract for a layer with a shared prefix of P = cache.shared_prefix(layer)
// positions: for each KV head, the prefix is read once for the query rows of every sequence
// (one attend_group call of n_batch·group_size rows per split of it), each sequence's own
// positions [P, N_b) once for its group's rows (N_b = n_ctx less a ragged row's lag), and the
// two partial softmaxes merged by their running max and sum in a fixed order. Returns the useful
// FLOPs of attend_decode, 4·H·dh·Σ_b N_b (every query still attends to every position,
// docs/counting.md), and the FLOPs executed.
// Requires: attend_decode's; config.shared_prefix == cache.shared_prefix(layer) > 0 (a global
// layer); every row's N_b at least min(P, n_ctx) (else std::logic_error); scratch built for
// this config.
FlopCount attend_decode_shared_prefix(const ModelConfig& config, const float* q, std::size_t q_stride,
                                      const KvCache& cache, std::size_t layer, std::size_t n_ctx, float* out,
                                      DecodeAttentionScratch& scratch, const float* sinks);

}  // namespace kvbench
