// Command mode: the capture pipeline trace-serve runs itself (`trace-serve -- CMD ARGS...`).
// The child gets its own process group (so `sh -c 'a | b'` stops as a whole), default
// signal dispositions, and TRACEPIPE_LOG_FORMAT=json so tracepipe tools report errors as
// JSON lines with the protocol's codes.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error_code.hpp"
#include "core/file_descriptor.hpp"

namespace tp::serve {

// Replaces {name} in each argument with values[name]; unknown names stay as they are.
std::vector<std::string> substitute_placeholders(const std::vector<std::string>& argv,
                                                 const std::map<std::string, std::string>& values);

// Values a client chooses ({chip}, {probe_selector}) reach the command's arguments, maybe a
// shell script: they are accepted only when they are at most 128 characters of letters,
// digits and . _ : / @ + - (what chip names and probe selectors are made of; never a shell
// metacharacter, a space or a quote). Returns why a value is refused, or nullopt.
inline constexpr std::size_t max_placeholder_value = 128;
std::optional<std::string> refuse_placeholder_value(std::string_view field, std::string_view value);

// Callisto's code for a tracepipe exit status (docs/design.md "Exit codes"): usage and bad input are
// INVALID_PARAMETERS, anything without a closer code TARGET_NOT_RESPONDING; never none, so a
// client's Error always has a code its schema knows.
ErrorCode callisto_code_for_exit(int exit_code) noexcept;

// Callisto's code for the code of a child's JSON error line: Callisto's codes as they are,
// tracepipe's mapped to the closest (NOT_FOUND: PROBE_NOT_FOUND, BUSY: PROBE_IN_USE, BAD_INPUT:
// INVALID_PARAMETERS), others and unknown names TARGET_NOT_RESPONDING.
ErrorCode callisto_code_for_child(std::string_view name) noexcept;

// One error report from the child's stderr in tracepipe's JSON log form
// {"level":"error","code":"PROBE_NOT_FOUND","message":"..."}; nullopt for other lines.
struct ChildError {
  std::string code;
  std::string message;
};
std::optional<ChildError> parse_child_error_line(std::string_view line);

// What the command said of its source, in a JSON log line with "facts" (swo-capture states
// {"probe","serial","baud","cpu_hz","target"} at start); nullopt for other lines. Fields
// of the wrong type are left out.
struct PipelineFacts {
  std::optional<std::string> probe;
  std::optional<std::string> serial;
  std::optional<std::string> target;
  std::optional<std::string> chip;
  std::optional<std::uint64_t> baud;
  std::optional<std::uint64_t> cpu_hz;
};
std::optional<PipelineFacts> parse_child_facts_line(std::string_view line);
// "LPC-Link2 (serial ABC, 2000000 bit/s)": the probe as Status names it.
std::string probe_description(const PipelineFacts& facts);

class ChildProcess {
 public:
  // Starts argv[0] (searched in PATH) with stdout and stderr on pipes. Throws tp::Error
  // (not_found when the program does not exist). With stop_with_parent a tracepipe tool is
  // asked to stop when this process dies (core/signals.hpp: stop_with_parent_from_environment);
  // the thread that spawns must live as long as the process (the kernel watches that thread).
  struct Options {
    bool stop_with_parent = false;
  };
  static ChildProcess spawn(const std::vector<std::string>& argv, Options options);
  static ChildProcess spawn(const std::vector<std::string>& argv) { return spawn(argv, Options{}); }

  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  // Kills the whole group if it still runs, and reaps it.
  ~ChildProcess();

  FileDescriptor take_stdout() noexcept { return std::move(stdout_); }
  FileDescriptor take_stderr() noexcept { return std::move(stderr_); }
  [[nodiscard]] pid_t pid() const noexcept { return pid_; }
  [[nodiscard]] bool running() const noexcept { return pid_ > 0 && !status_; }

  // Sends SIGTERM (then, with force, SIGKILL) to the child's process group.
  void terminate(bool force = false) const noexcept;
  // The wait status once the child has exited (non-blocking).
  std::optional<int> poll();
  // Exit status as a shell reports it: the code, or 128+signal.
  [[nodiscard]] std::optional<int> exit_code() const noexcept;

 private:
  ChildProcess(pid_t pid, FileDescriptor out, FileDescriptor err) noexcept
      : pid_(pid), stdout_(std::move(out)), stderr_(std::move(err)) {}
  void reap_now() noexcept;

  pid_t pid_ = -1;
  FileDescriptor stdout_;
  FileDescriptor stderr_;
  std::optional<int> status_;
};

}  // namespace tp::serve
