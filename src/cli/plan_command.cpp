// The `kvbench plan` subcommand: options, the deployment, the predictions and their sheet.
#include "cli/plan_command.hpp"

#include "cli/byte_units.hpp"
#include "cli/calibration_file.hpp"
#include "cli/hardware_option.hpp"
#include "cli/model_options.hpp"
#include "cli/option_conventions.hpp"
#include "cli/plan_sheet.hpp"
#include "cli/shared_prefix_option.hpp"
#include "cli/value_list.hpp"
#include "kvbench/engine/config.hpp"
#include "kvbench/plan/service_plan.hpp"
#include "kvbench/report/units.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

namespace kvbench {

namespace {

constexpr const char* plan_examples = R"(Examples:
  kvbench plan --model llama-3-8b --hardware h100-sxm --tpot 50ms -n 8K \
      --calibrate run.csv
      the largest batch of 8K-token requests within 50 ms a token
  kvbench plan --model llama-3-70b --hardware h100-sxm --tp 8 --tpot 50ms \
      -n 32K -b 16 --efficiency 0.8
      Llama-3-70B on 8 GPUs: each holds 1/8 of the weights and one KV head
  kvbench plan --model mistral-7b --tpot 20ms --efficiency 0.7 \
      --hardware bw=1TB/s,flops=200T,mem=48GB
      a device of your own
  kvbench plan --model llama-3-8b --hardware h100-sxm --tpot 50ms -n 8K \
      --shared-prefix 2K --efficiency 0.8
      requests sharing a 2K system prompt, cached and read once

Every figure is predicted, not measured: the larger of a step's bytes over
bandwidth x efficiency and its FLOPs over peak x efficiency, per device
(docs/planning.md). --calibrate takes the efficiencies this machine measured:
the weight and cache streams' bandwidth fractions per batch size, fitted on a
sweep's cached rows, and the median roofline fraction of its uncached rows.

Exit status: 0 ok; 1 a write failed; 2 bad usage.)";

constexpr std::uint64_t max_parallel_ranks = 1024;

// "50ms", "0.05s", "50000us": a duration with its unit, from 1 us to an hour.
double parse_tpot(const std::string& text) {
    const std::string_view view(text);
    double value = 0;
    const auto [end, error] = std::from_chars(view.data(), view.data() + view.size(), value);
    const std::string_view unit(end, static_cast<std::size_t>(view.data() + view.size() - end));
    const double scale = unit == "us" ? 1e-6 : unit == "ms" ? 1e-3 : unit == "s" ? 1.0 : 0.0;
    const double seconds = value * scale;
    if (error != std::errc() || scale == 0 || !(seconds >= 1e-6 && seconds <= 3600)) {
        throw ConfigError(fmt::format("--tpot {}: must be a time per output token with its unit, from 1us to "
                                      "3600s, such as 50ms or 0.05s",
                                      text));
    }
    return seconds;
}

double parse_fraction(std::string_view text, std::string_view shown_as) {
    double value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    // From a thousandth: below it a prediction is no prediction (1e-300 printed a time of 300 digits).
    if (error != std::errc() || end != text.data() + text.size() || !(value >= 0.001 && value <= 1)) {
        throw ConfigError(fmt::format("--efficiency {}: must be a fraction of the peak from 0.001 to 1, such as 0.8 "
                                      "(or bw=0.8,compute=0.5)",
                                      shown_as));
    }
    return value;
}

// "0.8" (both) or "bw=0.8,compute=0.5" (either may be left out: 1).
Efficiency parse_efficiency(const std::string& text) {
    if (text.find('=') == std::string::npos) {
        const double both = parse_fraction(text, text);
        return {both, both, {}};
    }
    Efficiency efficiency;
    std::vector<std::string> seen;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        const std::string part = text.substr(start, comma - start);
        start = comma + 1;
        const std::size_t equals = part.find('=');
        const std::string key = part.substr(0, equals);
        if (equals == std::string::npos || (key != "bw" && key != "compute")) {
            throw ConfigError(fmt::format("--efficiency {}: \"{}\" is not bw=E or compute=E (or give one fraction "
                                          "for both: 0.8)",
                                          text, part));
        }
        if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
            throw ConfigError(fmt::format("--efficiency {}: {} is given twice", text, key));
        }
        seen.push_back(key);
        (key == "bw" ? efficiency.bandwidth : efficiency.compute) = parse_fraction(part.substr(equals + 1), text);
    }
    return efficiency;
}

ModelPreset resolve_model(const PlanCliOptions& options) {
    if (options.model && options.model_config) {
        throw ConfigError("--model, --model-config: give one model to plan, a preset or a config file");
    }
    if (options.params && !options.model_config) {
        throw ConfigError("--params sets the parameter count of a --model-config model; presets carry their own");
    }
    ModelPreset model;
    if (options.model) {
        model = find_model(load_presets(options.presets), *options.model);
    } else if (options.model_config) {
        model = read_model_config(*options.model_config);
        if (options.params) model.n_params = parse_parameter_count(*options.params, "--params", 1, std::uint64_t{1} << 50);
    } else {
        throw ConfigError("--model: name a model (--model llama-3-8b; `kvbench models` lists them) or give "
                          "--model-config FILE");
    }
    if (model.n_params == 0) {
        throw ConfigError(fmt::format("--params: the parameter count of {} is unknown (a config.json does not hold "
                                      "it), and its weights are most of a step's bytes; give it with --params N",
                                      model.name));
    }
    return model;
}

struct Calibrated {
    Efficiency efficiency;
    std::string note;
};

std::string by_batch_note(const Efficiency& efficiency) {
    std::string note;
    for (const StreamEfficiency& streams : efficiency.by_batch) {
        note += fmt::format("{}B={}: weights {:.2f}, KV {:.2f}", note.empty() ? "" : "; ", streams.batch,
                            streams.weights, streams.kv);
    }
    return note;
}

Calibrated resolve_efficiency(const PlanCliOptions& options) {
    if (options.calibrate && options.efficiency) {
        throw ConfigError("--calibrate, --efficiency: give one: the efficiencies a report measured, or your own");
    }
    if (options.efficiency) {
        const Efficiency efficiency = parse_efficiency(*options.efficiency);
        return {efficiency, fmt::format("Efficiency set by --efficiency: bandwidth {:.2f}, compute {:.2f}.",
                                        efficiency.bandwidth, efficiency.compute)};
    }
    if (options.calibrate) {
        const Calibration calibration = read_calibration(*options.calibrate, options.kv_dtype);
        for (const CappedEfficiency& capped : calibration.capped) {
            if (options.out.quiet) break;
            fmt::print(stderr,
                       "kvbench: warning: --calibrate {}: {} is {:.2f} of the peak, faster than the device can "
                       "run; billed at 1 instead. Its rows ran faster than their roofline allows (streams too short "
                       "to time, or a roofline measured low): calibrate on a cold sweep at longer contexts further "
                       "apart (-n), or measure the roofline again (kvbench roofline)\n",
                       *options.calibrate, capped.efficiency, capped.fitted);
        }
        std::string note = fmt::format("Efficiency from this machine's runs in {}: compute {:.2f}, the median "
                                       "roofline fraction of {} uncached rows; bandwidth {:.2f}, of {} cached rows",
                                       *options.calibrate, calibration.efficiency.compute, calibration.n_uncached,
                                       calibration.efficiency.bandwidth, calibration.n_cached);
        if (calibration.bandwidth_median > 1) {
            note += fmt::format(" (their median, {:.2f}, is above the peak)", calibration.bandwidth_median);
        }
        if (calibration.n_cached == 0 || calibration.n_uncached == 0) note += " (a path without rows takes the other's)";
        if (!calibration.efficiency.by_batch.empty()) {
            note += fmt::format(", fitted per stream and batch as {} (between batches interpolated in log2 B)",
                                by_batch_note(calibration.efficiency));
        }
        return {calibration.efficiency, note + "."};
    }
    throw ConfigError("--calibrate FILE or --efficiency E: the planner needs the fraction of the peaks a step "
                      "achieves; measure it (kvbench sweep -o run.csv, then --calibrate run.csv) or set it "
                      "(--efficiency 0.8)");
}

Deployment to_deployment(const PlanCliOptions& options, std::string& efficiency_note) {
    Deployment deployment;
    deployment.model = resolve_model(options);
    if (!options.hardware) {
        throw ConfigError("--hardware: name the device (`kvbench hardware` lists them) or type one: "
                          "--hardware bw=3.35TB/s,flops=989T,mem=80GB");
    }
    deployment.hardware = parse_hardware_option(*options.hardware);
    if (options.mem) {
        deployment.memory_bytes = parse_byte_size(*options.mem, "--mem");
    } else if (deployment.hardware.memory_bytes) {
        deployment.memory_bytes = *deployment.hardware.memory_bytes;
    } else {
        throw ConfigError(fmt::format("--mem: {} has no memory capacity of its own (a socket's depends on its "
                                      "memory modules, a typed profile's on mem=); give --mem SIZE, e.g. --mem 768GB",
                                      deployment.hardware.name));
    }
    deployment.kv_dtype = *find_kv_dtype(options.kv_dtype);
    deployment.weight_dtype = *find_kv_dtype(options.weight_dtype);
    deployment.parallelism.tp = parse_whole_number(options.tp, "--tp", 1, max_parallel_ranks);
    deployment.parallelism.pp = parse_whole_number(options.pp, "--pp", 1, max_parallel_ranks);
    check_parallelism(model_config_of(deployment.model, 1, 1, deployment.kv_dtype), deployment.parallelism);
    const Calibrated calibrated = resolve_efficiency(options);
    deployment.efficiency = calibrated.efficiency;
    efficiency_note = calibrated.note;
    if (options.shared_prefix && *options.shared_prefix != "0") {  // parse_count's suffixes (2K), and 0 for none
        deployment.shared_prefix = parse_count(*options.shared_prefix, "--shared-prefix", 1, max_planned_context - 1);
    }
    return deployment;
}


SheetCell answer_cell(const PlanAnswer& answer, std::string_view unbounded) {
    if (!answer.value) return text_cell(std::string(unbounded));
    return count_cell(*answer.value);
}

Sheet plan_sheet(const Deployment& deployment, const std::vector<std::uint64_t>& seqs,
                 const std::vector<std::uint64_t>& batches, double tpot_s, const std::string& efficiency_note) {
    Sheet sheet;
    sheet.title = "Predicted decode step per device";
    // The model names a line and N and B place it: repeated in each part of a table split to fit
    // the terminal, or said once above it when they have one value.
    const auto column = [&](std::string key, std::string header, Align align, bool in_table,
                            SheetRole role = SheetRole::figure) {
        sheet.columns.push_back({std::move(key), std::move(header), align, in_table, role});
    };
    column("model", "model", Align::left, true, SheetRole::key);
    column("hardware", "hardware", Align::left, false, SheetRole::axis);
    column("tp", "TP", Align::right, false, SheetRole::axis);
    column("pp", "PP", Align::right, false, SheetRole::axis);
    column("kv_dtype", "KV dtype", Align::left, false, SheetRole::axis);
    column("weight_dtype", "weight dtype", Align::left, false, SheetRole::axis);
    column("seq", "N", Align::right, true, SheetRole::axis);
    column("shared_prefix", "P", Align::right, false, SheetRole::axis);
    column("batch", "B", Align::right, true, SheetRole::axis);
    column("weight_bytes_per_device", "weights/device", Align::right, true);
    // A mixture of experts reads less than it holds; a dense model reads what it holds.
    const bool has_experts = deployment.model.moe.n_experts > 0;
    column("weight_read_bytes_per_device", "weights read", Align::right, has_experts);
    column("kv_bytes_per_device", "KV/device", Align::right, true);
    column("memory_capacity_per_device", "memory", Align::right, false);
    column("fits", "fits", Align::left, true);
    column("flops_per_device", "FLOPs/device", Align::right, false);
    column("predicted_tpot_ms", "predicted ms/token", Align::right, true);
    column("limit", "limit", Align::left, true);
    column("target_tpot_ms", "target ms", Align::right, false);
    column("meets_target", "meets", Align::left, true);
    column("max_batch_at_seq", "max B at N", Align::right, true);
    column("max_batch_limit", "B limit", Align::left, true);
    column("max_seq_at_batch", "max N at B", Align::right, true);
    column("max_seq_limit", "N limit", Align::left, true);

    const std::string kv_dtype(kv_dtype_info(deployment.kv_dtype).name);
    const std::string weight_dtype(kv_dtype_info(deployment.weight_dtype).name);
    std::uint64_t longest_context = 0;  // asked for or answered, to set against the trained context
    for (const std::uint64_t seq : seqs) {
        const PlanAnswer max_batch = max_batch_for_target(deployment, seq, tpot_s);
        for (const std::uint64_t batch : batches) {
            const Prediction prediction = predict_step(deployment, batch, seq);
            const PlanAnswer max_seq = max_context_for_target(deployment, batch, tpot_s);
            const bool fits = prediction.cost.fits;
            longest_context = std::max({longest_context, seq, max_seq.value.value_or(0)});
            std::vector<SheetCell>& cells = sheet.rows.emplace_back();
            cells.push_back(text_cell(deployment.model.name));
            cells.push_back(text_cell(deployment.hardware.name));
            cells.push_back(count_cell(deployment.parallelism.tp));
            cells.push_back(count_cell(deployment.parallelism.pp));
            cells.push_back(text_cell(kv_dtype));
            cells.push_back(text_cell(weight_dtype));
            cells.push_back(count_cell(seq));
            cells.push_back(count_cell(deployment.shared_prefix));
            cells.push_back(count_cell(batch));
            cells.push_back(bytes_cell(prediction.cost.weight_bytes));
            cells.push_back(bytes_cell(prediction.cost.weight_read_bytes));
            cells.push_back(prediction.cost.kv_bytes == UINT64_MAX ? text_cell("> 16 EiB")
                                                                   : bytes_cell(prediction.cost.kv_bytes));
            cells.push_back(bytes_cell(deployment.memory_bytes));
            cells.push_back({fits, fits ? "yes" : "no"});
            cells.push_back(prediction.cost.flops ? count_cell(*prediction.cost.flops) : null_cell());
            cells.push_back(fits ? ms_cell(prediction.tpot_s) : null_cell());
            cells.push_back(text_cell(limit_name(prediction.limit)));
            cells.push_back(ms_cell(tpot_s));
            const bool meets = meets_target(prediction, tpot_s);
            cells.push_back({meets, meets ? "yes" : "no"});
            cells.push_back(answer_cell(max_batch, "unbounded"));
            // No limit binds an unbounded answer: null in csv and json, "-" in the table.
            cells.push_back(max_batch.value ? text_cell(limit_name(max_batch.limit)) : null_cell());
            cells.push_back(answer_cell(max_seq, "unlimited"));
            cells.push_back(max_seq.value ? text_cell(limit_name(max_seq.limit)) : null_cell());
        }
    }

    const ModelPreset& model = deployment.model;
    const HardwareProfile& hardware = deployment.hardware;
    const Parallelism& parallelism = deployment.parallelism;
    const std::uint64_t kv_heads = kv_heads_per_rank(model.n_kv_heads, parallelism.tp);
    // A latent cache (MLA) has no KV heads to split: every rank holds the one latent per position.
    const bool latent = model.mla.kv_lora_rank != 0;
    std::string split = fmt::format("{}: L={} H={} G={} dh={}, {} parameters at {}; per device: {} layers, {} query "
                                    "heads, {}",
                                    model.name, model.n_layers, model.n_heads, model.n_kv_heads, model.head_dim,
                                    format_number(static_cast<double>(model.n_params) / 1e9) + " B", weight_dtype,
                                    layers_per_stage(model.n_layers, parallelism.pp), model.n_heads / parallelism.tp,
                                    latent ? std::string("the whole latent cache (MLA: one latent per position, "
                                                         "shared by every head)")
                                           : fmt::format("{} KV head{}", kv_heads, kv_heads == 1 ? "" : "s"));
    if (!latent && parallelism.tp > model.n_kv_heads) {
        split += fmt::format(" (each KV head stored on {} ranks: TP={} outnumbers G={})",
                             parallelism.tp / model.n_kv_heads, parallelism.tp, model.n_kv_heads);
    }
    if (!model.layer_windows.empty()) split += fmt::format("; windowed layers cache at most their window ({})", window_label(model));
    sheet.notes.push_back(split + ".");
    if (model.moe.n_experts > 0) {
        sheet.notes.push_back(fmt::format(
            "Each token runs {} of {} routed experts per layer; a step reads the experts its sequences were routed "
            "to, {} of {} at B=1 and {} at B=64 if routing is uniform (a router's imbalance reads fewer): "
            "'weights read' (docs/planning.md).",
            model.moe.n_active, model.moe.n_experts, format_number(expected_experts_read(model.moe, 1)),
            model.moe.n_experts, format_number(expected_experts_read(model.moe, 64))));
    }
    if (model.max_position_embeddings && longest_context > *model.max_position_embeddings) {
        sheet.notes.push_back(fmt::format("Contexts past the {} positions {} was trained for are memory and time, "
                                          "not a context the model handles.",
                                          *model.max_position_embeddings, model.name));
    }
    const ComputeType compute = compute_type_of(deployment.weight_dtype);
    const std::optional<double> peak = hardware.peak_flops_of(compute);
    sheet.notes.push_back(fmt::format(
        "{} ({}): {} GB/s, {}, {} of memory per device; TP={} PP={} ({} device{}).", hardware.name,
        hardware.description, format_number(hardware.bandwidth_bytes_per_s / 1e9),
        peak ? fmt::format("{} TFLOP/s at {}", format_number(*peak / 1e12), compute_type_name(compute))
             : fmt::format("no published {} peak: compute not bounded", compute_type_name(compute)),
        format_bytes(deployment.memory_bytes), parallelism.tp, parallelism.pp, parallelism.tp * parallelism.pp,
        parallelism.tp * parallelism.pp == 1 ? "" : "s"));
    sheet.notes.push_back(efficiency_note);
    if (deployment.shared_prefix != 0) {
        sheet.notes.push_back(fmt::format("P={}: the tokens every sequence starts with (a system prompt), cached once on "
                                          "each global layer and read once a step for the batch, as kvbench's step "
                                          "reads them; an engine that reads them for each sequence pays their bytes "
                                          "B times in time, not in memory (docs/planning.md).",
                                          deployment.shared_prefix));
    }
    sheet.notes.push_back("Every time is predicted: max(weight bytes read / (bandwidth x e_w) + KV bytes / (bandwidth x e_kv), "
                          "FLOPs / (peak x e)) per device, times PP stages; "
                          "interconnect time not counted (docs/planning.md).");
    return sheet;
}

}  // namespace

CLI::App* add_plan_command(CLI::App& app, PlanCliOptions& options) {
    CLI::App* plan = app.add_subcommand(
        "plan", "Predict the largest batch and longest context that meet a time per output token and fit a "
                "device, from exact counts, a hardware profile and this machine's measured efficiency");
    plan->footer(plan_examples);
    plan->add_option("-m,--model", options.model, "The preset to plan (see `kvbench models`)")->type_name("NAME");
    plan->add_option("--model-config", options.model_config,
                     "A Hugging Face config.json to plan; its parameter count comes from --params")
        ->type_name("FILE");
    add_presets_option(*plan, options.presets);
    plan->add_option("--params", options.params, "Parameter count of the --model-config model: 8B, 7.2B, 500M")
        ->type_name("N");
    list_option(*plan, "-n,--seq", options.seq, "Context lengths N (tokens per sequence; 4K = 4096)");
    list_option(*plan, "-b,--batch", options.batch, "Batch sizes B (sequences decoded together)");
    plan->add_option("--tpot", options.tpot, "Target time per output token: 50ms, 0.05s, 500us (required)")
        ->type_name("TIME");
    plan->add_option("--hardware", options.hardware,
                     "A profile (`kvbench hardware` lists them), your own: bw=3.35TB/s,flops=989T[,mem=80GB], or a file of "
                     "KEY=VALUE lines or JSON "
                     "(required)")
        ->type_name("NAME|SPEC|FILE");
    plan->add_option("--mem", options.mem, "Memory per device, instead of the profile's: 80GB = 80·10^9 bytes, 80GiB")
        ->type_name("SIZE");
    // Every type `memory` bills: the step is billed its cache's bytes, scales included, and
    // needs no kernel for the type.
    plan->add_option("--kv-dtype", options.kv_dtype,
                     "Cache element type: f32, f16, bf16, fp8 (e4m3 or e5m2, the same bytes), int8, int4, q8_0 or "
                     "q4_0 (default f16)")
        ->transform(CLI::IsMember({"f32", "f16", "bf16", "fp8", "e4m3", "e5m2", "int8", "int4", "q8_0", "q4_0"},
                                  CLI::ignore_case))
        ->type_name("TYPE");
    plan->add_option("--weight-dtype", options.weight_dtype,
                     "Weights' element type: f32, f16, bf16, fp8, int8 or int4 (default f16); it picks the peak "
                     "FLOP/s used")
        ->transform(CLI::IsMember({"f32", "f16", "bf16", "fp8", "int8", "int4"}, CLI::ignore_case))
        ->type_name("TYPE");
    plan->add_option("--tp", options.tp, "Tensor-parallel ranks: each holds 1/TP of the heads and weights")
        ->type_name("N")
        ->capture_default_str();
    plan->add_option("--pp", options.pp, "Pipeline stages: each holds its layers' weights and cache")
        ->type_name("N")
        ->capture_default_str();
    plan->add_option("--calibrate", options.calibrate,
                     "A report of kvbench sweep or generate measured here: the efficiencies fitted on its rows "
                     "(the weight and cache streams' per batch size, compute's median)")
        ->type_name("FILE");
    plan->add_option("--efficiency", options.efficiency,
                     "The fraction of the peaks a step achieves, instead of --calibrate: 0.8, or bw=0.8,compute=0.5")
        ->type_name("E");
    plan->add_option("--shared-prefix", options.shared_prefix,
                     "Tokens every sequence starts with (a system prompt: 2K), cached and read once for the batch on "
                     "each global layer; less than every N (default 0)")
        ->type_name("P");
    add_output_options(plan, options.out, sheet_formats());
    return plan;
}

int run_plan_command(const PlanCliOptions& options) {
    if (!options.tpot) throw ConfigError("--tpot: give the target time per output token, e.g. --tpot 50ms");
    const double tpot_s = parse_tpot(*options.tpot);
    std::string efficiency_note;
    const Deployment deployment = to_deployment(options, efficiency_note);
    const auto to_u64 = [](const std::vector<std::size_t>& values) {
        return std::vector<std::uint64_t>(values.begin(), values.end());
    };
    const std::vector<std::uint64_t> seqs = to_u64(parse_value_list(options.seq, "--seq", max_planned_context));
    require_prefix_below_every_seq(deployment.shared_prefix, seqs);
    const std::vector<std::uint64_t> batches = to_u64(parse_value_list(options.batch, "--batch", max_planned_batch));
    const OutputPlan output = to_output_plan(options.out, sheet_formats());
    emit_sheet(plan_sheet(deployment, seqs, batches, tpot_s, efficiency_note), output);
    return 0;
}

}  // namespace kvbench
