// Parsing and checking kvbench's preset file (data/models.json).
#include "kvbench/plan/model_preset.hpp"

#include "kvbench/engine/ascii_case.hpp"
#include "kvbench/engine/config.hpp"
#include "kvbench/engine/cost_model.hpp"
#include "kvbench/files/json_unique_keys.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace kvbench {

namespace {

using nlohmann::json;

// Every error names the file, the record and the field, so a broken edit is found at once.
struct RecordContext {
    std::string_view file_name;
    std::string model;  // "'llama-3-8b'", or "#3" before the name is known

    [[noreturn]] void fail(std::string_view field, std::string_view rule) const {
        throw ConfigError(fmt::format("{}: model {}: field '{}': {}", file_name, model, field, rule));
    }
};

// The most parameters a preset may have, as --params: 2^50, a thousand times the largest model.
constexpr std::uint64_t max_params = std::uint64_t{1} << 50;

// A whole number from 1 to `max_value`. The default bound is the CLI's largest --dim, as a
// config.json's fields have (hf_config.cpp): past it counts overflow, and the error would
// blame --seq or a field checked later ("4 does not divide heads 18446744073709551615").
std::uint64_t positive_integer(const json& record, std::string_view field, const RecordContext& context,
                               std::uint64_t max_value = max_q_dim) {
    const auto it = record.find(field);
    if (it == record.end()) context.fail(field, "missing");
    if (!it->is_number_integer()) context.fail(field, fmt::format("must be a whole number, not {}", it->dump()));
    if (!it->is_number_unsigned() || it->get<std::uint64_t>() == 0) {
        context.fail(field, fmt::format("must be at least 1, not {}", it->dump()));
    }
    if (it->get<std::uint64_t>() > max_value) {
        context.fail(field, fmt::format("must be at most {}, not {}", max_value, it->dump()));
    }
    return it->get<std::uint64_t>();
}

// An optional positive finite number: absent is `otherwise`.
double positive_real(const json& record, std::string_view field, double otherwise, const RecordContext& context) {
    const auto it = record.find(field);
    if (it == record.end() || it->is_null()) return otherwise;
    if (!it->is_number() || !(it->get<double>() > 0) || !std::isfinite(it->get<double>())) {
        context.fail(field, fmt::format("must be a positive number, not {}", it->dump()));
    }
    return it->get<double>();
}

// An optional count from 0 to `max_value`: absent is 0.
std::uint64_t whole_number(const json& record, std::string_view field, const RecordContext& context,
                           std::uint64_t max_value) {
    const auto it = record.find(field);
    if (it == record.end()) return 0;
    if (!it->is_number_unsigned()) context.fail(field, fmt::format("must be a whole number, not {}", it->dump()));
    if (it->get<std::uint64_t>() > max_value) {
        context.fail(field, fmt::format("must be at most {}, not {}", max_value, it->dump()));
    }
    return it->get<std::uint64_t>();
}

std::string text_field(const json& object, std::string_view field, const RecordContext& context,
                       std::string_view shown_as) {
    const auto it = object.find(field);
    if (it == object.end()) context.fail(shown_as, "missing");
    if (!it->is_string() || it->get<std::string>().empty()) context.fail(shown_as, "must be a non-empty string");
    return it->get<std::string>();
}

ModelPreset parse_preset(const json& record, const RecordContext& numbered) {
    if (!record.is_object()) numbered.fail("(record)", "must be an object {\"name\": ..., \"layers\": ...}");
    RecordContext context = numbered;
    ModelPreset preset;
    preset.name = text_field(record, "name", context, "name");
    context.model = fmt::format("'{}'", preset.name);

    const auto source = record.find("source");
    if (source == record.end()) context.fail("source", "missing (the config the numbers come from)");
    if (!source->is_object()) context.fail("source", "must be an object {\"repo\": ..., \"file\": ...}");
    preset.source = text_field(*source, "repo", context, "source.repo") + "/" +
                    text_field(*source, "file", context, "source.file");

    preset.n_layers = positive_integer(record, "layers", context, max_layers);
    preset.model_dim = positive_integer(record, "hidden_size", context);
    preset.n_heads = positive_integer(record, "heads", context);
    preset.n_kv_heads = positive_integer(record, "kv_heads", context);
    preset.head_dim = positive_integer(record, "head_dim", context);
    preset.n_params = positive_integer(record, "params", context, max_params);
    if (preset.n_heads % preset.n_kv_heads != 0) {
        context.fail("kv_heads", fmt::format("{} does not divide heads {}", preset.n_kv_heads, preset.n_heads));
    }
    // "window" (the older files' "sliding_window") on the layers "window_layers" marks.
    const auto window = record.find("window") != record.end() ? record.find("window") : record.find("sliding_window");
    if (window != record.end() && !window->is_null()) {
        const std::string field = window.key();
        const std::uint64_t w = positive_integer(record, field, context);
        if (w > std::numeric_limits<std::uint32_t>::max()) context.fail(field, "must be below 2^32");
        std::string pattern = "all";
        if (record.contains("window_layers")) pattern = text_field(record, "window_layers", context, "window_layers");
        try {
            preset.layer_windows = layer_windows_for(static_cast<std::uint32_t>(w), pattern, preset.n_layers);
        } catch (const ConfigError&) {
            context.fail("window_layers", "must be all, or a unit of L (local) and G (global) letters such as LG");
        }
    } else if (record.contains("window_layers")) {
        context.fail("window_layers", "needs a window");
    }
    if (const auto sinks = record.find("sinks"); sinks != record.end()) {
        if (!sinks->is_boolean()) context.fail("sinks", "must be true or false");
        preset.attention_sinks = sinks->get<bool>();
    }
    if (const auto ffn = record.find("ffn_dim"); ffn != record.end() && !ffn->is_null()) {
        preset.ffn_dim = positive_integer(record, "ffn_dim", context, max_ffn_dim);
    }
    if (const auto mla = record.find("mla"); mla != record.end()) {
        if (!mla->is_object()) context.fail("mla", "must be an object {\"kv_lora_rank\": ..., ...}");
        const RecordContext inner{context.file_name, context.model + " mla"};
        preset.mla.kv_lora_rank = positive_integer(*mla, "kv_lora_rank", inner);
        preset.mla.rope_dim = positive_integer(*mla, "rope_dim", inner);
        preset.mla.nope_dim = positive_integer(*mla, "nope_dim", inner);
        preset.mla.v_head_dim = positive_integer(*mla, "v_head_dim", inner);
        if (const auto q = mla->find("q_lora_rank"); q != mla->end() && !q->is_null()) {
            preset.mla.q_lora_rank = positive_integer(*mla, "q_lora_rank", inner);
        }
    }
    if (const auto experts = record.find("experts"); experts != record.end()) {
        if (!experts->is_object()) context.fail("experts", "must be an object {\"routed\": ..., \"active\": ...}");
        const RecordContext inner{context.file_name, context.model + " experts"};
        preset.moe.n_experts = positive_integer(*experts, "routed", inner, max_experts);
        preset.moe.n_active = positive_integer(*experts, "active", inner, max_experts);
        preset.moe.expert_dim = positive_integer(*experts, "dim", inner, max_ffn_dim);
        preset.moe.n_shared = whole_number(*experts, "shared", inner, max_experts);
        preset.moe.n_dense_layers = whole_number(*experts, "dense_layers", inner, max_layers);
        if (preset.moe.n_active > preset.moe.n_experts) {
            inner.fail("active", fmt::format("{} is more than the {} routed experts", preset.moe.n_active,
                                             preset.moe.n_experts));
        }
        if (preset.moe.n_dense_layers > 0 && preset.ffn_dim == 0) {
            context.fail("ffn_dim", "missing (the width of the dense layers before the experts)");
        }
    }
    if (const auto trained = record.find("max_position_embeddings"); trained != record.end() && !trained->is_null()) {
        preset.max_position_embeddings = positive_integer(record, "max_position_embeddings", context);
    }
    preset.rope_theta = positive_real(record, "rope_theta", default_rope_theta, context);
    try {
        validate(model_config_of(preset));
    } catch (const ConfigError& error) {
        context.fail("(shape)", error.what());
    }
    // At B = N = 1 (model_config_of's): a shape past it is the file's fault, not --seq's.
    if (!countable(model_config_of(preset))) {
        context.fail("(shape)", fmt::format("hidden_size {}, {} heads of {} and {} layers: one token's FLOPs or bytes "
                                            "could pass what 64 bits hold",
                                            preset.model_dim, preset.n_heads, preset.head_dim, preset.n_layers));
    }
    return preset;
}

}  // namespace

std::vector<ModelPreset> parse_presets(std::string_view json_text, std::string_view file_name) {
    json document;
    try {
        document = parse_json_unique_keys<json>(json_text);
    } catch (const json::parse_error& error) {
        throw ConfigError(fmt::format("{}: not JSON: {}", file_name, error.what()));
    } catch (const RefusedJson& error) {
        throw ConfigError(fmt::format("{}: {}", file_name, error.what()));
    }
    if (!document.is_object() || !document.contains("models") || !document["models"].is_array()) {
        throw ConfigError(fmt::format("{}: must be an object with a \"models\" array", file_name));
    }
    std::vector<ModelPreset> presets;
    std::size_t index = 0;
    for (const json& record : document["models"]) {
        ++index;
        const RecordContext context{file_name, fmt::format("#{}", index)};
        ModelPreset preset = parse_preset(record, context);
        // --model reads a name in any case (find_preset).
        if (const auto clash = name_clash(presets, preset.name, "model", "--model")) {
            RecordContext{file_name, fmt::format("'{}'", preset.name)}.fail("name", *clash);
        }
        presets.push_back(std::move(preset));
    }
    if (presets.empty()) throw ConfigError(fmt::format("{}: the \"models\" array is empty", file_name));
    return presets;
}

std::optional<std::uint64_t> largest_window(const ModelPreset& model) {
    if (model.layer_windows.empty()) return std::nullopt;
    return *std::max_element(model.layer_windows.begin(), model.layer_windows.end());
}

std::string window_label(const ModelPreset& model) {
    const std::optional<std::uint64_t> window = largest_window(model);
    if (!window) return "";
    const std::string pattern = window_pattern(model_config_of(model));
    return pattern == "all" ? fmt::format("{}", *window) : fmt::format("{}:{}", *window, pattern);
}

ModelConfig model_config_of(const ModelPreset& model) {
    ModelConfig config;
    config.model_dim = static_cast<std::size_t>(model.model_dim);
    config.n_heads = static_cast<std::size_t>(model.n_heads);
    config.n_kv_heads = static_cast<std::size_t>(model.n_kv_heads);
    config.n_layers = static_cast<std::size_t>(model.n_layers);
    if (model.head_dim * model.n_heads != model.model_dim) config.explicit_head_dim = static_cast<std::size_t>(model.head_dim);
    config.layer_windows = model.layer_windows;
    config.attention_sinks = model.attention_sinks;
    config.rope_theta = model.rope_theta;
    config.mla = model.mla;
    const bool dense_mlp_known = model.ffn_dim != 0 || model.moe.n_experts == 0 || model.moe.n_dense_layers == 0;
    if ((model.ffn_dim != 0 || model.moe.n_experts != 0) && dense_mlp_known) {
        config.block = BlockKind::full;
        config.moe = model.moe;
        // A model all of whose layers have experts keeps no dense width.
        if (model.moe.n_experts == 0 || model.moe.n_dense_layers != 0) config.ffn_dim = static_cast<std::size_t>(model.ffn_dim);
    }
    return config;
}

std::optional<std::string> unapplied_parts_note(const ModelPreset& model, std::string_view flag) {
    // The rest of the model (windows, sinks, MLP, experts) runs: apply_layer_options lays it under the grid.
    if (model.mla.kv_lora_rank == 0) return std::nullopt;
    return fmt::format("{}: its latent attention (kv_lora_rank {}) runs as multi-head attention of {} heads of {}", flag,
                       model.mla.kv_lora_rank, model.n_heads, model.head_dim);
}

const std::vector<ModelPreset>& builtin_presets() {
    // A broken data/models.json fails the build's tests, not a user's run.
    static const std::vector<ModelPreset> presets = parse_presets(builtin_presets_json(), "data/models.json");
    return presets;
}

const ModelPreset* find_preset(const std::vector<ModelPreset>& presets, std::string_view name) {
    for (const ModelPreset& preset : presets) {
        if (preset.name == name) return &preset;
    }
    return nullptr;
}

}  // namespace kvbench
