// The dry-run sheets of sweep and generate, and the guard that keeps a plan from replacing results.
#include "cli/dry_run.hpp"

#include "cli/exit_status.hpp"
#include "cli/grid_guard.hpp"
#include "cli/option_conventions.hpp"
#include "cli/sweep_scheduler.hpp"
#include "kvbench/engine/checked_size.hpp"
#include "kvbench/engine/config.hpp"
#include "kvbench/engine/config_variant.hpp"
#include "kvbench/engine/cost_model.hpp"
#include "kvbench/measure/budget.hpp"
#include "kvbench/measure/cache_flush.hpp"
#include "kvbench/report/summary_tables.hpp"
#include "kvbench/report/units.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace kvbench {

namespace {

SheetCell flops_cell(std::optional<std::uint64_t> n_flops) {
    if (!n_flops) return {nullptr, "-"};
    return {*n_flops, format_flops(static_cast<double>(*n_flops))};
}
SheetCell seconds_cell(double seconds) { return {seconds, format_run_time(seconds)}; }

// "8:LG": the largest window and its layer pattern, as --window and --window-layers spell them;
// "" for a point whose layers are all global.
std::string window_label(const ModelConfig& config) {
    if (config.layer_windows.empty()) return "";
    const std::uint32_t widest = *std::max_element(config.layer_windows.begin(), config.layer_windows.end());
    return widest == 0 ? "" : fmt::format("{}:{}", widest, window_pattern(config));
}

// Which of the axes that most grids leave at their default the table shows: those some point of
// the grid sets (csv and json always carry them all).
struct ShownAxes {
    bool head_dim = false;
    bool kv_dtype = false;
    bool window = false;
    bool full_block = false;
    bool dense_mlp = false;      // the MLP's width F: a full block without experts
    bool weight_dtype = false;
    bool variant = false;        // experts, latent attention, sinks
    bool ragged = false;
    bool query_tokens = false;
    bool shared_prefix = false;
    bool paged = false;
};

ShownAxes shown_axes(const std::vector<GridPoint>& points) {
    ShownAxes shown;
    for (const GridPoint& point : points) {
        const ModelConfig& c = point.config;
        shown.head_dim |= c.explicit_head_dim != 0;
        shown.kv_dtype |= c.has_reduced_cache();
        shown.window |= !window_label(c).empty();
        shown.full_block |= c.block == BlockKind::full;
        shown.dense_mlp |= c.block == BlockKind::full && !c.has_experts();
        shown.weight_dtype |= c.weight_dtype != WeightDtype::f32;
        shown.variant |= c.has_experts() || c.is_latent() || c.attention_sinks;
        shown.ragged |= c.is_ragged();
        shown.query_tokens |= c.n_query_tokens != 1;
        shown.shared_prefix |= c.has_shared_prefix();
        shown.paged |= c.is_paged();
    }
    return shown;
}

// The model axes of a point, the first columns of both plans.
void add_axis_columns(Sheet& sheet, const ShownAxes& shown) {
    const auto axis = [&](const char* key, const char* header, Align align, bool in_table) {
        sheet.columns.push_back({key, header, align, in_table, SheetRole::axis});
    };
    axis("batch", "B", Align::right, true);
    axis("seq", "N", Align::right, true);
    axis("dim", "D", Align::right, true);
    axis("heads", "H", Align::right, true);
    axis("kv_heads", "G", Align::right, false);  // the grouping names it
    axis("head_dim", "dh", Align::right, shown.head_dim);
    axis("layers", "L", Align::right, true);
    axis("threads", "T", Align::right, true);
    axis("grouping", "grouping", Align::left, true);
    axis("kv_dtype", "kv", Align::left, shown.kv_dtype);
    axis("window", "window", Align::left, shown.window);
    axis("block", "block", Align::left, shown.full_block);
    axis("ffn_dim", "F", Align::right, shown.dense_mlp);
    axis("weight_dtype", "weights", Align::left, shown.weight_dtype);
    axis("variant", "variant", Align::left, shown.variant);
    // The serving shapes' axes, under the result tables' headers, but "prefix" for the shared
    // prefix: generate's plan already has a P, the prompt.
    axis("seq_lens", "N_b", Align::left, shown.ragged);
    axis("query_tokens", "Q", Align::right, shown.query_tokens);
    axis("shared_prefix", "prefix", Align::right, shown.shared_prefix);
    axis("kv_block", "kv-block", Align::right, shown.paged);
}

std::vector<SheetCell> axis_cells(const GridPoint& point) {
    const ModelConfig& c = point.config;
    return {count_cell(c.n_batch),
            count_cell(c.seq_len),
            count_cell(c.model_dim),
            count_cell(c.n_heads),
            count_cell(c.n_kv_heads),
            count_cell(c.head_dim()),
            count_cell(c.n_layers),
            count_cell(point.n_threads),
            text_cell(grouping_name(c)),
            text_cell(kv_dtype_name(c.key_dtype(), c.value_dtype())),
            text_cell(window_label(c)),
            text_cell(c.block == BlockKind::full ? "full" : "attn"),
            c.block == BlockKind::full && !c.has_experts() ? count_cell(c.ffn_dim) : null_cell(),
            text_cell(std::string(weight_dtype_info(c.weight_dtype).name)),
            text_cell(variant_of(c)),
            // csv and json: every context, as the results' seq_lens; the table: shortest/median/longest.
            c.is_ragged() ? SheetCell{format_seq_lens(c.seq_lens), contexts_of(c)} : text_cell(""),
            count_cell(c.n_query_tokens),
            count_cell(c.shared_prefix),
            c.is_paged() ? count_cell(c.kv_block) : SheetCell{0, "contiguous"}};
}

std::string estimate_source(const RunContext& context) {
    return context.rooflines.empty()
               ? fmt::format("assumes {} (run `kvbench roofline` for this machine's)", describe_assumed_roofline())
               : "comes from the saved roofline";
}

// What a real run of this grid would meet: the --yes bound, with the likely intent of a range
// typed without its step.
std::optional<std::string> confirmation_note(std::size_t n_points, double total_seconds,
                                             const std::optional<std::string>& likely_intent) {
    if (n_points <= max_unconfirmed_points && total_seconds <= max_unconfirmed_seconds) return std::nullopt;
    return fmt::format("A real run of this grid needs --yes (more than {} points or an hour){}", max_unconfirmed_points,
                       likely_intent ? fmt::format(": did you mean {}?", *likely_intent) : ".");
}

// Refuses to let a plan replace a file that is not an earlier plan of the same format.
void refuse_to_replace_results(const Sheet& sheet, const OutputTarget& target) {
    std::error_code ignored;
    if (!std::filesystem::exists(target.path, ignored) || std::filesystem::file_size(target.path, ignored) == 0) return;
    std::ifstream in(target.path, std::ios::binary);
    std::string first_line;
    std::getline(in, first_line);
    if (first_line == first_line_of(sheet, target.format)) return;
    throw ConfigError(fmt::format("-o {}: the file exists and is not a dry run's plan; --dry-run would replace it "
                                  "(name a new file for the plan)",
                                  target.path));
}

// A plan is not a run: a results database (--db, $KVBENCH_DB, -o run.sqlite, -f sql) receives
// nothing from a dry run (docs/database.md), and where -o or stdout was to carry the run's SQL
// the plan goes to the terminal.
OutputPlan without_databases(OutputPlan out) {
    const auto is_database = [](OutputFormat format) { return format == OutputFormat::sql || format == OutputFormat::sqlite; };
    std::erase_if(out.exports, [&](const OutputTarget& target) { return is_database(target.format); });
    if (is_database(out.format)) {
        out.file.reset();
        out.format = OutputFormat::table;
    }
    return out;
}

}  // namespace

Sheet sweep_dry_run_sheet(const SweepPlan& plan, const RunContext& context) {
    const std::vector<GridPoint>& points = context.points;
    Sheet sheet;
    sheet.title = "Dry run: the grid, nothing measured";
    sheet.table_rows = dry_run_table_rows;
    add_axis_columns(sheet, shown_axes(points));
    const auto figure = [&](const char* key, const char* header, bool in_table) {
        sheet.columns.push_back({key, header, Align::right, in_table, SheetRole::figure});
    };
    figure("flops_cached", "FLOPs\ncached", true);
    figure("flops_uncached", "FLOPs\nuncached", true);
    figure("bytes_cached", "bytes\ncached", false);
    figure("bytes_uncached", "bytes\nuncached", false);
    figure("kv_bytes", "KV cache", true);
    figure("kv_cache_bytes", "KV cache allocated", false);
    figure("weights_bytes", "weights", true);
    figure("scratch_bytes", "scratch", true);
    figure("inputs_bytes", "inputs", true);
    figure("flush_bytes", "flush", false);
    figure("probe_bytes", "probe", false);
    figure("memory_bytes", "memory", true);
    figure("estimated_s", "est. time", true);

    std::uint64_t flush = 0, probe = 0;
    for (std::size_t i = 0; i < points.size(); ++i) {
        const GridPoint& point = points[i];
        const auto timed = [&](bool run, DecodePath path, auto count) {
            return run ? std::optional<std::uint64_t>(count(point.config, path)) : std::nullopt;
        };
        const auto bytes_of = [](const ModelConfig& config, DecodePath path) { return step_bytes(config, path); };
        const bool cached = plan.run.run_cached;
        const bool uncached = times_uncached(point, plan.run);
        const MemoryBudget budget = sweep_point_memory(point, plan, context.env);
        flush = budget.flush_bytes;
        probe = budget.probe_bytes;
        std::vector<SheetCell> row = axis_cells(point);
        const auto bytes_or_null = [](std::optional<std::uint64_t> n) { return n ? SheetCell{*n, format_bytes(*n)} : SheetCell{nullptr, "-"}; };
        row.push_back(flops_cell(timed(cached, DecodePath::cached, step_flops)));
        row.push_back(flops_cell(timed(uncached, DecodePath::uncached, step_flops)));
        row.push_back(bytes_or_null(timed(cached, DecodePath::cached, bytes_of)));
        row.push_back(bytes_or_null(timed(uncached, DecodePath::uncached, bytes_of)));
        // Without the cached path no cache is allocated: "none", as the memory total counts it.
        row.push_back(cached ? bytes_cell(kv_cache_bytes(point.config)) : SheetCell{nullptr, "none"});
        row.push_back(bytes_cell(budget.kv_cache_bytes));
        row.push_back(bytes_cell(budget.weights_bytes));
        row.push_back(bytes_cell(budget.scratch_bytes));
        row.push_back(bytes_cell(budget.inputs_bytes));
        row.push_back(bytes_cell(budget.flush_bytes));
        row.push_back(bytes_cell(budget.probe_bytes));
        row.push_back(bytes_cell(budget.total_bytes()));
        row.push_back(seconds_cell(context.estimate.point_seconds(i)));
        sheet.rows.push_back(std::move(row));
    }
    sheet.notes.push_back(fmt::format("{}, about {} in all; the time {}.", plural(points.size(), "point"),
                                      format_run_time(context.estimate.total_seconds), estimate_source(context)));
    if (const std::optional<std::string> note = confirmation_note(points.size(), context.estimate.total_seconds,
                                                                  plan.likely_intent)) {
        sheet.notes.push_back(*note);
    }
    // Say what a '-' means only where one is printed, and why that path is not timed there.
    const bool some_uncached_skipped =
        plan.run.run_uncached && std::any_of(points.begin(), points.end(), [](const GridPoint& p) { return !p.times_uncached; });
    std::string dashes;
    if (!plan.run.run_cached) dashes = " (cached '-': --paths uncached)";
    if (!plan.run.run_uncached) dashes = " (uncached '-': --paths cached)";
    if (some_uncached_skipped) dashes = " (uncached '-': timed at the configuration's first --kv-dtype)";
    std::string memory = "FLOPs are per step" + dashes +
                         ". Memory is what the point allocates: the KV cache (with the f32 copy a reduced type "
                         "holds while it is set up), weights, scratch and inputs";
    if (probe + flush > 0) {
        memory += fmt::format(", plus {} held beside every point (the bandwidth probe{})", format_bytes(probe + flush),
                              flush > 0 ? " and the cold-cache flush buffer" : "");
    }
    sheet.notes.push_back(memory + ".");
    return sheet;
}

Sheet generate_dry_run_sheet(const GeneratePlan& plan, const RunContext& context) {
    const std::vector<GridPoint>& points = context.points;
    const GenerationOptions& generation = plan.generation;
    Sheet sheet;
    sheet.title = "Dry run: the generations, nothing measured";
    sheet.table_rows = dry_run_table_rows;
    add_axis_columns(sheet, shown_axes(points));
    sheet.columns[1].in_table = false;  // N runs from P to P + T: the caption says so
    sheet.columns.push_back({"prompt", "P", Align::right, true, SheetRole::axis});
    sheet.columns.push_back({"new_tokens", "new", Align::right, true, SheetRole::axis});
    const auto figure = [&](const char* key, const char* header) {
        sheet.columns.push_back({key, header, Align::right, true, SheetRole::figure});
    };
    figure("flops_cached", "FLOPs\ncached");
    figure("flops_uncached", "FLOPs\nuncached");
    figure("kv_bytes_at_end", "KV at end");
    figure("memory_bytes", "memory");
    figure("steps", "steps");
    figure("estimated_s", "est. time");
    // Every step's FLOPs, prefill included (docs/generate.md).
    const auto total_flops = [&](const ModelConfig& config, bool run, DecodePath path) -> std::optional<std::uint64_t> {
        if (!run) return std::nullopt;
        std::uint64_t sum = 0;
        for (std::size_t step = 0; step < generation.n_steps(); ++step) {
            sum = checked_add(sum, generation_step_cost(config, generation, path, step).flops);
        }
        return sum;
    };
    for (std::size_t i = 0; i < points.size(); ++i) {
        const GridPoint& point = points[i];
        std::vector<SheetCell> row = axis_cells(point);
        SheetCell prompt = count_cell(generation.prompt_len);
        if (!plan.prompt_lens.empty()) {  // a ragged batch: the files keep the longest, the table the range
            const auto [shortest, longest] = std::minmax_element(plan.prompt_lens.begin(), plan.prompt_lens.end());
            prompt.shown = fmt::format("{}..{}", *shortest, *longest);
        }
        row.push_back(prompt);
        row.push_back(count_cell(generation.n_new));
        row.push_back(flops_cell(total_flops(point.config, generation.run_cached, DecodePath::cached)));
        row.push_back(flops_cell(total_flops(point.config, generation.run_uncached, DecodePath::uncached)));
        row.push_back(generation.run_cached ? bytes_cell(kv_cache_bytes(point.config)) : SheetCell{nullptr, "none"});
        row.push_back(bytes_cell(generation_memory_bytes(point, generation)));
        row.push_back(count_cell(context.estimate.unit_seconds[i].size()));
        row.push_back(seconds_cell(context.estimate.point_seconds(i)));
        sheet.rows.push_back(std::move(row));
    }
    sheet.notes.push_back(fmt::format("{}, about {} in all; the time {}.", plural(points.size(), "configuration"),
                                      format_run_time(context.estimate.total_seconds), estimate_source(context)));
    if (const std::optional<std::string> note = confirmation_note(points.size(), context.estimate.total_seconds,
                                                                  plan.likely_intent)) {
        sheet.notes.push_back(*note);
    }
    const std::string steps =
        plan.prompt_lens.empty()
            ? fmt::format("the prefill of P={} positions and {} decode steps, N = {} to {}", generation.prompt_len,
                          generation.n_new, generation.prompt_len + 1, generation.prompt_len + generation.n_new)
            : fmt::format("the prefills of prompts of {} positions (--prompt-lens) and {} decode steps, each "
                          "sequence's N from its prompt's length + 1 (N_b: the contexts at the end, "
                          "shortest/median/longest)",
                          fmt::join(plan.prompt_lens, ", "), generation.n_new);
    sheet.notes.push_back(fmt::format("FLOPs of the whole generation: {}{}.", steps,
                                      generation.run_uncached ? "; the uncached path recomputes every position at every step"
                                                              : "; uncached '-': --paths cached"));
    return sheet;
}

int emit_dry_run(const Sheet& sheet, const OutputPlan& out) {
    const OutputPlan plan_out = without_databases(out);
    for (const OutputTarget& target : plan_out.files()) refuse_to_replace_results(sheet, target);
    emit_sheet(sheet, plan_out);
    return exit_ok;
}

}  // namespace kvbench
