// Errors and exit codes shared by every tracepipe tool (docs/design.md "Conventions").
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/error_code.hpp"

namespace tp {

// Documented exit codes, identical across tools (docs/design.md "Exit codes").
enum class ExitCode : int {
  ok = 0,
  failure = 1,            // anything not covered below
  usage = 2,              // bad option or argument
  not_found = 3,          // file, device or probe not found
  permission_denied = 4,  // no access to file or device
  busy = 5,               // device or port in use by another process
  bad_input = 6,          // input unusable (or malformed with --strict)
  io_error = 7,           // read/write failed, device lost
  timeout = 8,            // peer or target did not respond
  unsupported = 9,        // requested mode/rate not supported by the peer
  internal = 70,          // a bug: please report it
};

// The error code an exit code stands for when nothing more precise is known (Callisto's
// where one fits: usage -> INVALID_PARAMETERS, timeout -> TARGET_NOT_RESPONDING).
[[nodiscard]] ErrorCode error_code_for_exit(ExitCode code) noexcept;

// An error with the exit code it maps to and, where it says more than the exit code, its
// error code (e.g. ErrorCode::baud_rate_error). Library code throws it; only tools turn it
// into an exit.
class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message, std::optional<ErrorCode> error_code = std::nullopt)
      : std::runtime_error(message), code_(code), error_code_(error_code) {}
  [[nodiscard]] ExitCode code() const noexcept { return code_; }
  [[nodiscard]] ErrorCode error_code() const noexcept { return error_code_.value_or(error_code_for_exit(code_)); }

 private:
  ExitCode code_;
  std::optional<ErrorCode> error_code_;
};

// Thrown by the output side when the reader of our stdout went away (EPIPE).
class BrokenPipe : public std::runtime_error {
 public:
  BrokenPipe() : std::runtime_error("broken pipe") {}
};

// Thrown by the output side when, after SIGINT/SIGTERM, the reader of the output took
// nothing for a second: the rest is not written, and the tool ends as stopped.
class OutputStalled : public Error {
 public:
  explicit OutputStalled(std::size_t unwritten)
      : Error(ExitCode::io_error, "stopped while the output's reader took nothing for a second: " +
                                      std::to_string(unwritten) + " bytes and what followed them were not written") {}
};

// Maps an errno value from open/read/write to an Error with context.
[[noreturn]] void throw_system_error(int err, std::string_view what);

}  // namespace tp
