#include "net/tcp_server.hpp"

#include "net/tcp_listener.hpp"

namespace tp::net {

TcpServer::TcpServer(const Logger& log, std::string what, const std::string& address, std::uint16_t port,
                     std::string_view busy_hint, Accept accept)
    : acceptor_(listen_tcp(io_, address, port, busy_hint)),
      tick_timer_(io_),
      accept_loop_(acceptor_, log, std::move(what), std::move(accept)) {}

void TcpServer::run(std::chrono::milliseconds interval, Tick tick) {
  interval_ = interval;
  tick_ = std::move(tick);
  ticking_ = true;
  if (accepting_) accept_loop_.start();
  schedule_tick();
  io_.run();
}

void TcpServer::schedule_tick() {
  tick_timer_.expires_after(interval_);
  tick_timer_.async_wait([this](boost::system::error_code ec) {
    if (ec || !ticking_) return;
    tick_();
    if (ticking_) schedule_tick();
  });
}

void TcpServer::stop_accepting() {
  if (!accepting_) return;
  accepting_ = false;
  accept_loop_.stop();
  boost::system::error_code ignored;
  acceptor_.close(ignored);
}

void TcpServer::stop_ticking() {
  ticking_ = false;
  tick_timer_.cancel();
}

}  // namespace tp::net
