#include "core/signals.hpp"

#include <atomic>
#include <csignal>

namespace tp {
namespace {
// Read by every thread (trace-serve's input pump and server), written by the handler: a
// lock-free atomic is both async-signal-safe and free of data races.
std::atomic<int> g_stop_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void on_stop_signal(int signo) {
  g_stop_signal.store(signo, std::memory_order_relaxed);
}
}  // namespace

void install_stop_signal_handlers() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGPIPE, &ignore, nullptr);
}

int stop_requested() noexcept {
  return g_stop_signal.load(std::memory_order_relaxed);
}
void reset_stop_request() noexcept {
  g_stop_signal.store(0, std::memory_order_relaxed);
}

}  // namespace tp
