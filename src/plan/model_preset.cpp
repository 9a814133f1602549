// Parsing and checking kvbench's preset file (data/models.json).
#include "kvbench/plan/model_preset.hpp"

#include "kvbench/engine/config.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <set>

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

std::uint64_t positive_integer(const json& record, std::string_view field, const RecordContext& context) {
    const auto it = record.find(field);
    if (it == record.end()) context.fail(field, "missing");
    if (!it->is_number_integer()) context.fail(field, fmt::format("must be a whole number, not {}", it->dump()));
    if (!it->is_number_unsigned() || it->get<std::uint64_t>() == 0) {
        context.fail(field, fmt::format("must be at least 1, not {}", it->dump()));
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

ModelPreset parse_record(const json& record, const RecordContext& numbered) {
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

    preset.n_layers = positive_integer(record, "layers", context);
    preset.model_dim = positive_integer(record, "hidden_size", context);
    preset.n_heads = positive_integer(record, "heads", context);
    preset.n_kv_heads = positive_integer(record, "kv_heads", context);
    preset.head_dim = positive_integer(record, "head_dim", context);
    preset.n_params = positive_integer(record, "params", context);
    if (preset.n_heads % preset.n_kv_heads != 0) {
        context.fail("kv_heads", fmt::format("{} does not divide heads {}", preset.n_kv_heads, preset.n_heads));
    }
    if (const auto window = record.find("sliding_window"); window != record.end() && !window->is_null()) {
        preset.sliding_window = positive_integer(record, "sliding_window", context);
    }
    if (const auto trained = record.find("max_position_embeddings"); trained != record.end() && !trained->is_null()) {
        preset.max_position_embeddings = positive_integer(record, "max_position_embeddings", context);
    }
    return preset;
}

}  // namespace

std::vector<ModelPreset> parse_presets(std::string_view json_text, std::string_view file_name) {
    json document;
    try {
        document = json::parse(json_text);
    } catch (const json::parse_error& error) {
        throw ConfigError(fmt::format("{}: not JSON: {}", file_name, error.what()));
    }
    if (!document.is_object() || !document.contains("models") || !document["models"].is_array()) {
        throw ConfigError(fmt::format("{}: must be an object with a \"models\" array", file_name));
    }
    std::vector<ModelPreset> presets;
    std::set<std::string> names;
    std::size_t index = 0;
    for (const json& record : document["models"]) {
        ++index;
        const RecordContext context{file_name, fmt::format("#{}", index)};
        ModelPreset preset = parse_record(record, context);
        if (!names.insert(preset.name).second) {
            RecordContext{file_name, fmt::format("'{}'", preset.name)}.fail("name", "appears twice");
        }
        presets.push_back(std::move(preset));
    }
    if (presets.empty()) throw ConfigError(fmt::format("{}: the \"models\" array is empty", file_name));
    return presets;
}

std::optional<std::string> unapplied_window_note(const ModelPreset& model, std::string_view flag) {
    if (!model.sliding_window) return std::nullopt;
    return fmt::format("{}: its sliding window of {} tokens is not applied: every layer attends to all N "
                       "positions (kvbench memory caps the cache at the window)",
                       flag, *model.sliding_window);
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
