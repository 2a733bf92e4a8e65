#include "serve/ws_client.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "core/clock.hpp"
#include "serve/child_process.hpp"
#include "serve/handshake.hpp"

namespace tp::serve {

namespace {
constexpr std::uint64_t one_second_us = 1'000'000;
constexpr std::size_t control_budget = 256U << 10U;
constexpr std::size_t max_gather_chunks = 64;
constexpr std::size_t max_gather_bytes = 1U << 20U;
constexpr std::size_t max_waiting_kinds = 64;
}  // namespace

WsClient::WsClient(SessionHost& server, tcp::socket socket, std::string peer, Slot slot, bool batched, std::string view)
    : server_(server),
      socket_(std::move(socket)),
      close_timer_(socket_.get_executor()),
      auth_timer_(socket_.get_executor()),
      peer_(std::move(peer)),
      view_(std::move(view)),
      id_(server.next_client_id()),
      parser_(server.options().max_message_size),
      queue_(server.options().queue_limit, control_budget),
      slot_(slot),
      authenticated_(slot == Slot::client),
      tokens_(server.options().max_message_rate * 2),
      refilled_us_(monotonic_us()) {
  boost::system::error_code ec;
  socket_.set_option(tcp::no_delay(true), ec);
  const auto endpoint = socket_.remote_endpoint(ec);
  peer_address_ = ec ? "?" : endpoint.address().to_string();
  if (batched) queue_.use_batches();
}

void WsClient::start(std::string_view early_bytes) {
  send(server_.hello(rfc3339_now()));
  if (!authenticated_) await_authentication();
  if (!early_bytes.empty()) {
    on_bytes(
        std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(early_bytes.data()), early_bytes.size()));
  }
  read();
}

// A connection that has not shown the token holds one of the few unauthenticated slots: it
// gets authentication_deadline to send Connect with it.
void WsClient::await_authentication() {
  auth_timer_.expires_after(authentication_deadline);
  auth_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (ec || self->authenticated_ || self->closing_) return;
    self->server_.log().verbose(fmt::format("client {} ({}): no token within {} s", self->id_, self->peer_,
                                            std::chrono::seconds(authentication_deadline).count()));
    self->send_error(ErrorCode::permission_denied, fmt::format("no token within {} s: send Connect with data.token",
                                                               std::chrono::seconds(authentication_deadline).count()));
    self->close(close_code::policy_violation, "authentication timeout");
  });
}

void WsClient::read() {
  socket_.async_read_some(asio::buffer(read_buffer_),
                          [self = shared_from_this()](boost::system::error_code ec, std::size_t n) {
                            if (ec) return self->closed();
                            self->on_bytes(std::span<const std::uint8_t>(self->read_buffer_.data(), n));
                            self->read();
                          });
}

void WsClient::on_bytes(std::span<const std::uint8_t> bytes) {
  if (closing_) return;  // after our close frame, only the peer's EOF matters
  const auto violation = parser_.feed(bytes, [this](const ClientFrame& frame) { on_frame(frame); });
  if (!violation) return;
  server_.log().verbose(fmt::format("client {} ({}): {}", id_, peer_, violation->message));
  if (violation->close_code == close_code::message_too_big) {
    send_error(ErrorCode::invalid_message, fmt::format("message too large: {}", violation->message));
  }
  close(violation->close_code, violation->message);
}

void WsClient::on_frame(const ClientFrame& frame) {
  switch (frame.opcode) {
    case Opcode::ping:
      queue_.push_control(make_frame(Opcode::pong, frame.payload), true);
      return write_more();
    case Opcode::pong:
      return;
    case Opcode::close:
      return close(frame.close_code == 1005 ? close_code::normal : frame.close_code, "");
    case Opcode::binary:
      if (!admit_message()) return;
      return send_error(ErrorCode::invalid_message, "binary messages are not part of the protocol: send JSON text");
    default:
      if (!admit_message()) return;
      return on_message(frame.payload);
  }
}

// Token bucket: max_message_rate per second, bursts of twice that. Past it messages are
// refused (one Error per second says so); a client that keeps flooding is disconnected.
bool WsClient::admit_message() {
  const double rate = server_.options().max_message_rate;
  const std::uint64_t now = monotonic_us();
  tokens_ = std::min(rate * 2, tokens_ + rate * static_cast<double>(now - refilled_us_) / 1e6);
  refilled_us_ = now;
  if (tokens_ >= 1) {
    tokens_ -= 1;
    return true;
  }
  if (now - refusal_window_us_ >= one_second_us) {
    refusal_window_us_ = now;
    refused_in_window_ = 0;
  }
  if (++refused_in_window_ == 1) {
    send_error(ErrorCode::invalid_message,
               fmt::format("too many messages: at most {} per second; messages are ignored for now", rate), true);
  }
  if (static_cast<double>(refused_in_window_) > rate * 20) close(close_code::policy_violation, "flooding");
  return false;
}

void WsClient::on_message(std::string_view text) {
  auto parsed = server_.parse_client_message(text);
  if (const auto* error = std::get_if<ProtocolError>(&parsed)) return send_error(error->code, error->message);
  auto& message = std::get<ClientMessage>(parsed);
  if (!authenticated_ && !std::holds_alternative<ConnectRequest>(message)) {
    return send_error(ErrorCode::permission_denied, "this server needs a token: send Connect with data.token first");
  }
  std::visit([this](const auto& request) { handle(request); }, message);
}

void WsClient::handle(const ConnectRequest& request) {
  if (!authenticated_ && !authenticate(request)) return;
  if (server_.command_mode()) {
    // These values become the command's {chip} and {probe_selector}.
    for (const auto& [field, value] :
         {std::pair{"chip", request.chip}, std::pair{"probe_selector", request.probe_selector}}) {
      if (!value) continue;
      if (const auto refused = refuse_placeholder_value(field, *value)) {
        server_.log().warn(fmt::format("client {} ({}): Connect refused: {}", id_, peer_, *refused));
        return send_error(ErrorCode::invalid_parameters, *refused);
      }
    }
  }
  connected_ = true;
  connect_ = request;
  status_ = server_.status_for(request);
  send(status_message(status_));
}

bool WsClient::authenticate(const ConnectRequest& request) {
  const auto& expected = server_.options().token;
  const auto refuse = [&](std::string_view message) {
    send_error(ErrorCode::permission_denied, message);
    close(close_code::policy_violation, "authentication failed");
    return false;
  };
  if (server_.token_blocked_for_us(peer_address_) > 0) {
    return refuse("too many wrong tokens from this address: try again later");
  }
  if (!request.token || !expected) return refuse("this server needs a token");
  if (!constant_time_equal(*request.token, *expected)) {
    server_.wrong_token(peer_address_, "in Connect");
    return refuse("wrong token");
  }
  server_.token_accepted(peer_address_);
  if (!server_.promote_slot()) {
    send_error(ErrorCode::permission_denied,
               fmt::format("too many clients (--max-clients {}): try again later", server_.options().max_clients));
    close(close_code::try_again_later, "too many clients");
    return false;
  }
  slot_ = Slot::client;
  authenticated_ = true;
  auth_timer_.cancel();
  return true;
}

void WsClient::handle(const StartRequest& request) {
  if (!connected_) return send_error(ErrorCode::not_connected, "send Connect before Start");
  if (tracing_) return send_error(ErrorCode::already_tracing, "already tracing: send Stop first");
  allow_mask_ = request.allow_mask;
  filter_.port_mask = allow_mask_ & port_mask_;
  send(server_.meta());
  tracing_ = true;
  server_.client_started(*this, request);
}

// As the reference Callisto server: Stop ends the session and answers Status connected:false
// with no target, chip or probe; Start needs a Connect again.
void WsClient::handle(const StopRequest& /*request*/) {
  const bool was_tracing = tracing_;
  tracing_ = false;
  connected_ = false;
  send(status_message(StatusInfo{}));
  if (was_tracing) server_.client_stopped(*this);
}

void WsClient::handle(const SetFilterRequest& request) {
  port_mask_ = request.port_mask.value_or(0xFFFFFFFFU);
  filter_.port_mask = allow_mask_ & port_mask_;
  waiting_kinds_.clear();
  if (!request.event_types) {
    filter_.kinds = KindTable::callisto_kinds;
    return;
  }
  kinds_generation_ = server_.kinds_generation();  // before the look-up: a kind added meanwhile is seen next time
  filter_.kinds = server_.kind_mask(*request.event_types, waiting_kinds_);
  if (waiting_kinds_.size() > max_waiting_kinds) {
    send_error(ErrorCode::invalid_parameters,
               fmt::format("SetFilter.event_types: {} names are neither kinds of the record schema nor seen in the "
                           "stream (first: \"{}\"); only the first {} are kept, waiting for such records",
                           waiting_kinds_.size(), waiting_kinds_.front(), max_waiting_kinds));
    waiting_kinds_.resize(max_waiting_kinds);
  }
  if (!waiting_kinds_.empty()) {
    server_.log().verbose(fmt::format("client {} ({}): filter waits for kinds not seen yet: {}", id_, peer_,
                                      fmt::join(waiting_kinds_, ", ")));
  }
}

void WsClient::resolve_waiting_kinds() {
  kinds_generation_ = server_.kinds_generation();
  std::vector<std::string> still_unknown;
  filter_.kinds |= server_.kind_mask(waiting_kinds_, still_unknown);
  waiting_kinds_ = std::move(still_unknown);
}

void WsClient::restate() {
  status_ = server_.status_for(connect_);
  send(status_message(status_));
  send(server_.meta());
}

void WsClient::end_tracing(bool still_connected) {
  tracing_ = false;
  connected_ = still_connected;
  StatusInfo status = status_;
  status.connected = still_connected;
  send(status_message(status));
}

void WsClient::deliver(const std::shared_ptr<const Batch>& batch) {
  if (!tracing_ || closing_) return;
  if (!waiting_kinds_.empty() && server_.kinds_generation() != kinds_generation_) resolve_waiting_kinds();
  const Offered offered = queue_.push(batch, filter_);
  offered_ += offered.accepted;
  if (offered.dropped > 0) note_drops(offered.dropped);
  write_more();
}

void WsClient::note_drops(std::uint64_t events) {
  dropped_ += events;
  drops_unreported_ += events;
  const std::uint64_t now = monotonic_us();
  if (now - last_overflow_report_us_ < one_second_us) return;
  send_error(ErrorCode::buffer_overflow,
             fmt::format("this client is not keeping up: its send queue ({} bytes) is full; {} events dropped",
                         server_.options().queue_limit, drops_unreported_),
             true);
  drops_unreported_ = 0;
  last_overflow_report_us_ = now;
}

bool WsClient::send(const std::string& message, bool advisory) {
  if (closing_) return false;
  if (!queue_.push_control(make_frame(Opcode::text, message), advisory)) return false;
  write_more();
  return true;
}

void WsClient::send_error(std::optional<ErrorCode> code, std::string_view message, bool advisory) {
  send(error_message(rfc3339_now(), message, code), advisory);
}

// Only to connected clients: the reference server sends no Stats before Connect.
void WsClient::send_stats(double cpu_load, double interval_s, bool final) {
  if (!connected_ || closing_) return;
  unsent_interval_s_ += interval_s;
  StatsInfo stats;
  const std::uint64_t sent = events_sent_ - last_events_;
  const std::uint64_t dropped = dropped_ - last_dropped_;
  stats.events_per_sec = static_cast<double>(sent) / unsent_interval_s_;
  stats.bytes_per_sec = static_cast<double>(bytes_sent_ - last_bytes_) / unsent_interval_s_;
  stats.drop_rate = sent + dropped == 0 ? 0.0 : static_cast<double>(dropped) / static_cast<double>(sent + dropped);
  stats.cpu_load = cpu_load;
  stats.events_total = events_sent_;
  stats.dropped_total = dropped_;
  stats.queued_bytes = queue_.data_bytes();
  stats.offered_total = offered_;
  stats.final = final;
  // The final one is not advisory: it carries the totals a client checks its count with.
  if (!send(stats_message(rfc3339_now(), stats), !final)) return;
  last_events_ = events_sent_;
  last_bytes_ = bytes_sent_;
  last_dropped_ = dropped_;
  unsent_interval_s_ = 0;
}

void WsClient::write_more() {
  if (writing_ || closed_) return;
  if (queue_.empty()) {
    if (closing_) {
      boost::system::error_code ignored;
      socket_.shutdown(tcp::socket::shutdown_send, ignored);
    }
    return;
  }
  queue_.gather(gathered_, max_gather_chunks, max_gather_bytes);
  buffers_.clear();
  for (const std::string_view chunk : gathered_) buffers_.emplace_back(chunk.data(), chunk.size());
  writing_ = true;
  asio::async_write(socket_, buffers_,
                    [self = shared_from_this(), chunks = gathered_.size()](boost::system::error_code ec, std::size_t) {
                      self->writing_ = false;
                      if (ec) return self->closed();
                      const Delivered delivered = self->queue_.pop(chunks);
                      self->events_sent_ += delivered.events;
                      self->bytes_sent_ += delivered.bytes;
                      self->server_.events_sent(delivered.events);
                      if (delivered.events > 0) self->server_.client_drained(*self);
                      self->write_more();
                    });
}

void WsClient::close(std::uint16_t code, std::string_view reason) {
  if (closing_) return;
  queue_.push_control(make_close_frame(code, reason), false);
  closing_ = true;
  write_more();
  // A client that does not answer the close frame is cut off after two seconds.
  close_timer_.expires_after(std::chrono::seconds(2));
  close_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (!ec) self->closed();
  });
}

void WsClient::force_close() noexcept {
  boost::system::error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
}

void WsClient::closed() {
  if (closed_) return;
  closed_ = true;
  closing_ = true;
  close_timer_.cancel();
  auth_timer_.cancel();
  server_.give_back_slot(slot_);
  force_close();
  server_.client_closed(shared_from_this());
}

}  // namespace tp::serve
