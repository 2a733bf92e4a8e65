// Internal to lib/serve: one WebSocket client of the Callisto protocol. It owns its socket
// after the HTTP upgrade, its bounded send queue, its filter and its protocol state
// (authenticated -> connected -> tracing).
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include "net/asio.hpp"

#include "serve/broadcast.hpp"
#include "serve/protocol.hpp"
#include "serve/session_host.hpp"
#include "serve/websocket_frame.hpp"

namespace tp::serve {

class WsClient : public std::enable_shared_from_this<WsClient> {
 public:
  // slot: the pool the connection holds (Slot::unauthenticated until it shows the token).
  // batched: the client asked for the batched form (batch_subprotocol). view: the target of
  // its upgrade request (/ws?board=...), which trace-lab's views read.
  WsClient(SessionHost& server, tcp::socket socket, std::string peer, Slot slot, bool batched = false,
           std::string view = {});

  // Sends Hello, handles bytes the client sent along with its upgrade request, reads on.
  void start(std::string_view early_bytes);
  void deliver(const std::shared_ptr<const Batch>& batch);
  // Whether its queue takes the whole batch now (a paced channel waits until it does).
  [[nodiscard]] bool has_room(const Batch& batch) const noexcept { return queue_.has_room(batch); }
  [[nodiscard]] const std::string& view() const noexcept { return view_; }
  // False when an advisory message did not fit the control budget (or the client closes).
  bool send(const std::string& message, bool advisory = false);
  void send_error(std::optional<ErrorCode> code, std::string_view message, bool advisory = false);
  // Stats since the last Stats the client was sent: an advisory one refused while the
  // client is stalled leaves its interval (and its drops) to the next. `final` marks the
  // closing Stats of a stream (never refused).
  void send_stats(double cpu_load, double interval_s, bool final = false);
  // Sends a close frame after what is queued, then closes the socket.
  void close(std::uint16_t code, std::string_view reason);
  // Tracing ends from the server's side (the capture command ended or failed).
  void end_tracing(bool still_connected);
  void force_close() noexcept;

  [[nodiscard]] bool tracing() const noexcept { return tracing_; }
  [[nodiscard]] const StatusInfo& status() const noexcept { return status_; }
  [[nodiscard]] const ConnectRequest& connect_request() const noexcept { return connect_; }
  // Status and Meta again, after the server learnt more of the pipeline.
  void restate();
  [[nodiscard]] std::uint64_t dropped() const noexcept { return dropped_; }
  [[nodiscard]] std::uint64_t offered() const noexcept { return offered_; }
  [[nodiscard]] std::uint64_t sent() const noexcept { return events_sent_; }
  [[nodiscard]] bool idle() const noexcept { return queue_.empty() && !writing_; }
  [[nodiscard]] std::uint64_t id() const noexcept { return id_; }
  [[nodiscard]] const std::string& peer() const noexcept { return peer_; }

 private:
  void read();
  void on_bytes(std::span<const std::uint8_t> bytes);
  void on_frame(const ClientFrame& frame);
  void on_message(std::string_view text);
  bool admit_message();
  // Checks Connect.token (with the per-address back-off); false: refused and closing.
  bool authenticate(const ConnectRequest& request);
  void handle(const ConnectRequest& request);
  void handle(const StartRequest& request);
  void handle(const StopRequest& request);
  void handle(const SetFilterRequest& request);
  // Looks the names a filter is waiting for up again once the input has added kinds.
  void resolve_waiting_kinds();
  void write_more();
  void note_drops(std::uint64_t events);
  void closed();
  void await_authentication();

  SessionHost& server_;
  tcp::socket socket_;
  asio::steady_timer close_timer_;
  asio::steady_timer auth_timer_;
  std::string peer_;
  std::string peer_address_;
  std::string view_;
  std::uint64_t id_;
  FrameParser parser_;
  SendQueue queue_;
  std::array<std::uint8_t, 16384> read_buffer_{};
  std::vector<std::string_view> gathered_;
  std::vector<asio::const_buffer> buffers_;
  bool writing_ = false;
  bool closing_ = false;
  bool closed_ = false;

  Slot slot_;
  bool authenticated_;
  bool connected_ = false;
  bool tracing_ = false;
  StatusInfo status_;
  ConnectRequest connect_;
  std::uint32_t allow_mask_ = 0xFFFFFFFFU;
  std::uint32_t port_mask_ = 0xFFFFFFFFU;
  ClientFilter filter_;
  // event_types names not known yet (a producer's own kinds that have not arrived): they
  // select records once the input brings such a kind.
  std::vector<std::string> waiting_kinds_;
  std::uint64_t kinds_generation_ = 0;

  // Rate limit on client messages: a token bucket.
  double tokens_;
  std::uint64_t refilled_us_;
  std::uint64_t refused_in_window_ = 0;
  std::uint64_t refusal_window_us_ = 0;

  // Counters for Stats.
  std::uint64_t events_sent_ = 0;
  std::uint64_t bytes_sent_ = 0;
  std::uint64_t dropped_ = 0;
  std::uint64_t offered_ = 0;
  std::uint64_t last_events_ = 0;
  std::uint64_t last_bytes_ = 0;
  std::uint64_t last_dropped_ = 0;
  double unsent_interval_s_ = 0;  // the time since the last Stats that was queued
  std::uint64_t drops_unreported_ = 0;
  std::uint64_t last_overflow_report_us_ = 0;
};

}  // namespace tp::serve
