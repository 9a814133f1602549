// The planner's answers: the largest batch at a context and the longest context at a batch whose
// predicted time per output token meets a target and whose weights and cache fit
// (docs/planning.md, "The planner").
#pragma once

#include "kvbench/plan/latency_model.hpp"

#include <cstdint>
#include <optional>

namespace kvbench {

// Largest batch and context the planner searches: past them a deployment is not a question.
inline constexpr std::uint64_t max_planned_batch = std::uint64_t{1} << 24;
inline constexpr std::uint64_t max_planned_context = std::uint64_t{1} << 28;

struct PlanAnswer {
    // The largest value that meets the target and fits: 0 when even 1 does not; unset when the
    // search's largest does (a sliding window caps the cache, so every context is alike).
    std::optional<std::uint64_t> value;
    Limit limit = Limit::memory;  // what stops the next value (or 1, when value is 0)
};

// Whether a prediction meets the target: it fits, and its time per token is within tpot_s.
bool meets_target(const Prediction& prediction, double tpot_s);

// The largest B at context seq_len. Requires: seq_len >= 1, tpot_s > 0.
PlanAnswer max_batch_for_target(const Deployment& deployment, std::uint64_t seq_len, double tpot_s);

// The longest N at batch `batch`, a shared prefix's tokens and each sequence's own; 0 when not
// one token of its own past the prefix meets the target. Requires: batch >= 1, tpot_s > 0,
// deployment.shared_prefix < max_planned_context.
PlanAnswer max_context_for_target(const Deployment& deployment, std::uint64_t batch, double tpot_s);

}  // namespace kvbench
