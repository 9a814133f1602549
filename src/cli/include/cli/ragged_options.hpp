// The ragged batches of `sweep` (docs/model.md, "Ragged batches"): one context per sequence,
// a pattern (--seq-lens) or a seeded distribution (--seq-dist), in place of --seq.
#pragma once

#include "kvbench/measure/sweep.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace kvbench {

// What the user typed; text until apply_ragged_options parses it.
struct RaggedCliOptions {
    std::optional<std::string> seq_lens;  // --seq-lens N1,N2,...
    std::optional<std::string> seq_dist;  // --seq-dist KIND:LO:HI
    std::optional<std::string> query_tokens;  // --query-tokens Q1,Q2,...
};

// Registers --seq-lens, --seq-dist and --query-tokens on `command`, the first two each excluding the other and --seq (which
// `command` must already have).
void add_ragged_options(CLI::App& command, RaggedCliOptions& options);

// Sets spec's ragged batch from `options`, a distribution drawn from `seed` (the run's --seed).
// Throws ConfigError naming --seq-lens for a value that is not a whole number from 1 to 2^30,
// and --seq-dist as parse_seq_dist does (whether the pattern fits each --batch is expand()'s),
// and --query-tokens for a value that is not a whole number from 1 to 1024.
void apply_ragged_options(const RaggedCliOptions& options, std::uint64_t seed, SweepSpec& spec);

}  // namespace kvbench
