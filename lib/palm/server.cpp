#include "palm/server.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <unordered_set>
#include "net/asio.hpp"

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/signals.hpp"
#include "net/tcp_server.hpp"

namespace tp::palm {

namespace asio = boost::asio;
using asio::ip::tcp;

class Session;

class Server::Impl {
 public:
  Impl(ServerOptions options, BatchedWriter& writer, const Logger& logger);

  void run();
  void emit(const Message& message, const Connection& connection, std::uint64_t host_us);
  void closed(const std::shared_ptr<Session>& session, bool rejected);
  [[nodiscard]] const Logger& logger() const noexcept { return logger_; }
  [[nodiscard]] std::size_t max_message_size() const noexcept { return options_.max_message_size; }

  ServerOptions options_;
  BatchedWriter& writer_;
  const Logger& logger_;
  net::TcpServer tcp_;  // first of what the sessions use, so it outlives them
  std::unordered_set<std::shared_ptr<Session>> sessions_;
  ServerStats stats_;
  bool stopping_ = false;

 private:
  void accept(tcp::socket socket);
  void tick();
  void stop();
};

// One sender: reads its stream, parses it, hands records to the server.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(Server::Impl& server, tcp::socket socket, std::uint64_t id)
      : server_(server),
        socket_(std::move(socket)),
        message_timer_(socket_.get_executor()),
        parser_(server.max_message_size()) {
    connection_.id = id;
    boost::system::error_code ec;
    const auto endpoint = socket_.remote_endpoint(ec);
    connection_.peer = ec ? "?" : fmt::format("{}:{}", endpoint.address().to_string(), endpoint.port());
  }

  void start() { read(); }
  void close() {
    message_timer_.cancel();
    boost::system::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }
  [[nodiscard]] const Connection& connection() const noexcept { return connection_; }

 private:
  void read() {
    socket_.async_read_some(
        asio::buffer(buffer_),
        [self = shared_from_this()](boost::system::error_code ec, std::size_t n) { self->on_read(ec, n); });
  }

  void on_read(boost::system::error_code ec, std::size_t n) {
    if (!ec) {
      const std::uint64_t now = monotonic_us();
      const auto error = parser_.feed(
          std::span<const std::uint8_t>(buffer_.data(), n),
          [&](const Message& m) { server_.emit(m, connection_, now); },
          [&](const ParseError& problem) { skipped(problem); });
      if (error) return reject(*error);
      watch_message();
      return read();
    }
    if (ec == asio::error::eof) {
      if (const auto error = parser_.finish()) return reject(*error);
      server_.logger().verbose(
          fmt::format("connection {} ({}) closed by the sender", connection_.id, connection_.peer));
    } else if (ec != asio::error::operation_aborted) {
      server_.logger().warn(fmt::format("connection {} ({}): {}", connection_.id, connection_.peer, ec.message()));
    }
    close();
    server_.closed(shared_from_this(), false);
  }

  // A message that has begun must complete within --message-timeout: a sender that stalls
  // mid-message holds up to --max-message-size of memory, so it is cut off.
  void watch_message() {
    if (!parser_.mid_message()) {
      message_timer_.cancel();
      timing_message_ = false;
      return;
    }
    if (timing_message_) return;
    timing_message_ = true;
    message_timer_.expires_after(server_.options_.message_timeout);
    message_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (ec || !self->parser_.mid_message() || !self->socket_.is_open()) return;
      ++self->server_.stats_.stalled_messages;
      self->server_.logger().warn(
          fmt::format("connection {} ({}): a message begun {} ms ago is still incomplete; "
                      "closing this connection",
                      self->connection_.id, self->connection_.peer, self->server_.options_.message_timeout.count()));
      self->close();
      self->server_.closed(self, true);
    });
  }

  // A framed message that breaks a rule: reported (the first ten of a connection, then every
  // thousandth, so a sender of nothing else cannot flood the log) and counted; the stream goes on.
  void skipped(const ParseError& problem) {
    ++server_.stats_.skipped_messages;
    ++skipped_messages_;
    if (skipped_messages_ > 10 && skipped_messages_ % 1000 != 0) return;
    server_.logger().error(
        ErrorCode::invalid_message,
        fmt::format("connection {} ({}): byte {}: {}; message skipped ({} skipped on this "
                    "connection)",
                    connection_.id, connection_.peer, problem.offset, problem.message, skipped_messages_));
  }

  void reject(const ParseError& error) {
    server_.logger().error(ErrorCode::invalid_message,
                           fmt::format("connection {} ({}): byte {}: {}; closing this connection", connection_.id,
                                       connection_.peer, error.offset, error.message));
    close();
    server_.closed(shared_from_this(), true);
  }

  Server::Impl& server_;
  tcp::socket socket_;
  asio::steady_timer message_timer_;
  bool timing_message_ = false;
  std::uint64_t skipped_messages_ = 0;
  Parser parser_;
  Connection connection_;
  std::array<std::uint8_t, std::size_t{64} << 10U> buffer_{};
};

Server::Impl::Impl(ServerOptions options, BatchedWriter& writer, const Logger& logger)
    : options_(std::move(options)),
      writer_(writer),
      logger_(logger),
      tcp_(logger, "palm-recv", options_.address, options_.port, "another receiver runs there?",
           [this](tcp::socket socket) { accept(std::move(socket)); }) {}

void Server::Impl::accept(tcp::socket socket) {
  if (stopping_) return;
  auto session = std::make_shared<Session>(*this, std::move(socket), ++stats_.connections);
  if (sessions_.size() >= options_.max_connections) {
    // Refused at once (the sender sees the connection close) rather than left in the backlog.
    ++stats_.refused_connections;
    if (stats_.refused_connections == 1 || stats_.refused_connections % 1000 == 0) {
      logger_.warn(fmt::format("connection {} ({}) refused: --max-connections {} are open ({} refused so far)",
                               session->connection().id, session->connection().peer, options_.max_connections,
                               stats_.refused_connections));
    }
    session->close();
    return;
  }
  logger_.verbose(fmt::format("connection {} from {}", session->connection().id, session->connection().peer));
  sessions_.insert(session);
  session->start();
}

// Flushes output that waits while input trickles, and notices SIGINT/SIGTERM.
void Server::Impl::tick() {
  if (stop_requested() != 0) return stop();
  writer_.flush();
}

void Server::Impl::emit(const Message& message, const Connection& connection, std::uint64_t host_us) {
  ++stats_.messages;
  stats_.skipped_parameters += message.skipped_parameters;
  stats_.line_break_readings += message.line_break_readings;
  stats_.repeated_parameters += message.repeated_parameters;
  if (!options_.modules.empty() &&
      std::find(options_.modules.begin(), options_.modules.end(), message.module) == options_.modules.end()) {
    ++stats_.filtered;
    return;
  }
  append_record(writer_.buffer(), message, connection, host_us, options_.format);
  writer_.commit();
}

void Server::Impl::closed(const std::shared_ptr<Session>& session, bool rejected) {
  if (rejected) ++stats_.rejected_streams;
  sessions_.erase(session);
  if (options_.once) stop();
}

void Server::Impl::stop() {
  if (stopping_) return;
  stopping_ = true;
  tcp_.stop_accepting();
  tcp_.stop_ticking();
  for (const auto& session : sessions_) session->close();
}

void Server::Impl::run() {
  tcp_.run(std::chrono::milliseconds(20), [this] { tick(); });
  sessions_.clear();
  writer_.flush();
}

Server::Server(ServerOptions options, BatchedWriter& writer, const Logger& logger)
    : impl_(std::make_unique<Impl>(std::move(options), writer, logger)) {}
Server::~Server() = default;
std::uint16_t Server::port() const {
  return impl_->tcp_.port();
}
void Server::run() {
  impl_->run();
}
const ServerStats& Server::stats() const {
  return impl_->stats_;
}

}  // namespace tp::palm
