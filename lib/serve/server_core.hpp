// Internal to lib/serve: the server's state shared by the acceptor, the HTTP sessions and
// the WebSocket clients (through SessionHost), behind Server. All of it lives on the
// io_context thread.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_set>
#include "net/asio.hpp"
#include "net/tcp_server.hpp"

#include "serve/admission.hpp"
#include "serve/broadcast.hpp"
#include "serve/channel.hpp"
#include "serve/command_mode.hpp"
#include "serve/cpu_meter.hpp"
#include "serve/handshake.hpp"
#include "serve/input_pump.hpp"
#include "serve/origin_policy.hpp"
#include "serve/protocol.hpp"
#include "serve/server_extension.hpp"
#include "serve/session_host.hpp"

namespace tp::serve {

class ServerCore final : public SessionHost, public ExtensionHost {
 public:
  ServerCore(ServeOptions options, const Logger& logger, std::unique_ptr<ServerExtension> extension = nullptr);
  ServerCore(const ServerCore&) = delete;
  ServerCore& operator=(const ServerCore&) = delete;
  ServerCore(ServerCore&&) = delete;
  ServerCore& operator=(ServerCore&&) = delete;
  ~ServerCore() override = default;
  void run();
  [[nodiscard]] std::uint16_t port() const { return tcp_.port(); }
  [[nodiscard]] ServeStats stats() const noexcept {
    ServeStats stats = stats_;
    stats.commands_started = command_.started();
    return stats;
  }

  // SessionHost: what sessions may ask.
  [[nodiscard]] const ServeOptions& options() const noexcept override { return options_; }
  [[nodiscard]] const Logger& log() const noexcept override { return log_; }
  // ExtensionHost: what an extension may use.
  [[nodiscard]] boost::asio::io_context& io() noexcept override { return tcp_.io(); }
  [[nodiscard]] KindTable& kinds() noexcept override { return kinds_; }
  [[nodiscard]] bool stopping() const noexcept override { return stopping_; }
  [[nodiscard]] bool command_mode() const noexcept override { return !options_.command.empty(); }
  [[nodiscard]] std::string hello(std::string_view timestamp) const override;
  [[nodiscard]] std::string meta() const override;
  [[nodiscard]] StatusInfo status_for(const ConnectRequest& connect) const override;
  [[nodiscard]] std::variant<ClientMessage, ProtocolError> parse_client_message(std::string_view text) override {
    return parser_.parse(text);
  }
  [[nodiscard]] std::uint64_t kind_mask(const std::vector<std::string>& names,
                                        std::vector<std::string>& unknown) const override {
    return kinds_.mask_for(names, unknown);
  }
  [[nodiscard]] std::uint64_t kinds_generation() const noexcept override { return kinds_.generation(); }
  [[nodiscard]] bool origin_allowed(std::optional<std::string_view> origin) const override {
    return origins_.allows(origin);
  }
  [[nodiscard]] bool host_allowed(std::optional<std::string_view> host) const override {
    return origins_.allows_host(host);
  }
  void refused_browser(std::string_view what, std::string_view peer, std::string_view advice) override;
  [[nodiscard]] std::uint64_t token_blocked_for_us(const std::string& address) const override;
  void token_accepted(const std::string& address) override { failed_tokens_.succeeded(address); }
  void wrong_token(const std::string& address, std::string_view where) override;
  [[nodiscard]] bool take_slot(Slot slot) noexcept override { return slots_.take(slot); }
  [[nodiscard]] bool promote_slot() noexcept override { return slots_.promote(); }
  void give_back_slot(Slot slot) noexcept override { slots_.give_back(slot); }
  void client_refused() noexcept override { ++stats_.rejected_clients; }
  [[nodiscard]] std::uint64_t next_client_id() noexcept override { return ++stats_.clients; }
  void client_opened(const std::shared_ptr<WsClient>& client) override;
  void client_started(WsClient& client, const StartRequest& request) override;
  void client_stopped(WsClient& client) override;
  void client_drained(WsClient& client) override;
  [[nodiscard]] ServerExtension* extension() noexcept override { return extension_.get(); }
  void client_closed(const std::shared_ptr<WsClient>& client) override;
  void events_sent(std::uint64_t events) noexcept override { stats_.events_sent += events; }

 private:
  ServeOptions options_;
  const Logger& log_;
  net::TcpServer tcp_;
  asio::steady_timer stats_timer_;
  std::string server_id_;
  OriginPolicy origins_;
  KindTable kinds_;
  ClientMessageParser parser_;
  std::unordered_set<std::shared_ptr<WsClient>> clients_;
  ClientSlots slots_;
  FailedTokenLimiter failed_tokens_;
  ServeStats stats_;
  CpuMeter cpu_;

  void accept(tcp::socket socket);
  [[nodiscard]] OriginPolicy origin_policy() const;
  std::unordered_set<std::string> refusals_logged_;
  void tick();
  void schedule_stats();
  void stop();
  // Stats to every client; final: the closing Stats of a stream, to the tracing clients.
  void send_stats(bool final);
  [[nodiscard]] static ChannelSettings input_settings(const ServeOptions& options);
  [[nodiscard]] ChannelEvents input_events();
  void start_input(ByteSource source);
  void input_ended(const std::string& error);
  [[nodiscard]] std::size_t tracing_clients() const;
  void for_tracing(const std::function<void(WsClient&)>& action);

  std::unique_ptr<ServerExtension> extension_;  // trace-lab's views and routes; none for trace-serve
  // trace-serve's input (stdin, FILE or the capture command), to every client.
  std::shared_ptr<Channel> input_;
  std::atomic<std::uint64_t> bad_lines_reported_{0};

  CommandMode command_;
  std::uint64_t input_ended_at_us_ = 0;
  std::uint64_t stopped_at_us_ = 0;
  std::uint64_t last_stats_us_ = 0;
  bool input_ended_ = false;
  bool stopping_ = false;
};

}  // namespace tp::serve
