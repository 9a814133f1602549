// Reading a Hugging Face config.json: the first of each field's family spellings that is present.
#include "kvbench/plan/hf_config.hpp"

#include "kvbench/engine/config.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <initializer_list>

namespace kvbench {

namespace {

using nlohmann::json;

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
    return model;
}

}  // namespace kvbench
