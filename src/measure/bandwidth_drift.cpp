// The end-of-run bandwidth reading against the roofline's peak.
#include "kvbench/measure/bandwidth_drift.hpp"

#include "kvbench/engine/blas.hpp"
#include "kvbench/measure/memory.hpp"

#include <fmt/format.h>

namespace kvbench {

// On a shared or virtualised host, memory bandwidth drifts by tens of percent over minutes
// (on the reference machines: docs/performance.md#bandwidth-drift-on-the-reference-machines),
// so a roofline measured at the start may no longer describe the machine the points ran on.
std::optional<std::string> bandwidth_drift_warning(std::size_t n_threads, const Roofline& roofline, double now_gbps) {
    const double ratio = now_gbps / roofline.peak_gbps;
    if (ratio >= 1 - tolerated_bandwidth_drift && ratio <= 1 + tolerated_bandwidth_drift) return std::nullopt;
    return fmt::format("memory bandwidth on {} thread{} reads {:.1f} GB/s now against the roofline's {:.1f} GB/s "
                       "(measured {}): this host's bandwidth drifts, so roofline % are approximate; re-run with "
                       "--measure-roofline when the host is quieter",
                       n_threads, n_threads == 1 ? "" : "s", now_gbps, roofline.peak_gbps, roofline.measured_at);
}

std::vector<std::string> bandwidth_drift_warnings(const Rooflines& rooflines, const Environment& env) {
    std::vector<std::string> warnings;
    for (const auto& [n_threads, roofline] : rooflines) {
        const std::size_t buffer_bytes = probe_bytes(env.llc_total_bytes);
        const std::optional<std::uint64_t> available = available_memory_bytes();
        if (available && buffer_bytes > *available / 2) continue;  // not worth squeezing the machine for
        set_compute_threads(n_threads);
        const double now_gbps = measure_read_bandwidth_gbps(buffer_bytes, 3);
        if (std::optional<std::string> warning = bandwidth_drift_warning(n_threads, roofline, now_gbps)) {
            warnings.push_back(std::move(*warning));
        }
    }
    return warnings;
}

}  // namespace kvbench
