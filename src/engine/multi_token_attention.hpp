// MultiTokenScratch: what attend_decode_tokens (attention.hpp) keeps for a step of Q > 1 query
// tokens (docs/model.md, "Multi-token queries"). Private to src/engine (attention.cpp).
#pragma once

#include "kernels/attention_types.hpp"
#include "kernels/task_ranges.hpp"

#include "kvbench/engine/config.hpp"

#include <cstddef>
#include <vector>

namespace kvbench {

// Sized once for a config's Q = n_query_tokens. A token row is one (token, query head) of a
// (batch row, KV head) group: row i·group_size + r is token i's head kv_head·group_size + r, so
// one kernel call scores all Q·group_size of them against the positions every token sees.
struct MultiTokenScratch {
    // Requires: config validated with n_query_tokens > 1, n_threads >= 1.
    MultiTokenScratch(const ModelConfig& config, std::size_t max_seq_len, std::size_t n_threads);
    std::size_t bytes() const;
    // bytes() of a scratch built with these arguments, without building it. Throws SizeOverflow.
    static std::size_t bytes_for(const ModelConfig& config, std::size_t max_seq_len, std::size_t n_threads);

    std::size_t n_tokens;      // Q
    std::size_t max_splits;    // splits of the common positions at most: attend_decode's
    std::vector<float> queries;     // (n_batch, n_kv_heads, Q·group_size, head_dim) floats: each group's token rows
    std::vector<float> common_out;  // (max_splits, n_batch, n_kv_heads, Q·group_size, head_dim) floats
    std::vector<float> common_max;  // (max_splits, n_batch, n_kv_heads, Q·group_size) floats
    std::vector<float> common_sum;  // the same shape as common_max
    // Each token's own positions after the common ones: (n_batch, n_kv_heads, Q·group_size, head_dim)
    // floats, token 0's rows unused (it has none).
    std::vector<float> tail_out;
    std::vector<float> tail_max;  // (n_batch, n_kv_heads, Q·group_size) floats
    std::vector<float> tail_sum;  // the same shape as tail_max
    std::vector<AttendWorkspace> workspaces;  // (n_threads), each for Q·group_size rows
    TaskRanges tasks;                         // the (batch row, KV head) groups' tasks, dealt by each call
};

}  // namespace kvbench
