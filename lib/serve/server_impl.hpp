// Internal to lib/serve: the server's state shared by the acceptor, the HTTP sessions and
// the WebSocket clients. All of it lives on the io_context thread.
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
#include "net/accept_loop.hpp"
#include "net/asio.hpp"

#include "serve/admission.hpp"
#include "serve/broadcast.hpp"
#include "serve/child_process.hpp"
#include "serve/handshake.hpp"
#include "serve/input_pump.hpp"
#include "serve/protocol.hpp"
#include "serve/server.hpp"

namespace tp::serve {

namespace asio = boost::asio;
using asio::ip::tcp;

class WsClient;

// Connections that have not shown the token (when one is set) have a pool of their own and
// this long to show it.
inline constexpr std::size_t max_unauthenticated_connections = 32;
inline constexpr auto authentication_deadline = std::chrono::seconds(10);

// Process CPU time over wall time, as a fraction of all cores.
class CpuMeter {
 public:
  CpuMeter();
  double sample();

 private:
  double last_cpu_s_ = 0;
  double last_wall_s_ = 0;
  double cores_ = 1;
};

class Server::Impl {
 public:
  Impl(ServeOptions options, const Logger& logger);
  void run();

  // From WebSocket clients.
  void client_opened(const std::shared_ptr<WsClient>& client);
  void client_closed(const std::shared_ptr<WsClient>& client);
  void client_started(WsClient& client, const StartRequest& request);
  void client_stopped();
  [[nodiscard]] StatusInfo status_for(const ConnectRequest& connect) const;
  [[nodiscard]] std::string meta() const;
  [[nodiscard]] bool command_mode() const noexcept { return !options_.command.empty(); }
  [[nodiscard]] std::uint64_t next_client_id() noexcept { return ++stats_.clients; }
  // A wrong token from that address: counted for its back-off, and logged.
  void wrong_token(const std::string& address, std::string_view where);

  ServeOptions options_;
  const Logger& log_;
  asio::io_context io_;
  tcp::acceptor acceptor_;
  asio::steady_timer tick_;
  asio::steady_timer stats_timer_;
  std::string server_id_;
  OriginPolicy origins_;
  KindTable kinds_;
  ClientMessageParser parser_;
  std::unordered_set<std::shared_ptr<WsClient>> clients_;
  ClientSlots slots_;
  FailedTokenLimiter failed_tokens_;
  net::AcceptLoop accept_loop_;
  ServeStats stats_;
  CpuMeter cpu_;

 private:
  void accept(tcp::socket socket);
  [[nodiscard]] std::vector<std::string> origin_host_names() const;
  void schedule_tick();
  void schedule_stats();
  void stop();
  // Stats to every client; final: the closing Stats of a stream, to the tracing clients.
  void send_stats(bool final);
  void start_pump(ByteSource source);
  void publish(std::shared_ptr<const Batch> batch);
  void distribute(const std::shared_ptr<const Batch>& batch);
  void pump_ended(const std::string& error);
  void start_command();
  void read_child_stderr();
  void child_line(std::string_view line);
  void check_child();
  void finish_command();
  [[nodiscard]] std::size_t tracing_clients() const;
  int batches_in_flight();
  void for_tracing(const std::function<void(WsClient&)>& action);

  struct CommandStart {
    StartRequest request;
    StatusInfo status;
  };

  std::unique_ptr<InputPump> pump_;
  std::atomic<std::uint64_t> bad_lines_reported_{0};
  std::mutex flow_mutex_;  // guards in_flight_: batches posted but not yet distributed
  std::condition_variable flow_;

  std::optional<ChildProcess> child_;
  std::optional<asio::posix::stream_descriptor> child_stderr_;
  std::array<char, 4096> stderr_buffer_{};
  std::string stderr_line_;
  std::optional<CommandStart> last_start_;
  std::uint64_t child_kill_at_us_ = 0;
  std::uint64_t child_exit_seen_us_ = 0;
  std::uint64_t input_ended_at_us_ = 0;
  std::uint64_t stopped_at_us_ = 0;
  std::uint64_t last_stats_us_ = 0;
  int in_flight_ = 0;
  std::atomic<bool> stopping_flag_{false};  // stopping_, for the pump's thread
  bool seen_cycles_clock_ = false;
  bool child_reported_error_ = false;
  bool child_stopping_ = false;  // we asked it to stop: its exit is not an error
  bool restart_pending_ = false;
  bool input_ended_ = false;

 public:
  bool stopping_ = false;
};

}  // namespace tp::serve
