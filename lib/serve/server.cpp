#include "serve/server.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <mutex>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/signals.hpp"
#include "net/host_names.hpp"
#include "serve/http_session.hpp"
#include "serve/server_impl.hpp"
#include "serve/ws_client.hpp"

namespace tp::serve {

namespace {

constexpr int max_batches_in_flight = 32;
constexpr std::uint64_t child_kill_grace_us = 2'000'000;
constexpr std::uint64_t shutdown_grace_us = 500'000;

double seconds(const timeval& tv) {
  return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
}

double process_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

}  // namespace

CpuMeter::CpuMeter()
    : last_cpu_s_(process_cpu_seconds()),
      last_wall_s_(static_cast<double>(monotonic_us()) / 1e6),
      cores_(static_cast<double>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)))) {}

double CpuMeter::sample() {
  const double cpu = process_cpu_seconds();
  const double wall = static_cast<double>(monotonic_us()) / 1e6;
  const double load = wall > last_wall_s_ ? (cpu - last_cpu_s_) / (wall - last_wall_s_) / cores_ : 0.0;
  last_cpu_s_ = cpu;
  last_wall_s_ = wall;
  return std::clamp(load, 0.0, 1.0);
}

Server::Impl::Impl(ServeOptions options, const Logger& logger)
    : options_(std::move(options)),
      log_(logger),
      tcp_(logger, "trace-serve", options_.address, options_.port, "another trace-serve runs there?",
           [this](tcp::socket socket) { accept(std::move(socket)); }),
      stats_timer_(tcp_.io()),
      server_id_(random_uuid()),
      origins_(OriginPolicyConfig{}),
      slots_(options_.max_clients, max_unauthenticated_connections) {
  // The real port is known only now (port 0); the browser's Origin will name it.
  options_.port = tcp_.port();
  origins_ = origin_policy();
}

// Beyond loopback, clients on other machines open this host by one of its addresses or its
// name: those names are admitted as Host. With a token, a browser there is admitted too (the
// token still guards every client); without one only loopback origins are, so a page
// elsewhere cannot drive the server.
OriginPolicy Server::Impl::origin_policy() const {
  OriginPolicyConfig config{options_.address, options_.port, options_.allowed_origins, {}, options_.token.has_value()};
  const std::string& address = options_.address;
  if (address == "127.0.0.1" || address == "::1" || address == "localhost") return OriginPolicy(std::move(config));
  config.host_names = net::host_names_for_origins();
  if (!options_.token) {
    log_.warn(
        fmt::format("listening on {} without --token: browsers on other hosts are refused (only loopback "
                    "origins are admitted); set --token, or name their origins with --allow-origin",
                    address));
  } else {
    log_.verbose(fmt::format("browsers may open this server as http://{{{}}}:{}/ (with the token)",
                             fmt::join(config.host_names, ","), options_.port));
  }
  return OriginPolicy(std::move(config));
}

void Server::Impl::refused_browser(std::string_view what, std::string_view peer, std::string_view advice) {
  constexpr std::size_t remembered = 64;  // a page retrying in a loop does not flood stderr
  const std::string message = fmt::format("refused a browser from {}: {}; {}", peer, what, advice);
  if (refusals_logged_.size() < remembered && refusals_logged_.insert(std::string(what)).second) {
    log_.warn(message);
  } else {
    log_.verbose(message);
  }
}

void Server::Impl::accept(tcp::socket socket) {
  if (stopping_) return;
  std::make_shared<HttpSession>(*this, std::move(socket))->start();
}

void Server::Impl::client_opened(const std::shared_ptr<WsClient>& client) {
  clients_.insert(client);
  log_.verbose(fmt::format("client {} connected from {} ({} now)", client->id(), client->peer(), clients_.size()));
}

void Server::Impl::client_closed(const std::shared_ptr<WsClient>& client) {
  stats_.events_dropped += client->dropped();
  const bool was_tracing = client->tracing();
  clients_.erase(client);
  log_.verbose(fmt::format("client {} ({}) gone ({} left): {} records offered, {} sent, {} dropped", client->id(),
                           client->peer(), clients_.size(), client->offered(), client->sent(), client->dropped()));
  if (was_tracing) client_stopped();
}

std::string Server::Impl::hello(std::string_view timestamp) const {
  return hello_message(server_id_, timestamp);
}

std::uint64_t Server::Impl::token_blocked_for_us(const std::string& address) const {
  return failed_tokens_.blocked_for(address, monotonic_us());
}

void Server::Impl::wrong_token(const std::string& address, std::string_view where) {
  ++stats_.wrong_tokens;
  const std::uint64_t block_us = failed_tokens_.failed(address, monotonic_us());
  // Each wrong token is logged: past the first few the peer is blocked, so that is at most a
  // few lines a minute per address.
  log_.warn(block_us == 0 ? fmt::format("wrong token from {} ({})", address, where)
                          : fmt::format("wrong token from {} ({}); its connections are refused for {} s", address,
                                        where, block_us / 1'000'000));
}

// The flags first, then what the capture command said of its source (command mode), then
// the client's own Connect.
StatusInfo Server::Impl::status_for(const ConnectRequest& connect) const {
  StatusInfo status;
  status.connected = true;
  status.target = options_.target ? options_.target : pipeline_.target;
  status.chip = options_.chip ? options_.chip : pipeline_.chip ? pipeline_.chip : connect.chip;
  if (options_.probe) {
    status.probe = options_.probe;
  } else if (pipeline_.probe) {
    status.probe = probe_description(pipeline_);
  } else {
    status.probe = connect.probe_selector;
  }
  return status;
}

std::string Server::Impl::meta() const {
  // --dwt yes|no decides; else DWT is available once records carried cycle timestamps.
  const bool seen = seen_cycles_clock_ || (pump_ && pump_->saw_cycles_clock());
  const std::optional<std::uint64_t> cpu_hz = options_.cpu_hz ? options_.cpu_hz : pipeline_.cpu_hz;
  return meta_message(options_.ports_map_json, cpu_hz, options_.dwt_available.value_or(seen));
}

std::size_t Server::Impl::tracing_clients() const {
  return static_cast<std::size_t>(
      std::count_if(clients_.begin(), clients_.end(), [](const auto& client) { return client->tracing(); }));
}

void Server::Impl::for_tracing(const std::function<void(WsClient&)>& action) {
  // Copied: an action may end a client's tracing.
  const std::vector<std::shared_ptr<WsClient>> clients(clients_.begin(), clients_.end());
  for (const auto& client : clients) {
    if (client->tracing()) action(*client);
  }
}

// ---- input ---------------------------------------------------------------------------

void Server::Impl::start_pump(ByteSource source) {
  PumpCallbacks callbacks;
  callbacks.publish = [this](std::shared_ptr<const Batch> batch) { publish(std::move(batch)); };
  callbacks.bad_line = [this](std::uint64_t line, std::string_view problem) {
    if (++bad_lines_reported_ <= 10) {
      log_.warn(fmt::format("line {}: {}; skipped{}", line, problem,
                            bad_lines_reported_ == 10 ? " (further bad lines are only counted)" : ""));
    }
  };
  callbacks.ended = [this](std::string_view error) {
    asio::post(tcp_.io(), [this, error = std::string(error)] { pump_ended(error); });
  };
  PumpOptions pump_options;
  pump_options.symbols = options_.symbols;
  pump_options.top_interval_s = options_.top_interval_s;
  pump_ = std::make_unique<InputPump>(std::move(source), kinds_, std::move(callbacks), std::move(pump_options));
}

// On the pump's thread. When the server thread itself falls behind (not a client: clients
// have their own queues) the pump waits, so the input is held back in the pipe rather than
// lost; memory stays at most max_batches_in_flight batches.
void Server::Impl::publish(std::shared_ptr<const Batch> batch) {
  {
    std::unique_lock lock(flow_mutex_);
    while (in_flight_ >= max_batches_in_flight && !stopping_flag_.load()) {
      flow_.wait_for(lock, std::chrono::milliseconds(20));
    }
    ++in_flight_;
  }
  asio::post(tcp_.io(), [this, batch = std::move(batch)] {
    {
      const std::scoped_lock lock(flow_mutex_);
      --in_flight_;
    }
    flow_.notify_one();
    distribute(batch);
  });
}

void Server::Impl::distribute(const std::shared_ptr<const Batch>& batch) {
  // What a capture command writes after it was told to stop belongs to no client.
  if (child_stopping_) return;
  for (const auto& client : clients_) client->deliver(batch);
}

void Server::Impl::pump_ended(const std::string& error) {
  if (pump_) {
    seen_cycles_clock_ = seen_cycles_clock_ || pump_->saw_cycles_clock();
    stats_.bad_lines += pump_->bad_lines();
    stats_.records_read += pump_->records();
  }
  pump_.reset();
  if (!error.empty()) log_.error(ErrorCode::io_error, fmt::format("reading records: {}", error));
  // Every batch of the stream was distributed before this ran (one thread, posted in
  // order): each tracing client's drop and offer counts are final now.
  send_stats(true);
  if (!command_mode()) {
    input_ended_ = true;
    input_ended_at_us_ = monotonic_us();
    log_.info(fmt::format("input ended after {} records{}", stats_.records_read,
                          options_.exit_on_eof ? "" : "; still serving (Ctrl-C to stop)"));
  }
}

// ---- command mode --------------------------------------------------------------------

void Server::Impl::client_started(WsClient& client, const StartRequest& request) {
  if (!command_mode()) return;
  last_start_ = CommandStart{request, client.connect_request()};
  if (child_) {
    if (child_stopping_) restart_pending_ = true;
    return;
  }
  start_command();
}

void Server::Impl::start_command() {
  const CommandStart& start = *last_start_;
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
    for_tracing([&](WsClient& client) {
      client.send_error(e.error_code(), e.what());
      client.end_tracing(true);
    });
    return;
  }
  ++stats_.commands_started;
  pipeline_ = PipelineFacts{};  // this run states its own
  log_.info(fmt::format("started the capture command (pid {}): {}", child_->pid(), fmt::join(argv, " ")));
  child_reported_error_ = false;
  child_stopping_ = false;
  restart_pending_ = false;
  FileDescriptor out = child_->take_stdout();
  FileDescriptor err = child_->take_stderr();
  start_pump(ByteSource::from_fd(out.release(), "the capture command's output", true));
  child_stderr_.emplace(tcp_.io(), err.release());
  stderr_line_.clear();
  read_child_stderr();
}

void Server::Impl::client_stopped() {
  if (!command_mode() || !child_ || child_stopping_ || tracing_clients() > 0) return;
  log_.verbose("no client is tracing: stopping the capture command");
  child_stopping_ = true;
  child_->terminate();
  child_kill_at_us_ = monotonic_us() + child_kill_grace_us;
}

void Server::Impl::read_child_stderr() {
  child_stderr_->async_read_some(asio::buffer(stderr_buffer_), [this](boost::system::error_code ec, std::size_t n) {
    if (ec) {
      if (!stderr_line_.empty()) child_line(stderr_line_);
      stderr_line_.clear();
      child_stderr_.reset();
      return;
    }
    stderr_line_.append(stderr_buffer_.data(), n);
    std::size_t newline = 0;
    while ((newline = stderr_line_.find('\n')) != std::string::npos) {
      child_line(std::string_view(stderr_line_).substr(0, newline));
      stderr_line_.erase(0, newline + 1);
    }
    if (stderr_line_.size() > 65536) stderr_line_.clear();  // a runaway line: not a report
    read_child_stderr();
  });
}

void Server::Impl::child_line(std::string_view line) {
  if (line.empty()) return;
  if (auto facts = parse_child_facts_line(line)) return pipeline_facts(std::move(*facts));
  const auto error = parse_child_error_line(line);
  if (!error) {
    log_.info(fmt::format("command: {}", line));
    return;
  }
  log_.verbose(fmt::format("command reported {}: {}", error->code, error->message));
  if (child_stopping_) return;
  child_reported_error_ = true;
  for_tracing([&](WsClient& client) {
    client.send_error(callisto_code_for_child(error->code), "capture command: " + error->message);
  });
}

// The command has said what it captures from: Status and Meta.cpu_hz take it in, and the
// tracing clients get both again (Callisto ignores a second Meta; Status updates its view).
void Server::Impl::pipeline_facts(PipelineFacts facts) {
  pipeline_ = std::move(facts);
  log_.verbose(fmt::format("the capture command reads from {}{}", probe_description(pipeline_),
                           pipeline_.cpu_hz ? fmt::format(", target clock {} Hz", *pipeline_.cpu_hz) : ""));
  if (child_stopping_) return;
  for_tracing([&](WsClient& client) { client.restate(); });
}

void Server::Impl::check_child() {
  if (!child_) return;
  const auto status = child_->poll();
  const std::uint64_t now = monotonic_us();
  if (child_stopping_ && !status && now >= child_kill_at_us_) child_->terminate(true);
  if (!status) return;
  if (pump_ || child_stderr_) {
    // Exited, but something it started may still hold the pipes: end the whole group.
    if (child_exit_seen_us_ == 0) child_exit_seen_us_ = now;
    if (now - child_exit_seen_us_ > child_kill_grace_us) {
      child_->terminate(true);
      if (pump_) pump_->stop();
      if (child_stderr_) child_stderr_->close();
    }
    return;
  }
  finish_command();
}

void Server::Impl::finish_command() {
  const int code = child_->exit_code().value_or(1);
  if (!child_stopping_) {
    if (code != 0 && !child_reported_error_) {
      const std::string message = code > 128 ? fmt::format("capture command killed by signal {}", code - 128)
                                             : fmt::format("capture command exited with status {}", code);
      log_.error(callisto_code_for_exit(code), message);
      for_tracing([&](WsClient& client) { client.send_error(callisto_code_for_exit(code), message); });
    } else if (code == 0) {
      log_.info("the capture command ended");
    }
    for_tracing([&](WsClient& client) { client.end_tracing(code == 0); });
  }
  child_.reset();
  child_exit_seen_us_ = 0;
  const bool restart = restart_pending_ || (child_stopping_ && tracing_clients() > 0);
  child_stopping_ = false;
  if (restart && tracing_clients() > 0) start_command();
}

// ---- timers and life cycle -----------------------------------------------------------

void Server::Impl::tick() {
  if (stop_requested() != 0 && !stopping_) stop();
  if (stopping_) {
    if (clients_.empty() || monotonic_us() - stopped_at_us_ > shutdown_grace_us) {
      tcp_.stop_ticking();
      tcp_.io().stop();
    }
    return;
  }
  check_child();
  if (options_.exit_on_eof && input_ended_ && batches_in_flight() == 0) {
    const bool drained = std::all_of(clients_.begin(), clients_.end(), [](const auto& c) { return c->idle(); });
    if (drained || monotonic_us() - input_ended_at_us_ > 5'000'000) stop();
  }
}

void Server::Impl::schedule_stats() {
  stats_timer_.expires_after(std::chrono::microseconds(static_cast<std::int64_t>(options_.stats_interval_s * 1e6)));
  stats_timer_.async_wait([this](boost::system::error_code ec) {
    if (ec || stopping_) return;
    send_stats(false);
    schedule_stats();
  });
}

void Server::Impl::send_stats(bool final) {
  const std::uint64_t now = monotonic_us();
  const double interval =
      last_stats_us_ == 0 ? options_.stats_interval_s : static_cast<double>(now - last_stats_us_) / 1e6;
  last_stats_us_ = now;
  const double load = cpu_.sample();
  for (const auto& client : clients_) {
    if (!final || client->tracing()) client->send_stats(load, interval, final);
  }
}

void Server::Impl::stop() {
  if (stopping_) return;
  stopping_ = true;
  stopping_flag_.store(true);
  flow_.notify_all();
  stopped_at_us_ = monotonic_us();
  tcp_.stop_accepting();
  stats_timer_.cancel();
  if (pump_) pump_->stop();
  if (child_) child_->terminate();
  for (const auto& client : std::vector<std::shared_ptr<WsClient>>(clients_.begin(), clients_.end())) {
    client->close(close_code::going_away, "server shutting down");
  }
}

int Server::Impl::batches_in_flight() {
  const std::scoped_lock lock(flow_mutex_);
  return in_flight_;
}

void Server::Impl::run() {
  schedule_stats();
  if (!command_mode()) start_pump(ByteSource::open(options_.input));
  tcp_.run(std::chrono::milliseconds(20), [this] { tick(); });
  stopping_flag_.store(true);  // a pump waiting for room gives up: nothing will make room now
  flow_.notify_all();
  for (const auto& client : clients_) client->force_close();
  if (pump_) {
    pump_->stop();
    stats_.bad_lines += pump_->bad_lines();
    stats_.records_read += pump_->records();
    pump_.reset();
  }
  for (const auto& client : clients_) stats_.events_dropped += client->dropped();
  clients_.clear();
  child_.reset();
}

Server::Server(ServeOptions options, const Logger& logger)
    : impl_(std::make_unique<Impl>(std::move(options), logger)) {}
Server::~Server() = default;
std::uint16_t Server::port() const {
  return impl_->port();
}
void Server::run() {
  impl_->run();
}
ServeStats Server::stats() const {
  return impl_->stats();
}

}  // namespace tp::serve
