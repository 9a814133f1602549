// The `kvbench hardware` subcommand: the profiles as a sheet.
#include "cli/hardware_command.hpp"

#include "cli/plan_sheet.hpp"
#include "kvbench/plan/hardware_profile.hpp"
#include "kvbench/report/units.hpp"

#include <fmt/format.h>

namespace kvbench {

CLI::App* add_hardware_command(CLI::App& app, HardwareCliOptions& options) {
    CLI::App* hardware = app.add_subcommand("hardware", "List the hardware profiles that `kvbench plan --hardware` "
                                                        "names (published figures, not measured)");
    add_output_options(hardware, options.out, sheet_formats());
    // Its own footer, as `models` has (the top level's is the sweep's).
    hardware->footer(R"(Examples:
  kvbench hardware          the profiles' memory, bandwidth and peaks
  kvbench hardware -f csv -o hw.csv
                            the same, with each profile's kind
  kvbench plan --model llama-3-8b --hardware h100-sxm --tpot 50ms \
      --efficiency 0.8      plan a model on one of them

Exit status: 0 ok; 1 a write failed; 2 bad usage.)");
    return hardware;
}

int run_hardware_command(const HardwareCliOptions& options) {
    const OutputPlan output = to_output_plan(options.out, sheet_formats());
    Sheet sheet;
    sheet.title = "Hardware profiles (published peaks; dense, without sparsity)";
    sheet.columns = {{"name", "name", Align::left, true, SheetRole::key},
                     {"description", "device", Align::left},
                     {"kind", "kind", Align::left, false},
                     {"memory_bytes", "memory", Align::right},
                     {"bandwidth_gb_per_s", "GB/s", Align::right},
                     {"peak_f32_tflops", "f32 TFLOP/s", Align::right},
                     {"peak_bf16_tflops", "bf16", Align::right},
                     {"peak_fp8_tflops", "fp8", Align::right},
                     {"peak_int8_tops", "int8 TOPS", Align::right},
                     {"status", "status", Align::left}};
    for (const HardwareProfile& profile : builtin_hardware()) {
        std::vector<SheetCell>& cells = sheet.rows.emplace_back();
        cells.push_back({profile.name, profile.name});
        cells.push_back({profile.description, profile.description});
        cells.push_back({profile.kind, profile.kind});
        if (profile.memory_bytes) {
            cells.push_back({*profile.memory_bytes, format_number(static_cast<double>(*profile.memory_bytes) / 1e9) + " GB"});
        } else {
            cells.push_back({nullptr, "-"});
        }
        const double gb_per_s = profile.bandwidth_bytes_per_s / 1e9;
        cells.push_back({gb_per_s, format_number(gb_per_s)});
        for (const ComputeType type : compute_types) {
            const std::optional<double> peak = profile.peak_flops_of(type);
            if (peak) cells.push_back({*peak / 1e12, format_number(*peak / 1e12)});
            else cells.push_back({nullptr, "-"});
        }
        cells.push_back({profile.status, profile.status});
    }
    sheet.notes.push_back("GPUs per device, CPUs per socket; memory as the vendor prints it, in 10^9 bytes. "
                          "partial: a figure rests on one secondary source or a derived input.");
    sheet.notes.push_back("Every figure's source: docs/hardware.md. A device of your own: "
                          "--hardware bw=3.35TB/s,flops=989T,mem=80GB.");
    emit_sheet(sheet, output);
    return 0;
}

}  // namespace kvbench
