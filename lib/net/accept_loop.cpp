#include "net/accept_loop.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>

namespace tp::net {

namespace {
constexpr std::chrono::milliseconds first_backoff{10};
constexpr std::chrono::milliseconds longest_backoff{1000};

bool out_of_resources(const boost::system::error_code& ec) {
  if (ec.category() != boost::system::system_category()) return false;
  const int code = ec.value();
  return code == EMFILE || code == ENFILE || code == ENOBUFS || code == ENOMEM;
}
}  // namespace

AcceptLoop::AcceptLoop(boost::asio::ip::tcp::acceptor& acceptor, const Logger& log, std::string what, Handler handler)
    : acceptor_(acceptor),
      backoff_(acceptor.get_executor()),
      log_(log),
      what_(std::move(what)),
      handler_(std::move(handler)) {}

void AcceptLoop::start() {
  accept_next();
}

void AcceptLoop::stop() {
  stopped_ = true;
  backoff_.cancel();
}

void AcceptLoop::accept_next() {
  acceptor_.async_accept([this](boost::system::error_code ec, boost::asio::ip::tcp::socket socket) {
    if (stopped_ || ec == boost::asio::error::operation_aborted) return;
    if (out_of_resources(ec)) return wait_for_resources(ec);
    if (!ec) {
      if (delay_.count() > 0) {
        log_.warn(fmt::format("{}: accepting connections again", what_));
        delay_ = std::chrono::milliseconds(0);
      }
      handler_(std::move(socket));
    }
    accept_next();
  });
}

void AcceptLoop::wait_for_resources(const boost::system::error_code& ec) {
  ++resource_waits_;
  if (delay_.count() == 0) {
    log_.warn(
        fmt::format("{}: cannot accept a connection: {}; waiting for connections to close (raise the limit "
                    "with ulimit -n)",
                    what_, ec.message()));
    delay_ = first_backoff;
  } else {
    delay_ = std::min(delay_ * 2, longest_backoff);
  }
  backoff_.expires_after(delay_);
  backoff_.async_wait([this](boost::system::error_code wait_ec) {
    if (!wait_ec && !stopped_) accept_next();
  });
}

}  // namespace tp::net
