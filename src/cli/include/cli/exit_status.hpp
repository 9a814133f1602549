// kvbench's exit statuses, as `kvbench --help` lists them.
#pragma once

namespace kvbench {

inline constexpr int exit_ok = 0;
inline constexpr int exit_failure = 1;  // a point, a --verify check or a write failed; the rest was done
inline constexpr int exit_usage = 2;    // bad usage: nothing was run
// kvbench compare: NEW does not cover BASE (no row in common, or rows of BASE missing from NEW),
// so the comparison says nothing about them, which is neither a pass nor a slowdown.
inline constexpr int exit_incomplete = 3;

// A run stopped by a signal: 128 + the signal, as a shell reports it (130 for Ctrl-C).
inline constexpr int exit_for_signal(int signal) { return 128 + signal; }

}  // namespace kvbench
