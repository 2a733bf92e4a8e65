#include "serve/server.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <mutex>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/signals.hpp"
#include "net/host_names.hpp"
#include "serve/http_session.hpp"
#include "serve/server_core.hpp"
#include "serve/ws_client.hpp"

namespace tp::serve {

namespace {

constexpr std::uint64_t shutdown_grace_us = 500'000;

}  // namespace

ServerCore::ServerCore(ServeOptions options, const Logger& logger, std::unique_ptr<ServerExtension> extension)
    : options_(std::move(options)),
      log_(logger),
      tcp_(logger, "trace-serve", options_.address, options_.port, "another trace-serve runs there?",
           [this](tcp::socket socket) { accept(std::move(socket)); }),
      stats_timer_(tcp_.io()),
      server_id_(random_uuid()),
      origins_(OriginPolicyConfig{}),
      slots_(options_.max_clients, max_unauthenticated_connections),
      extension_(std::move(extension)),
      command_(tcp_.io(), options_, logger,
               CommandHooks{[this](ByteSource source) { start_input(std::move(source)); },
                            [this] { return input_->reading(); }, [this] { input_->stop(); },
                            [this](const std::function<void(WsClient&)>& action) { for_tracing(action); },
                            [this] { return tracing_clients(); }}) {
  // The real port is known only now (port 0); the browser's Origin will name it.
  options_.port = tcp_.port();
  origins_ = origin_policy();
  if (extension_) extension_->attach(*this);
  input_ = std::make_shared<Channel>(tcp_.io(), kinds_, input_settings(options_), input_events());
}

// Beyond loopback, clients on other machines open this host by one of its addresses or its
// name: those names are admitted as Host. With a token, a browser there is admitted too (the
// token still guards every client); without one only loopback origins are, so a page
// elsewhere cannot drive the server.
OriginPolicy ServerCore::origin_policy() const {
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

void ServerCore::refused_browser(std::string_view what, std::string_view peer, std::string_view advice) {
  constexpr std::size_t remembered = 64;  // a page retrying in a loop does not flood stderr
  const std::string message = fmt::format("refused a browser from {}: {}; {}", peer, what, advice);
  if (refusals_logged_.size() < remembered && refusals_logged_.insert(std::string(what)).second) {
    log_.warn(message);
  } else {
    log_.verbose(message);
  }
}

void ServerCore::accept(tcp::socket socket) {
  if (stopping_) return;
  std::make_shared<HttpSession>(*this, std::move(socket))->start();
}

void ServerCore::client_opened(const std::shared_ptr<WsClient>& client) {
  clients_.insert(client);
  if (!extension_) input_->add(client);
  log_.verbose(fmt::format("client {} connected from {} ({} now)", client->id(), client->peer(), clients_.size()));
}

void ServerCore::client_closed(const std::shared_ptr<WsClient>& client) {
  stats_.events_dropped += client->dropped();
  const bool was_tracing = client->tracing();
  clients_.erase(client);
  input_->remove(*client);
  log_.verbose(fmt::format("client {} ({}) gone ({} left): {} records offered, {} sent, {} dropped", client->id(),
                           client->peer(), clients_.size(), client->offered(), client->sent(), client->dropped()));
  if (was_tracing) client_stopped(*client);
}

std::string ServerCore::hello(std::string_view timestamp) const {
  return hello_message(server_id_, timestamp);
}

std::uint64_t ServerCore::token_blocked_for_us(const std::string& address) const {
  return failed_tokens_.blocked_for(address, monotonic_us());
}

void ServerCore::wrong_token(const std::string& address, std::string_view where) {
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
StatusInfo ServerCore::status_for(const ConnectRequest& connect) const {
  StatusInfo status;
  status.connected = true;
  status.target = options_.target ? options_.target : command_.facts().target;
  status.chip = options_.chip ? options_.chip : command_.facts().chip ? command_.facts().chip : connect.chip;
  if (options_.probe) {
    status.probe = options_.probe;
  } else if (command_.facts().probe) {
    status.probe = probe_description(command_.facts());
  } else {
    status.probe = connect.probe_selector;
  }
  return status;
}

std::string ServerCore::meta() const {
  // --dwt yes|no decides; else DWT is available once records carried cycle timestamps.
  const bool seen = input_->saw_cycles_clock();
  const std::optional<std::uint64_t> cpu_hz = options_.cpu_hz ? options_.cpu_hz : command_.facts().cpu_hz;
  return meta_message(options_.ports_map_json, cpu_hz, options_.dwt_available.value_or(seen));
}

std::size_t ServerCore::tracing_clients() const {
  return static_cast<std::size_t>(
      std::count_if(clients_.begin(), clients_.end(), [](const auto& client) { return client->tracing(); }));
}

void ServerCore::for_tracing(const std::function<void(WsClient&)>& action) {
  // Copied: an action may end a client's tracing.
  const std::vector<std::shared_ptr<WsClient>> clients(clients_.begin(), clients_.end());
  for (const auto& client : clients) {
    if (client->tracing()) action(*client);
  }
}

// ---- input ---------------------------------------------------------------------------

ChannelSettings ServerCore::input_settings(const ServeOptions& options) {
  ChannelSettings settings;
  settings.pump.symbols = options.symbols;
  settings.pump.top_interval_s = options.top_interval_s;
  return settings;
}

ChannelEvents ServerCore::input_events() {
  ChannelEvents events;
  events.bad_line = [this](std::uint64_t line, std::string_view problem) {
    if (++bad_lines_reported_ <= 10) {
      log_.warn(fmt::format("line {}: {}; skipped{}", line, problem,
                            bad_lines_reported_ == 10 ? " (further bad lines are only counted)" : ""));
    }
  };
  events.ended = [this](const std::string& error) { input_ended(error); };
  // What a capture command writes after it was told to stop belongs to no client.
  events.muted = [this] { return command_.stopping(); };
  return events;
}

void ServerCore::start_input(ByteSource source) {
  input_->start(std::move(source));
}

void ServerCore::input_ended(const std::string& error) {
  stats_.bad_lines = input_->bad_lines();
  stats_.records_read = input_->records();
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

void ServerCore::client_started(WsClient& client, const StartRequest& request) {
  if (extension_) return extension_->client_started(client.shared_from_this());
  if (command_mode()) command_.client_started(request, client.connect_request());
}

void ServerCore::client_stopped(WsClient& client) {
  if (extension_) return extension_->client_stopped(client);
  if (command_mode()) command_.client_stopped();
}

void ServerCore::client_drained(WsClient& client) {
  if (extension_) extension_->client_drained(client);
}

// ---- timers and life cycle -----------------------------------------------------------

void ServerCore::tick() {
  if (stop_requested() != 0 && !stopping_) stop();
  if (stopping_) {
    if (clients_.empty() || monotonic_us() - stopped_at_us_ > shutdown_grace_us) {
      tcp_.stop_ticking();
      tcp_.io().stop();
    }
    return;
  }
  command_.check();
  if (extension_) extension_->tick();
  if (options_.exit_on_eof && input_ended_ && input_->in_flight() == 0) {
    const bool drained = std::all_of(clients_.begin(), clients_.end(), [](const auto& c) { return c->idle(); });
    if (drained || monotonic_us() - input_ended_at_us_ > 5'000'000) stop();
  }
}

void ServerCore::schedule_stats() {
  stats_timer_.expires_after(std::chrono::microseconds(static_cast<std::int64_t>(options_.stats_interval_s * 1e6)));
  stats_timer_.async_wait([this](boost::system::error_code ec) {
    if (ec || stopping_) return;
    send_stats(false);
    schedule_stats();
  });
}

void ServerCore::send_stats(bool final) {
  const std::uint64_t now = monotonic_us();
  const double interval =
      last_stats_us_ == 0 ? options_.stats_interval_s : static_cast<double>(now - last_stats_us_) / 1e6;
  last_stats_us_ = now;
  const double load = cpu_.sample();
  for (const auto& client : clients_) {
    if (!final || client->tracing()) client->send_stats(load, interval, final);
  }
}

void ServerCore::stop() {
  if (stopping_) return;
  stopping_ = true;
  input_->stop();
  stopped_at_us_ = monotonic_us();
  tcp_.stop_accepting();
  stats_timer_.cancel();
  if (extension_) extension_->stop();
  command_.terminate();
  for (const auto& client : std::vector<std::shared_ptr<WsClient>>(clients_.begin(), clients_.end())) {
    client->close(close_code::going_away, "server shutting down");
  }
}

void ServerCore::run() {
  schedule_stats();
  if (!command_mode() && !extension_) start_input(ByteSource::open(options_.input));
  tcp_.run(std::chrono::milliseconds(20), [this] { tick(); });
  input_->stop();  // a reader waiting for room gives up: nothing will make room now
  if (extension_) extension_->stop();
  for (const auto& client : clients_) client->force_close();
  stats_.bad_lines = input_->bad_lines();
  stats_.records_read = input_->records();
  input_.reset();
  extension_.reset();
  for (const auto& client : clients_) stats_.events_dropped += client->dropped();
  clients_.clear();
  command_.end();
}

Server::Server(ServeOptions options, const Logger& logger, std::unique_ptr<ServerExtension> extension)
    : core_(std::make_unique<ServerCore>(std::move(options), logger, std::move(extension))) {}
Server::~Server() = default;
std::uint16_t Server::port() const {
  return core_->port();
}
void Server::run() {
  core_->run();
}
ServeStats Server::stats() const {
  return core_->stats();
}

}  // namespace tp::serve
