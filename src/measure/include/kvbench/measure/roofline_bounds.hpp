// The peaks a roofline may hold: far outside any machine's, a peak is a damaged file, not a measurement.
#pragma once

namespace kvbench {

// A roofline's read bandwidth (GB/s) and sgemm rate (GFLOP/s) lie within these, as a --hardware
// profile's bandwidth does (1e-6 to 1e9 GB/s): a roofline file's peaks outside them are refused
// when it is read (roofline.cpp), and a report's roofline_peak_gb_per_s and roofline_peak_gflops
// by every report reader (report_checks.cpp).
inline constexpr double min_peak_gbps = 1e-6;
inline constexpr double max_peak_gbps = 1e9;
inline constexpr double min_peak_gflops = 1e-3;
inline constexpr double max_peak_gflops = 1e12;

}  // namespace kvbench
