#include "fleet/clickhouse_http.hpp"

#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <fstream>

// clang-format off
#include "net/asio.hpp"
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/core/detail/base64.hpp>
// clang-format on

#include "core/error.hpp"

namespace tp {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;

struct Url {
  std::string host;
  std::string port;
};

Url parse_url(const std::string& url) {
  std::string_view rest = url;
  if (rest.substr(0, 7) != "http://") {
    throw Error(ExitCode::usage,
                fmt::format("--clickhouse \"{}\": an http://HOST:PORT URL (ClickHouse's HTTP port)", url));
  }
  rest.remove_prefix(7);
  if (const std::size_t slash = rest.find('/'); slash != std::string_view::npos) rest = rest.substr(0, slash);
  const std::size_t colon = rest.rfind(':');
  if (colon == std::string_view::npos) return Url{std::string(rest), "8123"};
  return Url{std::string(rest.substr(0, colon)), std::string(rest.substr(colon + 1))};
}

std::string url_encode(std::string_view text) {
  std::string encoded;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte) != 0 || c == '-' || c == '_' || c == '.' || c == '~') {
      encoded += c;
    } else {
      encoded += fmt::format("%{:02X}", byte);
    }
  }
  return encoded;
}

std::string basic_auth(const std::string& creds_path) {
  if (creds_path.empty()) return {};
  std::ifstream in(creds_path);
  std::string line;
  if (!in || !std::getline(in, line)) {
    throw Error(ExitCode::not_found, fmt::format("cannot read the ClickHouse credentials file {}", creds_path));
  }
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  std::string encoded(beast::detail::base64::encoded_size(line.size()), '\0');
  encoded.resize(beast::detail::base64::encode(encoded.data(), line.data(), line.size()));
  return "Basic " + encoded;
}

}  // namespace

struct ClickHouseHttp::Impl {
  ClickHouseSettings settings;
  Url url;
  std::string authorization;
  std::string endpoint;
  boost::asio::io_context io;
  std::unique_ptr<tcp::socket> socket;
  beast::flat_buffer buffer;

  void connect() {
    tcp::resolver resolver(io);
    boost::system::error_code error;
    const auto endpoints = resolver.resolve(url.host, url.port, error);
    if (error) throw Error(ExitCode::not_found, fmt::format("ClickHouse at {}: {}", endpoint, error.message()));
    socket = std::make_unique<tcp::socket>(io);
    boost::asio::connect(*socket, endpoints, error);
    if (error) {
      socket.reset();
      throw Error(ExitCode::not_found,
                  fmt::format("ClickHouse at {}: {}; is clickhouse-server running there?", endpoint, error.message()));
    }
    timeval timeout{settings.timeout_ms / 1000, static_cast<suseconds_t>(settings.timeout_ms % 1000) * 1000};
    ::setsockopt(socket->native_handle(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    ::setsockopt(socket->native_handle(), SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    // A request's last segment must not wait for the ack of the one before it (Nagle's
    // algorithm against the server's delayed ACK: 40 ms an insert).
    socket->set_option(tcp::no_delay(true), error);
    buffer.clear();
  }

  // The body is the caller's, sent from where it is (a batch of rows is tens of MB).
  http::request<http::span_body<const char>> request(std::string_view query, std::string_view body) const {
    http::request<http::span_body<const char>> req{
        http::verb::post, fmt::format("/?database={}&query={}", url_encode(settings.database), url_encode(query)), 11};
    req.set(http::field::host, url.host);
    req.set(http::field::content_type, "text/plain");
    if (!authorization.empty()) req.set(http::field::authorization, authorization);
    req.body() = boost::beast::span<const char>(body.data(), body.size());
    req.keep_alive(true);
    req.prepare_payload();
    return req;
  }

  [[noreturn]] void fail(const boost::system::error_code& error) {
    socket.reset();
    if (error == boost::asio::error::would_block || error == boost::asio::error::timed_out) {
      throw Error(ExitCode::timeout,
                  fmt::format("ClickHouse at {} did not answer within {} ms", endpoint, settings.timeout_ms));
    }
    throw Error(ExitCode::io_error, fmt::format("ClickHouse at {}: {}", endpoint, error.message()));
  }

  // Sends a request, connecting first when there is no connection (once again when a kept
  // connection turns out closed: the server closes idle ones).
  void send(const http::request<http::span_body<const char>>& req) {
    for (int attempt = 0;; ++attempt) {
      if (!socket) connect();
      boost::system::error_code error;
      http::write(*socket, req, error);
      if (!error) return;
      socket.reset();
      if (attempt > 0) fail(error);
    }
  }
};

ClickHouseHttp::ClickHouseHttp(const ClickHouseSettings& settings) : impl_(std::make_unique<Impl>()) {
  impl_->settings = settings;
  impl_->url = parse_url(settings.url);
  impl_->authorization = basic_auth(settings.creds);
  impl_->endpoint = fmt::format("{}:{}", impl_->url.host, impl_->url.port);
}

ClickHouseHttp::~ClickHouseHttp() = default;

const std::string& ClickHouseHttp::endpoint() const noexcept {
  return impl_->endpoint;
}

HttpReply ClickHouseHttp::post(std::string_view query, std::string_view body) {
  impl_->send(impl_->request(query, body));
  http::response<http::string_body> response;
  boost::system::error_code error;
  http::response_parser<http::string_body> parser;
  parser.body_limit(boost::none);
  http::read(*impl_->socket, impl_->buffer, parser, error);
  if (error) impl_->fail(error);
  response = parser.release();
  if (!response.keep_alive()) impl_->socket.reset();
  return HttpReply{response.result_int(), std::move(response.body())};
}

HttpReply ClickHouseHttp::stream(std::string_view query, const std::function<void(std::string_view piece)>& on_piece) {
  impl_->send(impl_->request(query, {}));
  http::response_parser<http::buffer_body> parser;
  parser.body_limit(boost::none);
  boost::system::error_code error;
  http::read_header(*impl_->socket, impl_->buffer, parser, error);
  if (error) impl_->fail(error);
  const unsigned status = parser.get().result_int();
  std::string failure;
  std::array<char, std::size_t{64} * 1024> piece{};
  while (!parser.is_done()) {
    parser.get().body().data = piece.data();
    parser.get().body().size = piece.size();
    http::read(*impl_->socket, impl_->buffer, parser, error);
    if (error == http::error::need_buffer) error = {};
    if (error) impl_->fail(error);
    const std::string_view got(piece.data(), piece.size() - parser.get().body().size);
    if (status == 200) {
      on_piece(got);
    } else {
      failure.append(got);
    }
  }
  if (!parser.get().keep_alive()) impl_->socket.reset();
  return HttpReply{status, failure};
}

void ClickHouseHttp::execute(std::string_view statement) {
  const HttpReply reply = post(statement, {});
  if (reply.status != 200) {
    throw Error(ExitCode::failure, fmt::format("ClickHouse: {}", clickhouse_error_line(reply.body)));
  }
}

std::string clickhouse_error_line(std::string_view body) {
  const std::size_t newline = body.find('\n');
  std::string line(body.substr(0, newline));
  if (const std::size_t trace = line.find(", Stack trace"); trace != std::string::npos) line.resize(trace);
  return line;
}

}  // namespace tp
