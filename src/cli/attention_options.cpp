// --window, --window-layers and --sinks: their help, and their values laid into the grid's spec.
#include "cli/attention_options.hpp"

#include "cli/value_list.hpp"
#include "kvbench/engine/config.hpp"

#include <fmt/format.h>

namespace kvbench {

namespace {

// The largest window a layer stores (the per-layer window is 32 bits): far past any context.
constexpr std::size_t max_window = std::size_t{1} << 31;

}  // namespace

void add_attention_options(CLI::App& command, AttentionCliOptions& options) {
    command.add_option("--window", options.window,
                       "Sliding window W of the local layers: each attends to its last W positions and caches "
                       "only those, a ring (Mistral 4096, Gemma 2 4096, Gemma 3 1024, GPT-OSS 128)")
        ->type_name("W");
    command.add_option("--window-layers", options.window_layers,
                       "Which layers --window makes local: all (default), or a unit of L (local) and G (global) "
                       "repeated over the layers, layer 0 first: LG for Gemma 2 and GPT-OSS, LLLLLG for Gemma 3")
        ->type_name("PATTERN");
    command.add_flag("--sinks", options.sinks,
                     "A learned sink logit per query head joins every softmax and takes no value (GPT-OSS)");
}

void apply_attention_options(const AttentionCliOptions& options, SweepSpec& spec) {
    if (options.window_layers && !options.window) {
        throw ConfigError(fmt::format("--window-layers {}: says which layers are local, but no --window W says how "
                                      "far they see; add --window",
                                      *options.window_layers));
    }
    if (options.window) spec.window = static_cast<std::uint32_t>(parse_count(*options.window, "--window", 1, max_window));
    if (options.window_layers) spec.window_layers = *options.window_layers;
    spec.base.attention_sinks = spec.base.attention_sinks || options.sinks;  // the model's, or --sinks
}

}  // namespace kvbench
