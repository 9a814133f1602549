// The attention variants of `sweep` and `generate` (docs/model.md): sliding windows per layer
// and attention sinks, laid over every point of the grid.
#pragma once

#include "kvbench/measure/sweep.hpp"

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace kvbench {

// What the user typed; text until apply_attention_options parses it.
struct AttentionCliOptions {
    std::optional<std::string> window;         // --window W; unset: every layer global
    std::optional<std::string> window_layers;  // --window-layers PATTERN; unset: all
    bool sinks = false;                        // --sinks
};

// Registers --window, --window-layers and --sinks on `command`.
void add_attention_options(CLI::App& command, AttentionCliOptions& options);

// Sets spec's window and its layer pattern from `options` (over a model's), and adds --sinks. Throws ConfigError naming
// --window for a W that is not a whole number from 1 to 2^31, and --window-layers given
// without --window (a bad pattern is refused by expand(), per --layers value).
void apply_attention_options(const AttentionCliOptions& options, SweepSpec& spec);

}  // namespace kvbench
