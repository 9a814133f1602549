// Resolving a model named on the command line, and applying it to the sweep's and generate's axes.
#include "cli/model_options.hpp"

#include "cli/suggest.hpp"
#include "kvbench/engine/ascii_case.hpp"
#include "kvbench/engine/config.hpp"
#include "kvbench/files/input_file.hpp"
#include "kvbench/plan/hf_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

namespace kvbench {

namespace {

// The whole file, or a ConfigError naming `option`.
std::string read_text_file(const std::string& path, std::string_view option) {
    try {
        return read_input_file(path);
    } catch (const InputFileError& error) {
        throw ConfigError(fmt::format("{} {}: {} (name a JSON file)", option, path, error.what()));
    }
}

struct ModelChoice {
    std::optional<std::string> name;    // --model
    std::optional<std::string> config;  // --model-config
};

}  // namespace

std::vector<ModelPreset> load_presets(const std::optional<std::string>& presets_file) {
    if (!presets_file) return builtin_presets();
    const std::string text = read_text_file(*presets_file, "--presets");
    try {
        return parse_presets(text, *presets_file);
    } catch (const ConfigError& error) {
        throw ConfigError(fmt::format("--presets {}", error.what()));  // the message starts with the file's name
    }
}

void add_presets_option(CLI::App& command, std::optional<std::string>& presets_file) {
    command.add_option("--presets", presets_file, "Preset file to read instead of the built-in presets (the schema "
                                                  "of data/models.json)")
        ->type_name("FILE");
}

const ModelPreset& find_model(const std::vector<ModelPreset>& presets, std::string_view name) {
    if (const ModelPreset* preset = find_preset(presets, name)) return *preset;
    // Model names are written in many cases (Llama-3-8B, LLAMA-3-8B): any of them names the preset.
    const std::string lower = lowercase(name);
    for (const ModelPreset& preset : presets) {
        if (lowercase(preset.name) == lower) return preset;
    }
    std::vector<std::string> names;
    for (const ModelPreset& preset : presets) names.push_back(preset.name);
    const std::optional<std::string> hint = suggest_name(lower, names);
    throw ConfigError(fmt::format("--model {}: unknown model{}; `kvbench models` lists them, --model-config FILE "
                                  "reads any Hugging Face config.json",
                                  name, hint ? fmt::format(" (did you mean {}?)", *hint) : ""));
}

std::vector<ModelPreset> find_models(const std::vector<ModelPreset>& presets, const std::vector<std::string>& names) {
    std::vector<ModelPreset> models;
    for (const std::string& name : names) {
        const ModelPreset& model = find_model(presets, name);
        const auto same = [&model](const ModelPreset& m) { return m.name == model.name; };
        if (std::none_of(models.begin(), models.end(), same)) models.push_back(model);
    }
    return models;
}

ModelPreset read_model_config(const std::string& path) {
    const std::string text = read_text_file(path, "--model-config");
    const std::filesystem::path file(path);
    // Hugging Face snapshots keep every model's config.json in a directory named after the model.
    const std::string parent = std::filesystem::absolute(file).parent_path().filename().string();
    std::string name = file.filename() == "config.json" && !parent.empty() ? parent : file.stem().string();
    try {
        return parse_hf_config(text, path, std::move(name));
    } catch (const ConfigError& error) {
        throw ConfigError(fmt::format("--model-config {}", error.what()));
    }
}

void add_model_options(CLI::App& command, std::string& dim, std::string& heads, std::string& kv_heads,
                       std::string& layers, std::optional<std::string>& head_dim, std::optional<std::string>& note,
                       std::optional<ModelConfig>& model_config, MlaShape* latent) {
    // Owned by the callbacks, which live as long as `command`.
    auto choice = std::make_shared<ModelChoice>();
    CLI::Option* model = command.add_option_function<std::string>(
        "--model", [choice](const std::string& name) { choice->name = name; },
        "A preset's shape (see `kvbench models`): sets --dim, --heads, --kv-heads, --head-dim and --layers, each still "
        "overridable (--model llama-3-8b --layers 2)");
    model->type_name("NAME");
    command.add_option_function<std::string>(
               "--model-config", [choice](const std::string& path) { choice->config = path; },
               "A Hugging Face config.json: sets the same axes as --model")
        ->type_name("FILE")
        ->excludes(model);

    CLI::App* app = &command;
    command.final_callback([choice, app, &dim, &heads, &kv_heads, &layers, &head_dim, &note, &model_config, latent] {
        if (!choice->name && !choice->config) return;
        ModelPreset preset;
        try {
            if (choice->name && choice->name->find(',') != std::string::npos) {
                throw ConfigError(fmt::format("--model {}: one model a run (run the command once per model; `kvbench "
                                              "memory --model` plans several at once)",
                                              *choice->name));
            }
            preset = choice->name ? find_model(builtin_presets(), *choice->name) : read_model_config(*choice->config);
        } catch (const ConfigError& error) {
            // Inside CLI11's parse: its error type reaches main's usage-error path.
            throw CLI::ValidationError(error.what());
        }
        const std::string flag = choice->name ? "--model " + *choice->name : "--model-config " + *choice->config;
        model_config = model_config_of(preset);
        if (latent != nullptr) {
            *latent = preset.mla;
            preset.mla = {};  // applied: no part of the note
        }
        note = unapplied_parts_note(preset, flag);
        const auto set_unless_typed = [app](const char* option, std::string& value, std::uint64_t preset_value) {
            if (app->get_option(option)->count() == 0) value = fmt::format("{}", preset_value);
        };
        set_unless_typed("--dim", dim, preset.model_dim);
        set_unless_typed("--heads", heads, preset.n_heads);
        set_unless_typed("--kv-heads", kv_heads, preset.n_kv_heads);
        set_unless_typed("--layers", layers, preset.n_layers);
        // Only where the model's head dim is not D / H (Gemma-7B): an explicit --head-dim would
        // otherwise add a dh column that says nothing new.
        if (preset.head_dim * preset.n_heads != preset.model_dim && app->get_option("--head-dim")->count() == 0) {
            head_dim = fmt::format("{}", preset.head_dim);
        }
    });
}

}  // namespace kvbench
