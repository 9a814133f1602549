// --block, --ffn-dim, --weight-dtype and the experts' options: their help, and their values laid
// into the grid's spec over the model's own.
#include "cli/layer_options.hpp"

#include "cli/value_list.hpp"
#include "kvbench/engine/ascii_case.hpp"
#include "kvbench/engine/config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace kvbench {

namespace {


// The comma-separated items of `text`. Throws ConfigError naming `option` on an empty item.
std::vector<std::string> list_items(const std::string& text, std::string_view option, std::string_view choices) {
    std::vector<std::string> items;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = text.find(',', start);
        const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (item.empty()) {
            throw ConfigError(fmt::format("{} \"{}\": an empty item (give {}, comma-separated)", option, text, choices));
        }
        items.push_back(item);
        if (comma == std::string::npos) return items;
        start = comma + 1;
    }
}

template <typename T>
void push_unique(std::vector<T>& values, T value) {
    if (std::find(values.begin(), values.end(), value) == values.end()) values.push_back(value);
}

std::vector<BlockKind> parse_blocks(const std::string& text) {
    std::vector<BlockKind> blocks;
    for (const std::string& item : list_items(text, "--block", "attn or full")) {
        push_unique(blocks, parse_choice(item, "--block", {"attn", "full"}) == "full" ? BlockKind::full
                                                                                     : BlockKind::attention);
    }
    return blocks;
}

std::vector<WeightDtype> parse_weight_dtypes(const std::string& text) {
    std::vector<WeightDtype> dtypes;
    for (const std::string& item : list_items(text, "--weight-dtype", "f32, bf16, f16 or int8")) {
        const std::string lower = lowercase(item);
        if (lower == "fp8" || lower == "int4") {
            throw ConfigError(fmt::format("--weight-dtype {}: kvbench memory plans it, but sweep and generate store "
                                          "weights only as f32, bf16, f16 or int8",
                                          lower));
        }
        push_unique(dtypes, *find_weight_dtype(parse_choice(item, "--weight-dtype", {"f32", "bf16", "f16", "int8"})));
    }
    return dtypes;
}

// The experts typed on the command line, over the model's (or none).
void apply_experts(const LayerCliOptions& options, MoeShape& moe) {
    if (options.experts) moe.n_experts = parse_count(*options.experts, "--experts", 1, max_experts);
    if (options.experts_active) moe.n_active = parse_count(*options.experts_active, "--experts-active", 1, max_experts);
    if (options.shared_experts) {
        moe.n_shared = static_cast<std::size_t>(parse_whole_number(*options.shared_experts, "--shared-experts", 0, max_experts));
    }
    if (options.expert_dim) moe.expert_dim = parse_count(*options.expert_dim, "--expert-dim", 1, max_ffn_dim);
    // One expert per token unless told: the smallest routing, Switch Transformer's.
    if (moe.n_experts != 0 && moe.n_active == 0) moe.n_active = 1;
}

}  // namespace

void add_layer_options(CLI::App& command, LayerCliOptions& options) {
    command.add_option("--block", options.block,
                       "What each layer is, a LIST of: attn, the attention block alone (the default: it studies "
                       "the cache); full, the layer real models run: RMSNorm, RoPE, attention, RMSNorm, SwiGLU "
                       "MLP (the default with --model and --model-config)")
        ->type_name("LIST");
    command.add_option("--ffn-dim", options.ffn_dim,
                       "The full layer's MLP widths F, a LIST (Llama-3-8B: 14336; default: the model's)")
        ->type_name("LIST");
    command.add_option("--weight-dtype", options.weight_dtype, weight_dtype_help)
        ->type_name("LIST")
        ->capture_default_str();
    command.add_option("--experts", options.experts,
                       "Routed experts E of a full layer in place of its dense MLP (Mixtral: 8); a seeded router "
                       "sends each token to --experts-active of them, and a step reads only the experts some "
                       "token was routed to")
        ->type_name("E");
    command.add_option("--experts-active", options.experts_active, "Experts K each token is routed to (default 1)")
        ->type_name("K");
    command.add_option("--shared-experts", options.shared_experts, "Experts S every token runs (default 0)")
        ->type_name("S");
    command.add_option("--expert-dim", options.expert_dim, "Each expert's SwiGLU width Fe")->type_name("Fe");
}

void apply_layer_options(const LayerCliOptions& options, const std::optional<ModelConfig>& model, SweepSpec& spec) {
    if (model) {
        spec.base = *model;
        // apply_latent_options lays the model's latent widths (or the typed ones) over the grid.
        spec.base.mla = MlaShape{};
        if (model->block == BlockKind::full) {
            spec.blocks = {BlockKind::full};
            spec.ffn_dim = {model->ffn_dim};
        }
        if (!model->layer_windows.empty()) {
            spec.window = *std::max_element(model->layer_windows.begin(), model->layer_windows.end());
            spec.window_layers = window_pattern(*model);
        }
        spec.base.layer_windows.clear();  // laid over each --layers value from spec.window
    }
    if (options.block) spec.blocks = parse_blocks(*options.block);
    if (options.ffn_dim) spec.ffn_dim = parse_value_list(*options.ffn_dim, "--ffn-dim", max_ffn_dim);
    spec.weight_dtypes = parse_weight_dtypes(options.weight_dtype);
    apply_experts(options, spec.base.moe);

    const bool full = std::find(spec.blocks.begin(), spec.blocks.end(), BlockKind::full) != spec.blocks.end();
    if (!full && options.ffn_dim) {
        throw ConfigError(fmt::format("--ffn-dim {}: the MLP is part of the full layer; add --block full",
                                      *options.ffn_dim));
    }
    if (!full && options.experts) {
        throw ConfigError(fmt::format("--experts {}: experts replace the full layer's MLP; add --block full",
                                      *options.experts));
    }
    if (full && spec.ffn_dim == std::vector<std::size_t>{0} && !spec.base.has_experts()) {
        throw ConfigError("--block full: its MLP needs a width; add --ffn-dim F (Llama-3-8B: 14336) or --experts E "
                          "--expert-dim Fe, or name a model with --model");
    }
}

}  // namespace kvbench
