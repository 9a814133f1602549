// Reading a Hugging Face config.json: the first of each field's family spellings that is present.
#include "kvbench/plan/hf_config.hpp"

#include "kvbench/engine/config.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <initializer_list>
#include <iterator>

namespace kvbench {

namespace {

using nlohmann::json;

// Model types whose every layer attends alike, with one K and one V per KV head and position:
// what kvbench models. A config of another type is refused until it is known (docs/memory.md).
constexpr std::string_view uniform_model_types[] = {
    "gpt2",     "gpt_bigcode", "gpt_neox", "gptj",  "opt",       "bloom",  "falcon", "RefinedWeb",
    "RefinedWebModel", "llama", "mistral", "mixtral", "qwen2",   "qwen2_moe", "qwen3", "qwen3_moe",
    "gemma",    "phi",         "phi3",     "starcoder2", "stablelm", "olmo", "olmo2",  "granite",
};

struct NonUniformType {
    std::string_view model_type;
    std::string_view why;
};

// Model types known to differ from layer to layer (or to cache something else than K and V).
constexpr NonUniformType non_uniform_model_types[] = {
    {"gemma2", "alternates sliding-window and global layers"},
    {"gemma3", "has five sliding-window layers to one global"},
    {"gemma3_text", "has five sliding-window layers to one global"},
    {"gpt_oss", "alternates sliding-window and full layers"},
    {"cohere2", "has three sliding-window layers to one global"},
    {"llama4", "attends in chunks on three layers of four"},
    {"llama4_text", "attends in chunks on three layers of four"},
    {"deepseek_v2", "caches a latent vector (multi-head latent attention), not K and V"},
    {"deepseek_v3", "caches a latent vector (multi-head latent attention), not K and V"},
};

constexpr std::string_view not_modelled = "kvbench does not model it yet and would bill every layer alike";

class ConfigReader {
public:
    ConfigReader(const json& config, std::string_view file_name) : config_(config), file_name_(file_name) {}

    [[noreturn]] void fail(std::string_view field, std::string_view rule) const {
        throw ConfigError(fmt::format("{}: field '{}': {}", file_name_, field, rule));
    }

    // The first spelling present and not null, as a positive whole number; unset if none is.
    std::optional<std::uint64_t> find(std::initializer_list<std::string_view> spellings) const {
        for (std::string_view field : spellings) {
            const auto it = config_.find(field);
            if (it == config_.end() || it->is_null()) continue;
            if (!it->is_number_integer()) fail(field, fmt::format("must be a whole number, not {}", it->dump()));
            if (!it->is_number_unsigned() || it->get<std::uint64_t>() == 0) {
                fail(field, fmt::format("must be at least 1, not {}", it->dump()));
            }
            return it->get<std::uint64_t>();
        }
        return std::nullopt;
    }

    std::uint64_t require(std::initializer_list<std::string_view> spellings) const {
        if (auto value = find(spellings)) return *value;
        std::string names;
        for (std::string_view field : spellings) names += (names.empty() ? "" : " or ") + std::string(field);
        fail(*spellings.begin(), fmt::format("missing (looked for {})", names));
    }

    // An absent or null flag reads as `otherwise`.
    bool flag(std::string_view field, bool otherwise) const {
        const auto it = config_.find(field);
        if (it == config_.end() || it->is_null()) return otherwise;
        if (!it->is_boolean()) fail(field, fmt::format("must be true or false, not {}", it->dump()));
        return it->get<bool>();
    }

    std::string text(std::string_view field) const {
        const auto it = config_.find(field);
        return it != config_.end() && it->is_string() ? it->get<std::string>() : std::string();
    }

private:
    const json& config_;
    std::string_view file_name_;
};

// Throws the reader's ConfigError naming the field when the config describes what kvbench does
// not model: a nested language model, latent attention, layers that differ, an unknown type.
void refuse_unmodelled(const json& config, const ConfigReader& reader) {
    if (const auto text = config.find("text_config"); text != config.end() && text->is_object()) {
        reader.fail("text_config", "a multimodal config: its language model is nested in text_config, which kvbench "
                                   "does not read yet (save that object as a config.json of its own)");
    }
    if (config.contains("kv_lora_rank")) {
        reader.fail("kv_lora_rank", fmt::format("multi-head latent attention (DeepSeek) caches a latent vector, not K "
                                                "and V per head; {}", not_modelled));
    }
    if (const auto types = config.find("layer_types"); types != config.end() && types->is_array()) {
        for (const json& type : *types) {
            if (type != types->front()) {
                reader.fail("layer_types", fmt::format("layers of different attention ({} and {}); {}",
                                                       types->front().dump(), type.dump(), not_modelled));
            }
        }
    }
    if (const auto pattern = reader.find({"sliding_window_pattern"}); pattern && *pattern > 1) {
        reader.fail("sliding_window_pattern", fmt::format("one global layer in every {}, the others through a "
                                                          "sliding window; {}",
                                                          *pattern, not_modelled));
    }
    const std::string model_type = reader.text("model_type");
    for (const NonUniformType& known : non_uniform_model_types) {
        if (model_type == known.model_type) {
            reader.fail("model_type", fmt::format("'{}' {}; {}", model_type, known.why, not_modelled));
        }
    }
    if (std::find(std::begin(uniform_model_types), std::end(uniform_model_types), model_type) ==
        std::end(uniform_model_types)) {
        std::string known;
        for (std::string_view type : uniform_model_types) known += (known.empty() ? "" : ", ") + std::string(type);
        const std::string what = model_type.empty() ? "missing" : fmt::format("'{}' is not a type kvbench knows "
                                                                             "to attend alike on every layer",
                                                                             model_type);
        reader.fail("model_type", fmt::format("{} (it reads {})", what, known));
    }
}

}  // namespace

ModelPreset parse_hf_config(std::string_view json_text, std::string_view file_name, std::string name) {
    json config;
    try {
        config = json::parse(json_text);
    } catch (const json::parse_error& error) {
        throw ConfigError(fmt::format("{}: not JSON: {}", file_name, error.what()));
    }
    if (!config.is_object()) throw ConfigError(fmt::format("{}: not a config.json (expected an object)", file_name));
    const ConfigReader reader(config, file_name);
    refuse_unmodelled(config, reader);

    ModelPreset model;
    model.name = std::move(name);
    model.source = std::string(file_name);
    model.n_layers = reader.require({"num_hidden_layers", "n_layer", "num_layers"});
    model.model_dim = reader.require({"hidden_size", "n_embd", "n_embed", "d_model"});
    model.n_heads = reader.require({"num_attention_heads", "n_head", "num_heads"});

    // transformers' FalconAttention: the new decoder architecture reads num_kv_heads; otherwise
    // multi_query, true by default for Falcon, means one KV head whatever num_kv_heads says.
    const std::string model_type = reader.text("model_type");
    const bool falcon = model_type == "falcon" || model_type == "RefinedWeb" || model_type == "RefinedWebModel";
    // Before transformers took Falcon in, "RefinedWeb" named the 40B family (the new architecture,
    // n_head_kv KV heads) and "RefinedWebModel" the 7B one (multi-query).
    const bool new_architecture = reader.flag("new_decoder_architecture", model_type == "RefinedWeb");
    const bool multi_query = reader.flag("multi_query", falcon);
    if (multi_query && !new_architecture) {
        model.n_kv_heads = 1;
    } else {
        model.n_kv_heads =
            reader.find({"num_key_value_heads", "num_kv_heads", "n_head_kv"}).value_or(model.n_heads);
    }
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
    if (reader.flag("use_sliding_window", true)) model.sliding_window = reader.find({"sliding_window"});
    // Qwen2's layers from max_window_layers on use the window, the ones below do not.
    // (0 is a valid count here: every layer windowed.)
    const auto max_window_layers = config.find("max_window_layers");
    if (max_window_layers != config.end() && max_window_layers->is_number_unsigned() && model.sliding_window) {
        const auto full_layers = max_window_layers->get<std::uint64_t>();
        if (full_layers >= model.n_layers) {
            model.sliding_window.reset();
        } else if (full_layers > 0) {
            reader.fail("max_window_layers", fmt::format("{} of {} layers attend to everything and the others through "
                                                         "a window of {}; {}",
                                                         full_layers, model.n_layers, *model.sliding_window,
                                                         not_modelled));
        }
    }
    if (const auto layer_types = config.find("layer_types"); layer_types != config.end() && !layer_types->empty() &&
                                                             layer_types->front() == "full_attention") {
        model.sliding_window.reset();  // every layer full (mixed ones were refused)
    }
    model.max_position_embeddings = reader.find({"max_position_embeddings", "n_positions", "max_sequence_length"});
    // Falcon's configs leave it out; transformers' FalconConfig, and the Falcon paper, say 2048.
    if (!model.max_position_embeddings && falcon) model.max_position_embeddings = 2048;
    return model;
}

}  // namespace kvbench
