// Stopping a sweep by signal: a flag the sweep polls between repetitions.
#pragma once

#include <atomic>

namespace kvbench {

// Installs one handler for SIGINT, SIGTERM and SIGHUP that sets the returned flag,
// records the signal and restores the default action of all three, so a second
// signal ends the process at once (the sweep has saved every finished point by then).
const std::atomic<bool>& install_interrupt_flag();

// The signal that raised the flag, 0 while none has.
int interrupting_signal();

}  // namespace kvbench
