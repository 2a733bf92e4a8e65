// SIGINT/SIGTERM request a clean stop; SIGPIPE is ignored so writes fail with EPIPE.
#pragma once

namespace tp {

// Installs the handlers (without SA_RESTART, so a blocking read returns EINTR).
void install_stop_signal_handlers();

// The signal number that asked us to stop, or 0.
[[nodiscard]] int stop_requested() noexcept;

// How many SIGINT/SIGTERM came (a second one cuts a drain short).
[[nodiscard]] unsigned stop_requests() noexcept;

// A descriptor that becomes readable (and stays so) once a stop was requested, for a thread
// that waits in poll(2), whatever its signal mask; -1 before the handlers are installed.
[[nodiscard]] int stop_wake_fd() noexcept;

// For tests: forget a previous request.
void reset_stop_request() noexcept;

}  // namespace tp
