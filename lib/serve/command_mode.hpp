// Command mode (`trace-serve -- CMD ARGS...`): the capture pipeline run as a child process
// while clients trace. The first Start runs the command with the client's values in its
// placeholders; its stdout becomes the server's input, its stderr is read for JSON error
// lines (sent to the tracing clients with Callisto's codes) and facts (what it captures
// from: Status and Meta take them in). When no client traces any more it is stopped
// (SIGTERM, then SIGKILL after a grace); a Start while it stops restarts it. Everything
// here runs on the io_context thread.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/byte_source.hpp"
#include "core/log.hpp"
#include "net/asio.hpp"
#include "serve/child_process.hpp"
#include "serve/protocol.hpp"
#include "serve/serve_options.hpp"

namespace tp::serve {

class WsClient;

// What command mode needs of the server: its input and its tracing clients.
struct CommandHooks {
  std::function<void(ByteSource)> start_input;  // the command's stdout becomes the input
  std::function<bool()> input_running;
  std::function<void()> stop_input;
  std::function<void(const std::function<void(WsClient&)>&)> for_tracing;
  std::function<std::size_t()> tracing_clients;
};

class CommandMode {
 public:
  CommandMode(boost::asio::io_context& io, const ServeOptions& options, const Logger& log, CommandHooks hooks);

  // A client started tracing (Start): runs the command, or restarts it once it has stopped.
  void client_started(const StartRequest& request, const ConnectRequest& connect);
  // A client stopped tracing or left: with none tracing, the command is stopped.
  void client_stopped();
  // On the server's tick: escalates a stop past its grace, notices the exit.
  void check();
  // The server shuts down: the command is told to stop.
  void terminate();
  // The server's run ended: the command is gone (killed if still there).
  void end();

  // Output written after the command was told to stop belongs to no client.
  [[nodiscard]] bool stopping() const noexcept { return stopping_; }
  // What the running (or last) command said of its source.
  [[nodiscard]] const PipelineFacts& facts() const noexcept { return facts_; }
  [[nodiscard]] std::uint64_t started() const noexcept { return started_; }

 private:
  struct Start {
    StartRequest request;
    ConnectRequest connect;  // the client's own values: {chip} and {probe_selector}
  };

  void start();
  void read_stderr();
  void stderr_line(std::string_view line);
  void take_facts(PipelineFacts facts);
  void finish();

  boost::asio::io_context& io_;
  const ServeOptions& options_;
  const Logger& log_;
  CommandHooks hooks_;
  std::optional<ChildProcess> child_;
  std::optional<boost::asio::posix::stream_descriptor> stderr_;
  std::array<char, 4096> stderr_buffer_{};
  std::string stderr_line_;
  std::optional<Start> last_start_;
  PipelineFacts facts_;
  std::uint64_t started_ = 0;
  std::uint64_t kill_at_us_ = 0;
  std::uint64_t exit_seen_us_ = 0;
  bool reported_error_ = false;
  bool stopping_ = false;  // we asked it to stop: its exit is not an error
  bool restart_pending_ = false;
};

}  // namespace tp::serve
