// SIGINT -> an atomic flag (async-signal-safe: a lock-free store and signal()).
#include "cli/interrupt.hpp"

#include <csignal>

namespace kvbench {

namespace {
std::atomic<bool> interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void on_sigint(int) {
    interrupted.store(true);
    std::signal(SIGINT, SIG_DFL);
}
}  // namespace

const std::atomic<bool>& install_interrupt_flag() {
    std::signal(SIGINT, on_sigint);
    return interrupted;
}

}  // namespace kvbench
