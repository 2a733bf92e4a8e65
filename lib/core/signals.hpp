// SIGINT/SIGTERM request a clean stop; SIGPIPE is ignored so writes fail with EPIPE. A tool
// that must let go of something on every way out (rtt-capture: a target halted for a poll)
// also stops cleanly on SIGHUP and SIGQUIT, whose default ends the process at once.
#pragma once

namespace tp {

// Installs the handlers (without SA_RESTART, so a blocking read returns EINTR).
void install_stop_signal_handlers();

// After install_stop_signal_handlers(): SIGHUP and SIGQUIT request the stop too.
void stop_on_hangup_and_quit();

// A parent that starts tracepipe tools as its readers (trace-lab's views) names itself in
// TRACEPIPE_STOP_WITH_PARENT=PID: such a child asks the kernel for SIGTERM (a clean stop) when
// that parent dies, however it dies (SIGKILL included), so no reader lingers holding an
// engine's consumer or query. Only the named parent's own child does so (not a grandchild that
// inherited the variable); where the named parent has already ended (it died between this
// process's start and the call), the stop is requested at once. The variable is removed from
// the environment either way.
inline constexpr const char* stop_with_parent_variable = "TRACEPIPE_STOP_WITH_PARENT";
void stop_with_parent_from_environment();

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
