// The `kvbench models` subcommand: the presets as a sheet.
#include "cli/models_command.hpp"

#include "cli/model_options.hpp"
#include "cli/plan_sheet.hpp"
#include "kvbench/engine/config.hpp"
#include "kvbench/plan/memory_plan.hpp"
#include "kvbench/report/units.hpp"

#include <fmt/format.h>

namespace kvbench {

CLI::App* add_models_command(CLI::App& app, ModelsCliOptions& options) {
    CLI::App* models = app.add_subcommand("models", "List the model presets that --model names");
    add_presets_option(*models, options.presets);
    add_output_options(models, options.out, sheet_formats());
    // Its own footer: a subcommand without one shows the top level's, whose examples and exit
    // statuses are the sweep's.
    models->footer(R"(Examples:
  kvbench models            each preset's shape, window, MLP and experts,
                            and its KV bytes per token at f16
  kvbench models -f csv -o models.csv
                            the same, with each preset's context and source
  kvbench sweep --model llama-3-8b -l 1
                            measure one layer of a preset

Exit status: 0 ok; 1 a write failed; 2 bad usage.)");
    return models;
}

int run_models_command(const ModelsCliOptions& options) {
    const std::vector<ModelPreset> presets = load_presets(options.presets);
    const OutputPlan output = to_output_plan(options.out, sheet_formats());

    Sheet sheet;
    sheet.title = "Model presets";
    sheet.columns = {{"name", "name", Align::left, true, SheetRole::key}, {"layers", "L", Align::right},
                     {"hidden_size", "D", Align::right},    {"heads", "H", Align::right},
                     {"kv_heads", "G", Align::right},       {"head_dim", "dh", Align::right},
                     {"params", "params", Align::right},    {"grouping", "grouping", Align::left},
                     {"window", "window", Align::right},    {"ffn_dim", "F", Align::right},
                     {"experts", "experts", Align::left},   {"kv_bytes_per_token", "KV/token f16", Align::right},
                     {"max_position_embeddings", "context", Align::right, false},
                     {"source", "source", Align::left, false}};
    for (const ModelPreset& preset : presets) {
        const auto count = [](std::uint64_t n) { return SheetCell{n, fmt::format("{}", n)}; };
        const std::string params = format_number(static_cast<double>(preset.n_params) / 1e9) + " B";
        const std::string grouping = preset.mla.kv_lora_rank != 0
                                         ? fmt::format("MLA r={}+{}", preset.mla.kv_lora_rank, preset.mla.rope_dim)
                                         : grouping_label(preset.n_heads, preset.n_kv_heads);
        const std::string window = window_label(preset);
        const MoeShape& moe = preset.moe;
        const std::string experts =
            moe.n_experts == 0 ? "-" : fmt::format("{}/{}{} x {}", moe.n_active, moe.n_experts,
                                                   moe.n_shared != 0 ? fmt::format("+{}", moe.n_shared) : "",
                                                   moe.expert_dim);
        const std::uint64_t kv_per_token = kv_bytes_per_token(preset, KvDtype::f16);
        sheet.rows.push_back({{preset.name, preset.name},
                              count(preset.n_layers),
                              count(preset.model_dim),
                              count(preset.n_heads),
                              count(preset.n_kv_heads),
                              count(preset.head_dim),
                              {preset.n_params, params},
                              {grouping, grouping},
                              window.empty() ? SheetCell{nullptr, "-"} : SheetCell{window, window},
                              preset.ffn_dim != 0 ? count(preset.ffn_dim) : SheetCell{nullptr, "-"},
                              moe.n_experts == 0 ? SheetCell{nullptr, "-"} : SheetCell{experts, experts},
                              {kv_per_token, format_bytes(kv_per_token)},
                              preset.max_position_embeddings ? count(*preset.max_position_embeddings)
                                                             : SheetCell{nullptr, "-"},
                              {preset.source, preset.source}});
    }
    sheet.notes.push_back("Numbers from each model's Hugging Face config (csv and json name it: -f csv); "
                          "params counted with embeddings.");
    sheet.notes.push_back("window 4096:LG: a window of 4096 on the layers marked L of the repeating unit (layer 0 "
                          "first); experts K/E+S x Fe: K of E routed experts and S shared ones, each Fe wide; F: "
                          "the dense MLP's width (- for an MLP of two matrices, or for experts in its place); MLA r=R+Dr: latent attention, "
                          "which caches a latent of R values and a RoPE key of Dr per position and layer for "
                          "all heads.");
    sheet.notes.push_back("kvbench memory --model NAME plans one; --model NAME in sweep and generate runs its shape.");
    emit_sheet(sheet, output);
    return 0;
}

}  // namespace kvbench
