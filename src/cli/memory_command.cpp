// The `kvbench memory` subcommand: options, the plan, and its sheet.
#include "cli/memory_command.hpp"

#include "cli/byte_units.hpp"
#include "cli/option_conventions.hpp"

#include "cli/model_options.hpp"
#include "cli/plan_sheet.hpp"
#include "cli/shared_prefix_option.hpp"
#include "cli/value_list.hpp"
#include "kvbench/engine/checked_size.hpp"
#include "kvbench/engine/ascii_case.hpp"
#include "kvbench/engine/config.hpp"
#include "kvbench/plan/memory_rows.hpp"
#include "kvbench/report/units.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace kvbench {

namespace {

constexpr const char* memory_examples = R"(Examples:
  kvbench memory --model llama-3-8b --seq 8192 --batch 16
      the cache of 16 requests of 8K tokens
  kvbench memory --model llama-3.1-8b --seq 32768 --budget 80GiB
      what fits on one 80 GiB device
  kvbench memory --model llama-2-7b,mistral-7b --seq 4K-128K*2 --budget 24GiB
      several models and contexts at once
  kvbench memory --model mistral-7b --seq 32768 --window none
      without Mistral's 4096-token sliding window
  kvbench memory --model gemma-3-27b,gpt-oss-120b,deepseek-v3 --seq 32K
      per-layer windows and latent caches, and N* for each
  kvbench memory --model llama-3-8b --seq 1000 --block-size 16
      paged, as vLLM: the bytes lost to each sequence's last block
  kvbench memory --model llama-3-8b -n 8K --shared-prefix 0,2K --budget 24GiB
      a 2K system prompt every request shares, cached once: how many more fit
  kvbench memory --model-config path/to/config.json --params 8B --budget 24GiB
      any model on disk (a config.json has no parameter count)

Bytes per token = 2 (K and V) x layers x KV heads x head dim x element size;
latent attention (DeepSeek) caches (kv_lora_rank + RoPE dim) per layer instead,
and a windowed layer holds at most its window (docs/memory.md). N* is the
context at which a step reads as many bytes of cache as of weights. Sizes in
the table are binary (KiB, MiB, GiB); csv and json give exact bytes.

Exit status: 0 ok; 1 a write failed; 2 bad usage.)";

// Largest count any axis of the plan accepts: contexts and batches beyond 2^40 are typos.
constexpr std::uint64_t max_axis_value = std::uint64_t{1} << 40;
// A layer's window is a 32-bit count (ModelConfig::layer_windows).
constexpr std::uint64_t max_window = std::numeric_limits<std::uint32_t>::max();

std::vector<KvDtype> parse_kv_dtypes(const std::vector<std::string>& names) {
    std::vector<KvDtype> dtypes;
    for (const std::string& name : names) {
        const std::optional<KvDtype> dtype = find_kv_dtype(name);
        // CLI11 checked membership; this guards the list's spelling if the two ever drift.
        if (!dtype) throw ConfigError(fmt::format("--kv-dtype {}: not one of f32, f16, bf16, fp8, e4m3, e5m2, int8, int4, q8_0, q4_0", name));
        if (std::find(dtypes.begin(), dtypes.end(), *dtype) == dtypes.end()) dtypes.push_back(*dtype);
    }
    return dtypes;
}

std::vector<std::uint64_t> to_u64(const std::vector<std::size_t>& values) {
    return std::vector<std::uint64_t>(values.begin(), values.end());
}

std::vector<ModelPreset> resolve_models(const MemoryCliOptions& options) {
    std::vector<ModelPreset> models;
    if (!options.models.empty()) {
        const std::vector<ModelPreset> presets = load_presets(options.presets);
        models = find_models(presets, options.models);
    } else if (options.presets) {
        static_cast<void>(load_presets(options.presets));  // a broken file is still reported
    }
    std::optional<std::uint64_t> params;
    if (options.params) {
        if (options.model_configs.empty()) {
            throw ConfigError("--params sets the parameter count of --model-config models; presets carry their own");
        }
        params = parse_parameter_count(*options.params, "--params", 1, std::uint64_t{1} << 50);
    }
    for (const std::string& path : options.model_configs) {
        ModelPreset model = read_model_config(path);
        if (params) model.n_params = *params;
        models.push_back(std::move(model));
    }
    if (models.empty()) {
        throw ConfigError("--model: name a model (--model llama-3-8b; `kvbench models` lists them) or give "
                          "--model-config FILE");
    }
    return models;
}

MemoryRequest to_memory_request(const MemoryCliOptions& options) {
    MemoryRequest request;
    request.models = resolve_models(options);
    request.seq = to_u64(parse_value_list(options.seq, "--seq", max_axis_value));
    request.batch = to_u64(parse_value_list(options.batch, "--batch", max_axis_value));
    request.kv_dtypes = parse_kv_dtypes(options.kv_dtypes);
    request.weight_dtype = *find_kv_dtype(options.weight_dtype);
    if (options.window) {
        if (lowercase(*options.window) == "none") {
            request.window = std::optional<std::uint64_t>();
        } else {
            try {
                request.window = parse_whole_number(*options.window, "--window", 1, max_window);
            } catch (const ConfigError& error) {
                throw ConfigError(fmt::format("{} (a token count, or none for no window)", error.what()));
            }
        }
    }
    request.block_size = parse_whole_number(options.block_size, "--block-size", 1, 1 << 20);
    if (options.shared_prefix) {
        request.shared_prefixes = parse_shared_prefixes(*options.shared_prefix);
        // A percentage is of each N, so the shortest is the one to hold it.
        const std::uint64_t shortest = *std::min_element(request.seq.begin(), request.seq.end());
        for (const SharedPrefixLength& prefix : request.shared_prefixes) {
            require_prefix_below_every_seq(prefix.positions_at(static_cast<std::size_t>(shortest)), request.seq);
        }
    }
    if (options.budget) request.budget_bytes = parse_byte_size(*options.budget, "--budget");
    request.twins = !options.no_twins;
    if (request.budget_bytes) {
        for (const ModelPreset& model : request.models) {
            if (model.n_params == 0) {
                throw ConfigError(fmt::format("--budget: the parameter count of {} is unknown (a config.json does "
                                              "not hold it); give it with --params N",
                                              model.name));
            }
        }
    }
    return request;
}

std::string format_count(std::uint64_t n) {
    if (n < 1000000) return fmt::format("{}", n);
    if (n < 1000000000) return format_number(static_cast<double>(n) / 1e6) + " M";
    return format_number(static_cast<double>(n) / 1e9) + " B";
}


// "L=32 D=4096 H=32 G=8 dh=128 (GQA-8), F=14336": what the plan counts of the model.
std::string shape_summary(const ModelPreset& model) {
    std::string shape =
        model.mla.kv_lora_rank != 0
            ? fmt::format("L={} D={} H={} (MLA: latent {} + RoPE key {} per position and layer)", model.n_layers,
                          model.model_dim, model.n_heads, model.mla.kv_lora_rank, model.mla.rope_dim)
            : fmt::format("L={} D={} H={} G={} dh={} ({})", model.n_layers, model.model_dim, model.n_heads,
                          model.n_kv_heads, model.head_dim, grouping_label(model.n_heads, model.n_kv_heads));
    if (model.ffn_dim != 0) shape += fmt::format(", F={}", model.ffn_dim);
    if (model.moe.n_experts != 0) {
        shape += fmt::format(", {} experts of {} ({} active, {} shared)", model.moe.n_experts, model.moe.expert_dim,
                             model.moe.n_active, model.moe.n_shared);
    }
    return shape;
}

std::string n_star_note(const MemoryRequest& request) {
    std::string note = fmt::format("N*: the context at which one decode step of B sequences reads as many KV-cache "
                                   "bytes as weight bytes (its decoder layers at {}, embeddings aside; MoE: the "
                                   "experts B tokens can reach); past it the cache dominates the step "
                                   "(docs/counting.md).",
                                   kv_dtype_info(request.weight_dtype).name);
    if (!find_weight_dtype(kv_dtype_info(request.weight_dtype).name)) {
        note += fmt::format(" - at --weight-dtype {}: the step has no kernel for it (f32, bf16, f16 or int8).",
                            kv_dtype_info(request.weight_dtype).name);
    }
    for (const ModelPreset& model : request.models) {
        if (model_config_of(model).block != BlockKind::full) {
            note += fmt::format(" - for {}: its MLP is unknown or not a gated one kvbench runs.", model.name);
        }
    }
    return note;
}

Sheet memory_sheet(const MemoryRequest& request, const std::vector<MemoryRow>& rows) {
    const bool budget = request.budget_bytes.has_value();
    const bool paged = request.block_size > 1;
    const bool shared = std::any_of(request.shared_prefixes.begin(), request.shared_prefixes.end(),
                                    [](const SharedPrefixLength& p) { return p.value != 0; });
    bool windowed = false;
    for (const MemoryRow& row : rows) windowed = windowed || row.window.has_value();

    Sheet sheet;
    sheet.title = "KV-cache memory plan";
    const auto column = [&](std::string key, std::string header, Align align, bool in_table,
                            SheetRole role = SheetRole::figure) {
        sheet.columns.push_back({std::move(key), std::move(header), align, in_table, role});
    };
    // A line is a model, its grouping, and what varies of its KV dtype, N and B: those that do
    // not vary go in the caption, so the table keeps to a terminal's width.
    column("model", "model", Align::left, true, SheetRole::key);
    column("grouping", "grouping", Align::left, true, SheetRole::key);
    column("twin", "twin", Align::left, false);
    column("layers", "L", Align::right, false);
    column("heads", "H", Align::right, false);
    column("kv_heads", "G", Align::right, true);
    column("head_dim", "dh", Align::right, false);
    column("kv_dtype", "KV dtype", Align::left, true, SheetRole::axis);
    column("window", "window", Align::right, windowed);
    column("block_size", "block", Align::right, false);
    column("seq", "N", Align::right, true, SheetRole::axis);
    column("shared_prefix", "P", Align::right, shared, SheetRole::axis);
    column("cached_tokens", "cached", Align::right, windowed);
    column("batch", "B", Align::right, true, SheetRole::axis);
    column("kv_bytes_per_token", "KV/token", Align::right, true);
    column("kv_bytes_prefix", "KV prefix", Align::right, shared);
    column("kv_bytes_per_seq", "KV/seq", Align::right, true);
    column("block_waste_bytes_per_seq", "last-block waste", Align::right, paged);
    column("kv_bytes_total", "KV total", Align::right, true);
    column("weight_dtype", "weight dtype", Align::left, false);
    column("params", "params", Align::right, false);
    column("weight_bytes", "weights", Align::right, true);
    column("total_bytes", "weights+KV", Align::right, true);
    column("n_star", "N*", Align::right, true);
    column("budget_bytes", "budget", Align::right, false);
    column("fits", "fits", Align::left, budget);
    column("max_batch", "max B at N", Align::right, budget);
    column("max_seq", "max N at B", Align::right, budget);

    for (const MemoryRow& row : rows) {
        std::vector<SheetCell>& cells = sheet.rows.emplace_back();
        cells.push_back(text_cell(row.model));
        cells.push_back({row.grouping, row.twin ? row.grouping + " twin" : row.grouping});
        cells.push_back({row.twin, row.twin ? "yes" : "no"});
        cells.push_back(count_cell(row.n_layers));
        cells.push_back(count_cell(row.n_heads));
        cells.push_back(count_cell(row.n_kv_heads));
        cells.push_back(count_cell(row.head_dim));
        cells.push_back(text_cell(std::string(kv_dtype_info(row.kv_dtype).name)));
        cells.push_back(row.window ? SheetCell{*row.window, row.window_layers} : null_cell());
        cells.push_back(count_cell(row.block_size));
        cells.push_back(count_cell(row.seq_len));
        cells.push_back(count_cell(row.shared_prefix));
        cells.push_back(count_cell(row.sequence.cached_tokens));
        cells.push_back(count_cell(row.batch));
        cells.push_back(bytes_cell(row.kv_bytes_per_token));
        cells.push_back(bytes_cell(row.prefix.kv_bytes));
        cells.push_back(bytes_cell(row.sequence.kv_bytes));
        cells.push_back(bytes_cell(row.sequence.waste_bytes));
        cells.push_back(bytes_cell(row.kv_bytes_total));
        cells.push_back(text_cell(std::string(kv_dtype_info(row.weight_dtype).name)));
        cells.push_back(row.n_params > 0 ? SheetCell{row.n_params, format_count(row.n_params)} : null_cell());
        cells.push_back(row.n_params > 0 ? bytes_cell(row.weight_bytes) : null_cell());
        cells.push_back(row.total_bytes ? bytes_cell(*row.total_bytes) : null_cell());
        if (row.n_star) {
            cells.push_back(count_cell(*row.n_star));
        } else {
            cells.push_back(row.n_star_never ? text_cell("never") : null_cell());
        }
        cells.push_back(row.budget_bytes ? bytes_cell(*row.budget_bytes) : null_cell());
        cells.push_back(row.budget_bytes ? SheetCell{row.fits, row.fits ? "yes" : "no"} : null_cell());
        cells.push_back(row.max_batch ? count_cell(*row.max_batch) : null_cell());
        if (row.max_seq_unlimited) {
            cells.push_back(text_cell("unlimited"));
        } else {
            cells.push_back(row.max_seq ? count_cell(*row.max_seq) : null_cell());
        }
    }

    const std::string_view weight_dtype = kv_dtype_info(request.weight_dtype).name;
    for (const ModelPreset& model : request.models) {
        std::string line = fmt::format("{}: {}", model.name, shape_summary(model));
        if (model.n_params > 0) {
            const std::uint64_t weights = weight_bytes(model.n_params, request.weight_dtype);
            line += fmt::format(", {} parameters = {} of weights at {}", format_count(model.n_params),
                                format_bytes(weights), weight_dtype);
            if (request.budget_bytes && weights > *request.budget_bytes) {
                line += fmt::format("; the weights alone exceed --budget {}: nothing fits (try --weight-dtype int8 "
                                    "or int4, or split the model across devices)",
                                    format_bytes(*request.budget_bytes));
            } else if (request.budget_bytes) {
                line += fmt::format(", leaving {} of the {} budget for the cache",
                                    format_bytes(*request.budget_bytes - weights), format_bytes(*request.budget_bytes));
            }
        }
        const ModelPreset planned = request.window ? with_window(model, *request.window) : model;
        if (const std::optional<std::uint64_t> window = largest_window(planned)) {
            const std::string pattern = window_pattern(model_config_of(planned));
            line += pattern == "all" ? fmt::format("; window {} tokens", *window)
                                     : fmt::format("; window {} tokens on the layers marked L of {} (repeating)",
                                                   *window, pattern);
        }
        line += fmt::format(" [{}]", model.source);
        sheet.notes.push_back(line);
    }
    sheet.notes.push_back(n_star_note(request));
    if (request.twins) {
        sheet.notes.push_back("twin: the same model with G = H (MHA) or G = 1 (MQA), its K and V projections (and so its weights) "
                              "resized, to show what its grouping saves.");
    }
    if (weight_dtype == "f16") sheet.notes.push_back("Weights at f16 (bf16 is the same size); --weight-dtype changes it.");
    if (paged) {
        sheet.notes.push_back(fmt::format("Paged: each sequence holds whole blocks of {} tokens; the last block's "
                                          "unused slots are the waste.",
                                          request.block_size));
    }
    if (shared) {
        sheet.notes.push_back("P: the tokens every sequence starts with (a system prompt), cached once on each global "
                              "layer (a window layer's sequences keep their own); KV prefix is that one copy, KV/seq "
                              "each sequence's own part, and KV total = KV prefix + B x KV/seq (docs/memory.md).");
    }
    return sheet;
}

}  // namespace

CLI::App* add_memory_command(CLI::App& app, MemoryCliOptions& options) {
    CLI::App* memory = app.add_subcommand(
        "memory", "Plan the KV cache's memory for real models: bytes per token, sequence and batch, and what fits "
                  "in a budget (no measurement)");
    memory->footer(memory_examples);
    memory->add_option("-m,--model", options.models, "Presets to plan, comma-separated (see `kvbench models`)")
        ->delimiter(',')
        ->type_name("NAME");
    memory->add_option("--model-config", options.model_configs,
                       "A Hugging Face config.json to plan (repeatable); its parameter count comes from --params")
        ->type_name("FILE");
    add_presets_option(*memory, options.presets);
    list_option(*memory, "-n,--seq", options.seq, "Context lengths N (tokens per sequence; 4K = 4096)");
    list_option(*memory, "-b,--batch", options.batch, "Batch sizes B (sequences)");
    memory->add_option("--kv-dtype", options.kv_dtypes,
                       "Cache element types: f32, f16, bf16, fp8 (e4m3 or e5m2, the same bytes), int8, int4, q8_0 or "
                       "q4_0 (int8 and int4 with one f32 scale per cached vector, q8_0 and q4_0 with one f16 scale per "
                       "32 elements; default f16)")
        ->delimiter(',')
        ->transform(CLI::IsMember({"f32", "f16", "bf16", "fp8", "e4m3", "e5m2", "int8", "int4", "q8_0", "q4_0"}, CLI::ignore_case))
        ->type_name("LIST");
    memory->add_option("--weight-dtype", options.weight_dtype,
                       "Weights' element type, for their memory: f32, f16, bf16, fp8, int8 or int4 (default f16)")
        ->transform(CLI::IsMember({"f32", "f16", "bf16", "fp8", "int8", "int4"}, CLI::ignore_case))
        ->type_name("TYPE");
    memory->add_option("--params", options.params,
                       "Parameter count of the --model-config models: 8B, 7.2B, 500M or 8030261248 (K, M, B, T "
                       "= 10^3, 10^6, 10^9, 10^12)")
        ->type_name("N");
    memory->add_option("--budget", options.budget,
                       "Memory available: 80GB = 80·10^9 bytes (SI), 80GiB or 80G = 80·2^30 (IEC); adds whether "
                       "each row fits, the largest batch at its context and the longest context at its batch, "
                       "after the weights")
        ->type_name("SIZE");
    memory->add_option("--window", options.window,
                       "Sliding window: cache at most N tokens per sequence; none: no window (default: each "
                       "model's own)")
        ->type_name("N|none");
    memory->add_option("--block-size", options.block_size,
                       "Paged cache: tokens per block (vLLM: 16); a sequence holds whole blocks")
        ->type_name("N")
        ->capture_default_str();
    add_shared_prefix_option(*memory, options.shared_prefix, "each N");
    memory->add_flag("--no-twins", options.no_twins, "Omit the MHA and MQA twins of each model");
    add_output_options(memory, options.out, sheet_formats());
    return memory;
}

int run_memory_command(const MemoryCliOptions& options) {
    const MemoryRequest request = to_memory_request(options);
    const OutputPlan output = to_output_plan(options.out, sheet_formats());
    std::vector<MemoryRow> rows;
    try {
        rows = plan_memory(request);
    } catch (const SizeOverflow&) {
        throw ConfigError("--seq, --batch: the cache would pass 2^64 bytes; lower them");
    }
    for (const std::string& warning : context_warnings(request)) {
        if (!output.quiet) fmt::print(stderr, "kvbench: warning: {}\n", warning);
    }
    emit_sheet(memory_sheet(request, rows), output);
    return 0;
}

}  // namespace kvbench
