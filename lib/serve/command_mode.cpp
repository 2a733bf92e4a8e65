#include "serve/command_mode.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <utility>
#include <vector>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "serve/ws_client.hpp"

namespace tp::serve {
namespace {

constexpr std::uint64_t kill_grace_us = 2'000'000;
constexpr std::size_t longest_stderr_line = 65536;  // a runaway line is not a report

}  // namespace

CommandMode::CommandMode(boost::asio::io_context& io, const ServeOptions& options, const Logger& log,
                         CommandHooks hooks)
    : io_(io), options_(options), log_(log), hooks_(std::move(hooks)) {}

void CommandMode::client_started(const StartRequest& request, const ConnectRequest& connect) {
  last_start_ = Start{request, connect};
  if (child_) {
    if (stopping_) restart_pending_ = true;
    return;
  }
  start();
}

void CommandMode::start() {
  const Start& start = *last_start_;
  const std::uint32_t baud = start.request.baud_rate.value_or(options_.default_baud);
  const std::map<std::string, std::string> values = {
      {"baud_rate", std::to_string(baud)},
      {"allow_mask", std::to_string(start.request.allow_mask)},
      {"allow_mask_hex", fmt::format("0x{:08x}", start.request.allow_mask)},
      {"probe_selector", options_.probe.value_or(start.connect.probe_selector.value_or(""))},
      {"chip", options_.chip.value_or(start.connect.chip.value_or(""))},
  };
  const std::vector<std::string> argv = substitute_placeholders(options_.command, values);
  try {
    child_ = ChildProcess::spawn(argv);
  } catch (const Error& e) {
    log_.error(e.error_code(), e.what());
    hooks_.for_tracing([&](WsClient& client) {
      client.send_error(e.error_code(), e.what());
      client.end_tracing(true);
    });
    return;
  }
  ++started_;
  facts_ = PipelineFacts{};  // this run states its own
  log_.info(fmt::format("started the capture command (pid {}): {}", child_->pid(), fmt::join(argv, " ")));
  reported_error_ = false;
  stopping_ = false;
  restart_pending_ = false;
  FileDescriptor out = child_->take_stdout();
  FileDescriptor err = child_->take_stderr();
  hooks_.start_input(ByteSource::from_fd(out.release(), "the capture command's output", true));
  stderr_.emplace(io_, err.release());
  stderr_line_.clear();
  read_stderr();
}

void CommandMode::client_stopped() {
  if (!child_ || stopping_ || hooks_.tracing_clients() > 0) return;
  log_.verbose("no client is tracing: stopping the capture command");
  stopping_ = true;
  child_->terminate();
  kill_at_us_ = monotonic_us() + kill_grace_us;
}

void CommandMode::read_stderr() {
  stderr_->async_read_some(boost::asio::buffer(stderr_buffer_), [this](boost::system::error_code ec, std::size_t n) {
    if (ec) {
      if (!stderr_line_.empty()) stderr_line(stderr_line_);
      stderr_line_.clear();
      stderr_.reset();
      return;
    }
    stderr_line_.append(stderr_buffer_.data(), n);
    std::size_t newline = 0;
    while ((newline = stderr_line_.find('\n')) != std::string::npos) {
      stderr_line(std::string_view(stderr_line_).substr(0, newline));
      stderr_line_.erase(0, newline + 1);
    }
    if (stderr_line_.size() > longest_stderr_line) stderr_line_.clear();
    read_stderr();
  });
}

void CommandMode::stderr_line(std::string_view line) {
  if (line.empty()) return;
  if (auto facts = parse_child_facts_line(line)) return take_facts(std::move(*facts));
  const auto error = parse_child_error_line(line);
  if (!error) {
    log_.info(fmt::format("command: {}", line));
    return;
  }
  log_.verbose(fmt::format("command reported {}: {}", error->code, error->message));
  if (stopping_) return;
  reported_error_ = true;
  hooks_.for_tracing([&](WsClient& client) {
    client.send_error(callisto_code_for_child(error->code), "capture command: " + error->message);
  });
}

// The command has said what it captures from: Status and Meta.cpu_hz take it in, and the
// tracing clients get both again (Callisto ignores a second Meta; Status updates its view).
void CommandMode::take_facts(PipelineFacts facts) {
  facts_ = std::move(facts);
  log_.verbose(fmt::format("the capture command reads from {}{}", probe_description(facts_),
                           facts_.cpu_hz ? fmt::format(", target clock {} Hz", *facts_.cpu_hz) : ""));
  if (stopping_) return;
  hooks_.for_tracing([&](WsClient& client) { client.restate(); });
}

void CommandMode::check() {
  if (!child_) return;
  const auto status = child_->poll();
  const std::uint64_t now = monotonic_us();
  if (stopping_ && !status && now >= kill_at_us_) child_->terminate(true);
  if (!status) return;
  const bool input_running = hooks_.input_running();
  if (input_running || stderr_) {
    // Exited, but something it started may still hold the pipes: end the whole group.
    if (exit_seen_us_ == 0) exit_seen_us_ = now;
    if (now - exit_seen_us_ > kill_grace_us) {
      child_->terminate(true);
      if (input_running) hooks_.stop_input();
      if (stderr_) stderr_->close();
    }
    return;
  }
  finish();
}

void CommandMode::finish() {
  const int code = child_->exit_code().value_or(1);
  if (!stopping_) {
    if (code != 0 && !reported_error_) {
      const std::string message = code > 128 ? fmt::format("capture command killed by signal {}", code - 128)
                                             : fmt::format("capture command exited with status {}", code);
      log_.error(callisto_code_for_exit(code), message);
      hooks_.for_tracing([&](WsClient& client) { client.send_error(callisto_code_for_exit(code), message); });
    } else if (code == 0) {
      log_.info("the capture command ended");
    }
    hooks_.for_tracing([&](WsClient& client) { client.end_tracing(code == 0); });
  }
  child_.reset();
  exit_seen_us_ = 0;
  const bool restart = restart_pending_ || (stopping_ && hooks_.tracing_clients() > 0);
  stopping_ = false;
  if (restart && hooks_.tracing_clients() > 0) start();
}

void CommandMode::terminate() {
  if (child_) child_->terminate();
}

void CommandMode::end() {
  child_.reset();
}

}  // namespace tp::serve
