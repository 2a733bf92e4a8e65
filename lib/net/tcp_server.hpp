// The skeleton both servers (palm-recv, trace-serve) run on: an io_context run on the
// calling thread, a listening socket (with listen_tcp's error conventions), the accept loop,
// and a periodic tick for the owner's housekeeping (flushing output, noticing SIGINT and
// SIGTERM, timeouts). The owner decides what a connection becomes and when to stop.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "core/log.hpp"
#include "net/accept_loop.hpp"
#include "net/asio.hpp"

namespace tp::net {

class TcpServer {
 public:
  using Accept = std::function<void(boost::asio::ip::tcp::socket)>;
  using Tick = std::function<void()>;

  // Binds and listens now (port 0: any free port); throws tp::Error as listen_tcp does.
  // `what` names the server in log lines; `busy_hint` ends the message for a port in use.
  TcpServer(const Logger& log, std::string what, const std::string& address, std::uint16_t port,
            std::string_view busy_hint, Accept accept);

  [[nodiscard]] boost::asio::io_context& io() noexcept { return io_; }
  [[nodiscard]] std::uint16_t port() const { return acceptor_.local_endpoint().port(); }
  [[nodiscard]] std::uint64_t resource_waits() const noexcept { return accept_loop_.resource_waits(); }

  // Accepts, and calls `tick` every `interval` until stop_ticking(); returns when nothing is
  // left to do or io().stop() is called.
  void run(std::chrono::milliseconds interval, Tick tick);
  // No more connections: the accept loop ends and the listening socket closes. Idempotent.
  void stop_accepting();
  // No more ticks (the one waiting is cancelled).
  void stop_ticking();

 private:
  void schedule_tick();

  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer tick_timer_;
  AcceptLoop accept_loop_;
  std::chrono::milliseconds interval_{20};
  Tick tick_;
  bool ticking_ = false;
  bool accepting_ = true;
};

}  // namespace tp::net
