// SIGINT, SIGTERM, SIGHUP -> an atomic flag. The handler only stores lock-free atomics and
// calls sigaction, both async-signal-safe.
#include "cli/interrupt.hpp"

#include <csignal>

#include <signal.h>

namespace kvbench {

namespace {

constexpr int stopping_signals[] = {SIGINT, SIGTERM, SIGHUP};

std::atomic<bool> interrupted{false};
std::atomic<int> signal_number{0};
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free);

void set_action(void (*handler)(int)) {
    struct sigaction action {};
    action.sa_handler = handler;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;  // a write or read under way finishes rather than failing with EINTR
    for (const int signal : stopping_signals) sigaction(signal, &action, nullptr);
}

extern "C" void on_stop_signal(int signal) {
    signal_number.store(signal);
    interrupted.store(true);
    set_action(SIG_DFL);
}

}  // namespace

const std::atomic<bool>& install_interrupt_flag() {
    set_action(on_stop_signal);
    return interrupted;
}

int interrupting_signal() { return signal_number.load(); }

}  // namespace kvbench
