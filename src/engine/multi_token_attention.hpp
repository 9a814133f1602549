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
// one kernel call scores all Q·group_size of them against the positions every token sees (on a
// window layer the intersection of the tokens' windows).
struct MultiTokenScratch {
    // Requires: config validated with n_query_tokens > 1, n_threads >= 1.
    MultiTokenScratch(const ModelConfig& config, std::size_t max_seq_len, std::size_t n_threads);
    std::size_t bytes() const;
    // bytes() of a scratch built with these arguments, without building it. Throws SizeOverflow.
    static std::size_t bytes_for(const ModelConfig& config, std::size_t max_seq_len, std::size_t n_threads);

    std::size_t n_tokens;      // Q
    std::size_t max_splits;    // splits of the common positions at most: attend_decode's
    // Partial softmaxes of the common positions: each split's, in the ring's pieces (two where a
    // window layer's ring may wrap, ring_slots.hpp).
    std::size_t common_parts;  // max_splits·pieces
    // Partial softmaxes of each token's own positions outside the common ones: those after them,
    // and on a window layer those before them too, each in the ring's pieces (1, or 4).
    std::size_t own_parts;
    std::vector<float> queries;     // (n_batch, n_kv_heads, Q·group_size, head_dim) floats: each group's token rows
    std::vector<float> common_out;  // (common_parts, n_batch, n_kv_heads, Q·group_size, head_dim) floats
    std::vector<float> common_max;  // (common_parts, n_batch, n_kv_heads, Q·group_size) floats
    std::vector<float> common_sum;  // the same shape as common_max
    std::vector<float> own_out;     // (own_parts, n_batch, n_kv_heads, Q·group_size, head_dim) floats
    std::vector<float> own_max;     // (own_parts, n_batch, n_kv_heads, Q·group_size) floats
    std::vector<float> own_sum;     // the same shape as own_max
    std::vector<AttendWorkspace> workspaces;  // (n_threads), each for Q·group_size rows
    TaskRanges tasks;                         // the (batch row, KV head) groups' tasks, dealt by each call
};

}  // namespace kvbench
