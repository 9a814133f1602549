// Ctrl-C during a sweep: a flag the sweep polls between repetitions.
#pragma once

#include <atomic>

namespace kvbench {

// Installs a SIGINT handler that sets the returned flag and restores the default
// action, so a second Ctrl-C ends the process at once.
const std::atomic<bool>& install_interrupt_flag();

}  // namespace kvbench
