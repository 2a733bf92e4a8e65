#include "core/signals.hpp"

#include "core/number.hpp"

#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

namespace tp {
namespace {
// Read by every thread (trace-serve's input pump and server), written by the handler: a
// lock-free atomic is both async-signal-safe and free of data races.
std::atomic<int> g_stop_signal{0};
std::atomic<int> g_wake_fd{-1};
std::atomic<unsigned> g_stop_count{0};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void on_stop_signal(int signo) {
  const int saved_errno = errno;
  g_stop_signal.store(signo, std::memory_order_relaxed);
  g_stop_count.fetch_add(1, std::memory_order_relaxed);
  if (const int wake = g_wake_fd.load(std::memory_order_relaxed); wake >= 0) {
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto n = ::write(wake, &one, sizeof one);  // async-signal-safe
  }
  errno = saved_errno;
}

void stop_on(int signo) {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;
  sigaction(signo, &action, nullptr);
}

// A pid as the kernel writes one (decimal, no sign or leading zero, below Linux's
// PID_MAX_LIMIT), else none: anything else names no process, ended or not.
std::optional<pid_t> pid_from_text(std::string_view text) {
  constexpr unsigned pid_max_limit = 4'194'304;
  const std::optional<unsigned> pid = parse_whole_number<unsigned>(text);
  if (!pid || text.starts_with('0') || *pid >= pid_max_limit) return std::nullopt;
  return static_cast<pid_t>(*pid);
}

// Whether the process has ended: its /proc/PID/stat missing, or its state (the field after
// the command's closing parenthesis) Z (a zombie) or X.
bool process_has_ended(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return true;
  const std::size_t close = text.rfind(')');
  if (close == std::string::npos || close + 2 >= text.size()) return true;
  const char state = text[close + 2];
  return state == 'Z' || state == 'X';
}
}  // namespace

void install_stop_signal_handlers() {
  if (g_wake_fd.load() < 0) g_wake_fd.store(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  stop_on(SIGINT);
  stop_on(SIGTERM);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGPIPE, &ignore, nullptr);
}

void stop_on_hangup_and_quit() {
  stop_on(SIGHUP);
  stop_on(SIGQUIT);
}

void stop_with_parent_from_environment() {
  const char* value = std::getenv(stop_with_parent_variable);
  if (value == nullptr) return;
  const std::optional<pid_t> parent = pid_from_text(value);
  ::unsetenv(stop_with_parent_variable);
  if (!parent) return;
  if (*parent == ::getppid()) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    // The parent may have died between the check and the request.
    if (*parent != ::getppid()) ::raise(SIGTERM);
  } else if (process_has_ended(*parent)) {
    // It died before this process got here (between its exec and this call): stop now.
    ::raise(SIGTERM);
  }
}

int stop_requested() noexcept {
  return g_stop_signal.load(std::memory_order_relaxed);
}
unsigned stop_requests() noexcept {
  return g_stop_count.load(std::memory_order_relaxed);
}
int stop_wake_fd() noexcept {
  return g_wake_fd.load(std::memory_order_relaxed);
}

void reset_stop_request() noexcept {
  g_stop_signal.store(0, std::memory_order_relaxed);
  g_stop_count.store(0, std::memory_order_relaxed);
  if (const int wake = g_wake_fd.load(); wake >= 0) {
    std::uint64_t count = 0;
    [[maybe_unused]] const auto n = ::read(wake, &count, sizeof count);  // readable no more
  }
}

}  // namespace tp
