// The accept loop both servers (palm-recv, trace-serve) run. When accept() fails for lack of
// file descriptors or memory (EMFILE, ENFILE, ENOBUFS, ENOMEM) the pending connection stays
// in the backlog, so retrying at once only spins the CPU: it waits instead (10 ms, doubling
// to 1 s, until an accept succeeds), logs once per such episode and once when it ends, and
// counts what happened. Other errors (a peer that reset before we took it) are retried.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "core/log.hpp"
#include "net/asio.hpp"

namespace tp::net {

class AcceptLoop {
 public:
  using Handler = std::function<void(boost::asio::ip::tcp::socket)>;
  // `what` names the server in log lines ("palm-recv"); handler gets every new connection.
  AcceptLoop(boost::asio::ip::tcp::acceptor& acceptor, const Logger& log, std::string what, Handler handler);

  void start();
  // Ends the loop (the acceptor is closed by its owner).
  void stop();
  [[nodiscard]] std::uint64_t resource_waits() const noexcept { return resource_waits_; }

 private:
  void accept_next();
  void wait_for_resources(const boost::system::error_code& ec);

  boost::asio::ip::tcp::acceptor& acceptor_;
  boost::asio::steady_timer backoff_;
  const Logger& log_;
  std::string what_;
  Handler handler_;
  std::chrono::milliseconds delay_{0};
  std::uint64_t resource_waits_ = 0;
  bool stopped_ = false;
};

}  // namespace tp::net
