// Reading a Hugging Face config.json: the first of each field's family spellings that is present,
// and the layers' windows, latent attention, MLP and experts as each family states them.
#include "kvbench/plan/hf_config.hpp"

#include "kvbench/engine/config.hpp"
#include "kvbench/engine/cost_model.hpp"
#include "kvbench/files/json_unique_keys.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <iterator>
#include <limits>

namespace kvbench {

namespace {

using nlohmann::json;

// Model types kvbench reads: every layer attends with K and V per KV head (or a latent, for
// DeepSeek), through a window on the layers the config marks. A config of another type is
// refused until it is known (docs/memory.md).
constexpr std::string_view known_model_types[] = {
    "gpt2",     "gpt_bigcode", "gpt_neox",  "gptj",        "opt",        "bloom",     "falcon",
    "RefinedWeb", "RefinedWebModel", "llama", "mistral",   "mixtral",    "qwen2",     "qwen2_moe",
    "qwen3",    "qwen3_moe",   "gemma",     "gemma2",      "gemma3",     "gemma3_text", "phi",
    "phi3",     "starcoder2",  "stablelm",  "olmo",        "olmo2",      "granite",   "cohere2",
    "gpt_oss",  "deepseek_v2", "deepseek_v3",
};

// Types whose MLP has two matrices (up, down) and no gate: their width is not the full layer's
// (docs/model.md), so their ffn_dim stays 0.
constexpr std::string_view two_matrix_mlp_types[] = {
    "gpt2", "gpt_bigcode", "gpt_neox", "gptj", "opt", "bloom", "falcon", "RefinedWeb", "RefinedWebModel",
    "phi",  "starcoder2",
};

// Where a family leaves the layer pattern out of its config, the one its modelling code fixes:
// a unit of L (windowed) and G (global) layers from layer 0.
struct DefaultPattern {
    std::string_view model_type;
    std::string_view pattern;
};
constexpr DefaultPattern default_window_patterns[] = {
    {"gemma2", "LG"},          // transformers' Gemma2: layer i slides when i is even
    {"gpt_oss", "LG"},         // openai/gpt-oss: sliding_window on even layers
    {"gemma3", "LLLLLG"},      // Gemma3TextConfig's sliding_window_pattern 6
    {"gemma3_text", "LLLLLG"},
    {"cohere2", "LLLG"},       // Cohere2Config's sliding_window_pattern 4
};

struct RefusedType {
    std::string_view model_type;
    std::string_view why;
};
constexpr RefusedType refused_model_types[] = {
    {"llama4", "attends in chunks of 8192 on three layers of four, which is not a sliding window"},
    {"llama4_text", "attends in chunks of 8192 on three layers of four, which is not a sliding window"},
};

constexpr std::string_view not_modelled = "kvbench does not model it";

class ConfigReader {
public:
    // `prefix` names a nested object in messages ("text_config.").
    ConfigReader(const json& config, std::string_view file_name, std::string prefix)
        : config_(config), file_name_(file_name), prefix_(std::move(prefix)) {}

    [[noreturn]] void fail(std::string_view field, std::string_view rule) const {
        throw ConfigError(fmt::format("{}: field '{}{}': {}", file_name_, prefix_, field, rule));
    }

    const json* get(std::string_view field) const {
        const auto it = config_.find(field);
        return it == config_.end() || it->is_null() ? nullptr : &*it;
    }

    // The first spelling present and not null, as a positive whole number; unset if none is.
    std::optional<std::uint64_t> find(std::initializer_list<std::string_view> spellings) const {
        for (std::string_view field : spellings) {
            const json* value = get(field);
            if (value == nullptr) continue;
            if (!value->is_number_integer()) fail(field, fmt::format("must be a whole number, not {}", value->dump()));
            if (!value->is_number_unsigned() || value->get<std::uint64_t>() == 0) {
                fail(field, fmt::format("must be at least 1, not {}", value->dump()));
            }
            // The CLI's largest --dim: no model field comes near, and past it counts overflow.
            if (value->get<std::uint64_t>() > max_q_dim) {
                fail(field, fmt::format("must be at most {}, not {}", max_q_dim, value->dump()));
            }
            return value->get<std::uint64_t>();
        }
        return std::nullopt;
    }

    std::uint64_t require(std::initializer_list<std::string_view> spellings, std::string_view why = "") const {
        if (auto value = find(spellings)) return *value;
        std::string names;
        for (std::string_view field : spellings) names += (names.empty() ? "" : " or ") + std::string(field);
        fail(*spellings.begin(), fmt::format("missing (looked for {}){}", names, why));
    }

    // A positive finite number (rope_theta, 500000.0 or 500000); absent or null: `otherwise`.
    double real(std::string_view field, double otherwise) const {
        const json* value = get(field);
        if (value == nullptr) return otherwise;
        if (!value->is_number() || !(value->get<double>() > 0) || !std::isfinite(value->get<double>())) {
            fail(field, fmt::format("must be a positive number, not {}", value->dump()));
        }
        return value->get<double>();
    }

    // A whole number that may be 0 (first_k_dense_replace); absent or null: `otherwise`.
    std::uint64_t count(std::string_view field, std::uint64_t otherwise) const {
        const json* value = get(field);
        if (value == nullptr) return otherwise;
        if (!value->is_number_unsigned()) fail(field, fmt::format("must be a whole number, not {}", value->dump()));
        return value->get<std::uint64_t>();
    }

    // An absent or null flag reads as `otherwise`.
    bool flag(std::string_view field, bool otherwise) const {
        const json* value = get(field);
        if (value == nullptr) return otherwise;
        if (!value->is_boolean()) fail(field, fmt::format("must be true or false, not {}", value->dump()));
        return value->get<bool>();
    }

    std::string text(std::string_view field) const {
        const json* value = get(field);
        return value != nullptr && value->is_string() ? value->get<std::string>() : std::string();
    }

private:
    const json& config_;
    std::string_view file_name_;
    std::string prefix_;
};

template <typename Range>
bool contains(const Range& range, std::string_view value) {
    return std::find(std::begin(range), std::end(range), value) != std::end(range);
}

void check_model_type(const std::string& model_type, const ConfigReader& reader) {
    for (const RefusedType& refused : refused_model_types) {
        if (model_type == refused.model_type) {
            reader.fail("model_type", fmt::format("'{}' {}; {}", model_type, refused.why, not_modelled));
        }
    }
    if (contains(known_model_types, model_type)) return;
    std::string known;
    for (std::string_view type : known_model_types) known += (known.empty() ? "" : ", ") + std::string(type);
    const std::string what =
        model_type.empty() ? "missing" : fmt::format("'{}' is not a type kvbench knows how its layers attend", model_type);
    reader.fail("model_type", fmt::format("{} (it reads {})", what, known));
}

std::uint64_t read_kv_heads(const ConfigReader& reader, const std::string& model_type, std::uint64_t n_heads) {
    // transformers' FalconAttention: the new decoder architecture reads num_kv_heads; otherwise
    // multi_query, true by default for Falcon, means one KV head whatever num_kv_heads says.
    const bool falcon = model_type == "falcon" || model_type == "RefinedWeb" || model_type == "RefinedWebModel";
    // Before transformers took Falcon in, "RefinedWeb" named the 40B family (the new architecture,
    // n_head_kv KV heads) and "RefinedWebModel" the 7B one (multi-query).
    const bool new_architecture = reader.flag("new_decoder_architecture", model_type == "RefinedWeb");
    const bool multi_query = reader.flag("multi_query", falcon);
    if (multi_query && !new_architecture) return 1;
    return reader.find({"num_key_value_heads", "num_kv_heads", "n_head_kv"}).value_or(n_heads);
}

void read_latent(const ConfigReader& reader, ModelPreset& model) {
    const std::optional<std::uint64_t> rank = reader.find({"kv_lora_rank"});
    if (!rank) return;
    constexpr std::string_view why = ", which latent attention (kv_lora_rank) needs";
    model.mla.kv_lora_rank = *rank;
    model.mla.rope_dim = reader.require({"qk_rope_head_dim"}, why);
    model.mla.nope_dim = reader.require({"qk_nope_head_dim"}, why);
    model.mla.v_head_dim = reader.require({"v_head_dim"}, why);
    model.mla.q_lora_rank = reader.find({"q_lora_rank"}).value_or(0);
    // The latent replaces the KV heads: each query head attends to it whole.
    model.n_kv_heads = model.n_heads;
    model.head_dim = model.mla.nope_dim + model.mla.rope_dim;
}

// The window, or unset when the config switches it off (null, use_sliding_window false).
std::optional<std::uint64_t> read_window(const ConfigReader& reader) {
    if (!reader.flag("use_sliding_window", true)) return std::nullopt;
    const std::optional<std::uint64_t> window = reader.find({"sliding_window"});
    if (window && *window > std::numeric_limits<std::uint32_t>::max()) {
        reader.fail("sliding_window", fmt::format("{} passes 2^32 tokens", *window));
    }
    return window;
}

void read_windows(const ConfigReader& reader, const json& config, const std::string& model_type, ModelPreset& model) {
    const std::optional<std::uint64_t> window = read_window(reader);
    const auto layers = static_cast<std::size_t>(model.n_layers);
    if (const json* types = reader.get("layer_types")) {
        if (!types->is_array() || types->size() != layers) {
            reader.fail("layer_types", fmt::format("must list one attention type per layer ({})", layers));
        }
        std::vector<std::uint32_t> windows(layers, 0);
        for (std::size_t layer = 0; layer < layers; ++layer) {
            const json& type = (*types)[layer];
            if (type == "sliding_attention") {
                if (!window) reader.fail("layer_types", "names sliding_attention layers, but sliding_window is not set");
                windows[layer] = static_cast<std::uint32_t>(*window);
            } else if (type != "full_attention") {
                reader.fail("layer_types", fmt::format("layer {} is {}: kvbench reads sliding_attention and "
                                                       "full_attention; {}",
                                                       layer, type.dump(), not_modelled));
            }
        }
        if (std::any_of(windows.begin(), windows.end(), [](std::uint32_t w) { return w != 0; })) {
            model.layer_windows = std::move(windows);
        }
        return;
    }
    if (!window) return;
    std::string pattern = "all";
    for (const DefaultPattern& family : default_window_patterns) {
        if (model_type == family.model_type) pattern = family.pattern;
    }
    // Gemma 3 and Cohere 2: layer i is global when (i + 1) is a multiple of the pattern.
    for (std::string_view field : {"sliding_window_pattern", "_sliding_window_pattern"}) {
        if (const std::optional<std::uint64_t> every = reader.find({field})) {
            if (*every > layers) reader.fail(field, fmt::format("{} is more than the {} layers", *every, layers));
            pattern = std::string(static_cast<std::size_t>(*every) - 1, 'L') + "G";
        }
    }
    model.layer_windows = layer_windows_for(static_cast<std::uint32_t>(*window), pattern, layers);
    // Qwen2's layers from max_window_layers on use the window, the ones below do not.
    const auto max_window_layers = config.find("max_window_layers");
    if (max_window_layers != config.end() && max_window_layers->is_number_unsigned()) {
        const auto full_layers = std::min<std::size_t>(max_window_layers->get<std::size_t>(), layers);
        std::fill(model.layer_windows.begin(), model.layer_windows.begin() + static_cast<std::ptrdiff_t>(full_layers), 0);
    }
    if (std::all_of(model.layer_windows.begin(), model.layer_windows.end(), [](std::uint32_t w) { return w == 0; })) {
        model.layer_windows.clear();
    }
}

void read_mlp(const ConfigReader& reader, const std::string& model_type, ModelPreset& model) {
    const std::optional<std::uint64_t> width = reader.find({"intermediate_size", "n_inner", "ffn_dim"});
    const std::optional<std::uint64_t> experts = reader.find({"num_experts", "num_local_experts", "n_routed_experts"});
    if (!experts) {
        if (!contains(two_matrix_mlp_types, model_type)) model.ffn_dim = width.value_or(0);
        return;
    }
    if (const std::uint64_t every = reader.count("moe_layer_freq", 1); every > 1) {
        reader.fail("moe_layer_freq", fmt::format("experts on one layer in {}; {}", every, not_modelled));
    }
    if (const std::uint64_t every = reader.count("decoder_sparse_step", 1); every > 1) {
        reader.fail("decoder_sparse_step", fmt::format("experts on one layer in {}; {}", every, not_modelled));
    }
    if (const json* dense = reader.get("mlp_only_layers"); dense != nullptr && !dense->empty()) {
        reader.fail("mlp_only_layers", fmt::format("dense layers {} among the experts; {}", dense->dump(), not_modelled));
    }
    MoeShape& moe = model.moe;
    moe.n_experts = *experts;
    moe.n_active = reader.require({"num_experts_per_tok", "experts_per_token"}, ", which experts need");
    // Mixtral and GPT-OSS give each expert's width as intermediate_size; the others keep that for
    // their dense layers.
    const std::optional<std::uint64_t> expert_width = reader.find({"moe_intermediate_size"});
    moe.expert_dim = expert_width ? *expert_width : reader.require({"intermediate_size"}, ", each expert's width");
    moe.n_dense_layers = reader.count("first_k_dense_replace", 0);
    if (moe.n_dense_layers > model.n_layers) {
        reader.fail("first_k_dense_replace", fmt::format("{} is more than the {} layers", moe.n_dense_layers,
                                                         model.n_layers));
    }
    if (moe.n_dense_layers > 0) model.ffn_dim = reader.require({"intermediate_size"}, ", the dense layers' width");
    moe.n_shared = reader.count("n_shared_experts", 0);
    // Qwen2-MoE's one shared expert is several experts wide: counted as that many experts.
    if (const std::optional<std::uint64_t> shared = reader.find({"shared_expert_intermediate_size"})) {
        if (*shared % moe.expert_dim != 0) {
            reader.fail("shared_expert_intermediate_size",
                        fmt::format("{} is not a whole number of experts of {}; {}", *shared, moe.expert_dim,
                                    not_modelled));
        }
        moe.n_shared = *shared / moe.expert_dim;
    }
    if (moe.n_active > moe.n_experts) {
        reader.fail("num_experts_per_tok", fmt::format("{} is more than the {} experts", moe.n_active, moe.n_experts));
    }
}

}  // namespace

ModelPreset parse_hf_config(std::string_view json_text, std::string_view file_name, std::string name) {
    json document;
    try {
        document = parse_json_unique_keys<json>(json_text);
    } catch (const json::parse_error& error) {
        throw ConfigError(fmt::format("{}: not JSON: {}", file_name, error.what()));
    } catch (const RefusedJson& error) {
        throw ConfigError(fmt::format("{}: {}", file_name, error.what()));
    }
    if (!document.is_object()) throw ConfigError(fmt::format("{}: not a config.json (expected an object)", file_name));
    // A multimodal model (Gemma 3, Llama 3.2 Vision) nests its language model in text_config.
    const auto text_config = document.find("text_config");
    const bool nested = text_config != document.end() && text_config->is_object();
    const json& config = nested ? *text_config : document;
    const ConfigReader reader(config, file_name, nested ? "text_config." : "");
    std::string model_type = reader.text("model_type");
    if (model_type.empty() && nested) model_type = ConfigReader(document, file_name, "").text("model_type");
    check_model_type(model_type, reader);

    ModelPreset model;
    model.name = std::move(name);
    model.source = std::string(file_name);
    model.n_layers = reader.require({"num_hidden_layers", "n_layer", "num_layers"});
    // Before anything is laid out per layer (the windows).
    if (model.n_layers > max_layers) {
        reader.fail("num_hidden_layers", fmt::format("must be at most {}, not {}", max_layers, model.n_layers));
    }
    model.model_dim = reader.require({"hidden_size", "n_embd", "n_embed", "d_model"});
    model.n_heads = reader.require({"num_attention_heads", "n_head", "num_heads"});
    model.n_kv_heads = read_kv_heads(reader, model_type, model.n_heads);
    if (model.n_heads % model.n_kv_heads != 0) {
        reader.fail("num_key_value_heads", fmt::format("{} KV heads do not divide {} attention heads",
                                                       model.n_kv_heads, model.n_heads));
    }
    if (auto head_dim = reader.find({"head_dim"})) {
        model.head_dim = *head_dim;
    } else {
        if (model.model_dim % model.n_heads != 0) {
            reader.fail("hidden_size", fmt::format("{} is not divisible by {} heads, and no head_dim is given",
                                                   model.model_dim, model.n_heads));
        }
        model.head_dim = model.model_dim / model.n_heads;
    }
    read_latent(reader, model);
    read_windows(reader, config, model_type, model);
    model.attention_sinks = model_type == "gpt_oss";
    read_mlp(reader, model_type, model);
    // Gemma 3's rope_theta is its global layers'; its local layers' rope_local_base_freq is not
    // modelled (ModelPreset::rope_theta).
    model.rope_theta = reader.real("rope_theta", default_rope_theta);

    model.max_position_embeddings = reader.find({"max_position_embeddings", "n_positions", "max_sequence_length"});
    // Falcon's configs leave it out; transformers' FalconConfig, and the Falcon paper, say 2048.
    const bool falcon = model_type == "falcon" || model_type == "RefinedWeb" || model_type == "RefinedWebModel";
    if (!model.max_position_embeddings && falcon) model.max_position_embeddings = 2048;
    try {
        validate(model_config_of(model));
    } catch (const ConfigError& error) {
        throw ConfigError(fmt::format("{}: {}", file_name, error.what()));
    }
    // At B = N = 1 (model_config_of's): a shape past it is the file's fault, where a sweep
    // would say "lower --seq or --batch".
    if (!countable(model_config_of(model))) {
        throw ConfigError(fmt::format("{}: hidden_size {}, {} heads of {} and {} layers: one token's FLOPs or bytes "
                                      "could pass what 64 bits hold",
                                      file_name, model.model_dim, model.n_heads, model.head_dim, model.n_layers));
    }
    return model;
}

}  // namespace kvbench
