// Errors and exit codes shared by every tracepipe tool (DESIGN.md "Conventions").
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace tp {

// Documented exit codes, identical across tools (see README "Exit codes").
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

// Machine-readable code for --log-format json: Callisto's codes where one fits.
std::string_view error_code_name(ExitCode code);

// An error with the exit code it maps to and an optional protocol code override
// (e.g. "BAUD_RATE_ERROR"). Library code throws it; only tools turn it into an exit.
class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message, std::string protocol_code = {})
      : std::runtime_error(message), code_(code), protocol_code_(std::move(protocol_code)) {}
  [[nodiscard]] ExitCode code() const noexcept { return code_; }
  [[nodiscard]] std::string_view protocol_code() const noexcept {
    return protocol_code_.empty() ? error_code_name(code_) : std::string_view{protocol_code_};
  }

 private:
  ExitCode code_;
  std::string protocol_code_;
};

// Thrown by the output side when the reader of our stdout went away (EPIPE).
class BrokenPipe : public std::runtime_error {
 public:
  BrokenPipe() : std::runtime_error("broken pipe") {}
};

// Maps an errno value from open/read/write to an Error with context.
[[noreturn]] void throw_system_error(int err, std::string_view what);

}  // namespace tp
